#!/usr/bin/env bash
# git: the path-map tests build a real repository and ask `git check-ignore`.
set -euo pipefail
command -v git >/dev/null 2>&1 && exit 0
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git ca-certificates
