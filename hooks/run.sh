#!/bin/sh
# Hook launcher for the plugin route (`claude --plugin-dir`, a marketplace install).
# The venv lives in ${CLAUDE_PLUGIN_DATA} (kept across plugin updates), never in the versioned plugin
# folder. The first run installs it in the background and exits at once: the agent never waits, and
# the transcript lines of this event are folded by the next run.
data="${CLAUDE_PLUGIN_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/session-watcher}"
launcher="$data/venv/bin/session-watcher-hook"
if [ -f "$launcher" ]; then
    exec "$data/venv/bin/python" -I -S "$launcher" "$@"
fi
root="${CLAUDE_PLUGIN_ROOT:-$(dirname "$0")/..}"
mkdir -p "$data" 2>/dev/null
if mkdir "$data/.installing" 2>/dev/null; then
    (setsid sh -c '"$1/install.sh" --venv-only --data "$2" >"$2/install.log" 2>&1; rmdir "$2/.installing"' \
        sh "$root" "$data" </dev/null >/dev/null 2>&1 &)
fi
exit 0
