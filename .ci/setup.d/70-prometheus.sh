#!/usr/bin/env bash
# promtool (Debian's prometheus package, pinned): tests/test_dashboard.py parses every PromQL query of
# docs/grafana-dashboard.json with Prometheus's own parser. Only promtool is used; the package's
# server is never started (no init system runs it here, and policy-rc.d denies the start).
set -euo pipefail
VERSION="2.42.0+ds-5+deb12u1"
if command -v promtool >/dev/null 2>&1 && promtool --version 2>&1 | grep -q "version 2.42.0"; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "prometheus=$VERSION"
promtool --version
