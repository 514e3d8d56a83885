#!/usr/bin/env bash
# Debian's Chromium for the session page's browser tests (driven by Playwright, pointed at
# /usr/bin/chromium; nothing here or in the tests downloads a browser build).
# Idempotent: a second run only checks that the binary is there.
set -euo pipefail
if [ -x /usr/bin/chromium ] && dpkg -s fonts-dejavu-core >/dev/null 2>&1; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
/usr/bin/chromium --version
