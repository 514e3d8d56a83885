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
marker="$data/.installing"
if [ -d "$marker" ]; then
    # an install killed midway (its shell gone, or started over 10 minutes ago) is tried again
    pid=$(cat "$marker/pid" 2>/dev/null)
    if { [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; } ||
        [ -n "$(find "$marker" -maxdepth 0 -mmin +10 2>/dev/null)" ]; then
        rm -rf "$marker"
    fi
fi
if mkdir "$marker" 2>/dev/null; then
    (setsid sh -c 'echo $$ >"$2/.installing/pid"; "$1/install.sh" --venv-only --data "$2" >"$2/install.log" 2>&1
        rm -rf "$2/.installing"' sh "$root" "$data" </dev/null >/dev/null 2>&1 &)
fi
exit 0
