#!/usr/bin/env bash
# The real Claude Code CLI (pinned) and tmux for the end-to-end tests in tests/e2e/.
# 2.1.332 runs offline with the same recipe as 2.1.197 (npm warns that it wants node >= 22; it runs
# on node 20 here): see tests/fixtures/real-client-2.1.332/README.md.
# Idempotent: a second run only checks the version. Under CI=true any missing piece fails the run;
# elsewhere an unreachable npm registry only warns (the e2e tests then skip, saying why).
set -euo pipefail

VERSION="${SESSION_WATCHER_CLAUDE_VERSION:-2.1.332}"
# one folder per version: a branch pinned to another version installs beside it, never over it
PREFIX="${SESSION_WATCHER_CLAUDE_PREFIX:-/opt/session-watcher-ci/claude-code-$VERSION}"
PKG_DIR="$PREFIX/node_modules/@anthropic-ai/claude-code"
BIN="$PKG_DIR/bin/claude.exe"

fail_or_warn() {
    if [ "${CI:-}" = "true" ]; then
        echo "50-claude-cli: FAIL: $*" >&2
        exit 1
    fi
    echo "50-claude-cli: WARNING: $* (the e2e tests will skip)" >&2
    exit 0
}

# tmux drives the terminal UI for the status line and /compact.
if ! command -v tmux >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends tmux >/dev/null \
            || fail_or_warn "tmux could not be installed with apt-get"
    else
        fail_or_warn "tmux is missing and there is no apt-get"
    fi
fi

# node + npm run the client's installer.
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends nodejs npm >/dev/null \
            || fail_or_warn "node/npm could not be installed with apt-get"
    else
        fail_or_warn "node/npm are missing and there is no apt-get"
    fi
fi

installed_version() {
    [ -x "$BIN" ] || return 1
    "$BIN" --version 2>/dev/null | awk '{print $1}'
}

if [ "$(installed_version || true)" = "$VERSION" ]; then
    echo "50-claude-cli: claude $VERSION already at $BIN"
    exit 0
fi

mkdir -p "$PREFIX"
[ -f "$PREFIX/package.json" ] || echo '{"name": "session-watcher-e2e-client", "private": true}' > "$PREFIX/package.json"
# --ignore-scripts + our own `node install.cjs`: the postinstall only links the native binary
# (shipped inside the registry package @anthropic-ai/claude-code-linux-x64) over bin/claude.exe.
if ! npm install --prefix "$PREFIX" --no-audit --no-fund --ignore-scripts --loglevel=error \
        "@anthropic-ai/claude-code@$VERSION"; then
    fail_or_warn "npm could not install @anthropic-ai/claude-code@$VERSION"
fi
if [ -f "$PKG_DIR/install.cjs" ]; then
    (cd "$PKG_DIR" && node install.cjs) || fail_or_warn "the client's install.cjs failed"
fi
got="$(installed_version || true)"
if [ "$got" != "$VERSION" ]; then
    fail_or_warn "claude at $BIN reports version '${got:-none}', expected $VERSION"
fi
echo "50-claude-cli: installed claude $VERSION at $BIN"
