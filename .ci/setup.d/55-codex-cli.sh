#!/usr/bin/env bash
# The real OpenAI Codex CLI (pinned) for the Codex end-to-end tests (tests/e2e/, offline against a
# loopback Responses mock: ../shared/reference/codex.md). A Node launcher plus a static musl binary
# (424 MB in all): cache $PREFIX in CI. tmux, node and npm come from 50-claude-cli.sh.
# Idempotent: a second run only checks the version. Under CI=true a missing piece fails the run;
# elsewhere an unreachable npm registry only warns (the Codex e2e tests then skip, saying why).
set -euo pipefail

VERSION="${SESSION_WATCHER_CODEX_VERSION:-0.171.0}"
PREFIX="${SESSION_WATCHER_CODEX_PREFIX:-/opt/session-watcher-ci/codex-$VERSION}"
BIN="$PREFIX/node_modules/.bin/codex"

fail_or_warn() {
    if [ "${CI:-}" = "true" ]; then
        echo "55-codex-cli: FAIL: $*" >&2
        exit 1
    fi
    echo "55-codex-cli: WARNING: $* (the Codex e2e tests will skip)" >&2
    exit 0
}

command -v npm >/dev/null 2>&1 || fail_or_warn "npm is missing (50-claude-cli.sh installs it)"

installed_version() {
    [ -x "$BIN" ] || return 1
    "$BIN" --version 2>/dev/null | awk '{print $2}'
}

if [ "$(installed_version || true)" = "$VERSION" ]; then
    echo "55-codex-cli: codex $VERSION already at $BIN"
    exit 0
fi

mkdir -p "$PREFIX"
[ -f "$PREFIX/package.json" ] || echo '{"name": "session-watcher-e2e-codex", "private": true}' > "$PREFIX/package.json"
if ! npm install --prefix "$PREFIX" --no-audit --no-fund --ignore-scripts --loglevel=error "@openai/codex@$VERSION"; then
    fail_or_warn "npm could not install @openai/codex@$VERSION"
fi
got="$(installed_version || true)"
if [ "$got" != "$VERSION" ]; then
    fail_or_warn "codex at $BIN reports version '${got:-none}', expected $VERSION"
fi
echo "55-codex-cli: installed codex $VERSION at $BIN"
