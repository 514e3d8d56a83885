#!/usr/bin/env bash
# The reliability tests: strace shows that a hook process opens no network connection.
set -euo pipefail
command -v strace >/dev/null 2>&1 && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends strace
