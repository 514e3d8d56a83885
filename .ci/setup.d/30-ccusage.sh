#!/usr/bin/env bash
# ccusage, for the test that checks the report's per-session token totals against it.
# Pinned: 20.0.26 has no published linux-x64 binary. Installed into a cache folder, not globally.
set -euo pipefail
VERSION=20.0.24
PREFIX=${SESSION_WATCHER_CCUSAGE_PREFIX:-/opt/session-watcher-ci/ccusage}
BIN="$PREFIX/node_modules/.bin/ccusage"
if [ -x "$BIN" ] && grep -q "\"version\": \"$VERSION\"" "$PREFIX/node_modules/ccusage/package.json" 2>/dev/null \
    && "$BIN" --version >/dev/null 2>&1; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq
    apt-get install -y --no-install-recommends nodejs npm
fi
mkdir -p "$PREFIX"
npm install --no-audit --no-fund --silent --prefix "$PREFIX" "ccusage@$VERSION"
"$BIN" --version
