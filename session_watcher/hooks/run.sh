#!/bin/sh
# Hook launcher for the plugin route (a marketplace install, or `claude --plugin-dir .../session_watcher`).
# The venv lives in ${CLAUDE_PLUGIN_DATA} (kept across plugin updates), never in the versioned plugin
# folder. The first run builds it in the background (hooks/venv.sh) and exits at once: the agent never
# waits, and the transcript lines of this event are folded by the next run. The venv records which
# plugin it was built from (its folder and the manifest's version line): when the plugin changes (an
# update gives it a new folder), the venv in use keeps serving while the new one is built beside it.
# Shell builtins only on the way to the launcher: no process is started for the check.
data="${CLAUDE_PLUGIN_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/session-watcher}"
root="${CLAUDE_PLUGIN_ROOT:-$(dirname "$0")/..}"
venv="$data/venv"
stamp="$root"
if [ -r "$root/.claude-plugin/plugin.json" ]; then
    while IFS= read -r line; do
        case $line in *'"version"'*) stamp="$root $line"; break ;; esac
    done <"$root/.claude-plugin/plugin.json"
fi
# the stamp is one record of one line whatever bytes the path holds: each newline written as `\n`
# (builtins only), so what venv.sh writes (`printf '%s\n'`) reads back (`read -r`) as it was written
nl='
'
while :; do
    case $stamp in *"$nl"*) stamp="${stamp%%"$nl"*}\\n${stamp#*"$nl"}" ;; *) break ;; esac
done
built=""
if [ -r "$venv/.plugin-version" ]; then IFS= read -r built <"$venv/.plugin-version" || true; fi

build() {
    mkdir -p "$data" 2>/dev/null
    marker="$data/.installing"
    if [ -d "$marker" ]; then
        # a build killed midway (its shell gone, or started over 10 minutes ago) is tried again
        pid=$(cat "$marker/pid" 2>/dev/null)
        if { [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; } ||
            [ -n "$(find "$marker" -maxdepth 0 -mmin +10 2>/dev/null)" ]; then
            rm -rf "$marker"
        fi
    fi
    # a build of this plugin that failed (no network, no Python) is tried again by the first hook run
    # a minute later, so that it recovers by itself once the cause is gone; each further failure in a
    # row doubles the wait (1, 2, 4, 8, 16, then 30 minutes), never a build on every hook run.
    # `.failed` holds the stamp and the failures in a row; doctor reads it (and says how to retry now).
    if [ -r "$data/.failed" ] && { IFS= read -r failed; IFS= read -r count || true; } <"$data/.failed" &&
        [ "$failed" = "$stamp" ]; then
        case $count in '' | *[!0-9]*) count=1 ;; esac
        wait=1
        while [ "$count" -gt 1 ] && [ "$wait" -lt 30 ]; do wait=$((wait * 2)); count=$((count - 1)); done
        [ "$wait" -le 30 ] || wait=30
        [ -n "$(find "$data/.failed" -mmin +"$wait" 2>/dev/null)" ] || return 0
    fi
    if mkdir "$marker" 2>/dev/null; then
        (setsid sh -c 'echo $$ >"$2/.installing/pid"
            if sh "$1/hooks/venv.sh" "$1" "$2" "$3" >"$2/install.log" 2>&1; then rm -f "$2/.failed"
            else
                n=0
                if [ -r "$2/.failed" ] && { IFS= read -r s; IFS= read -r n || true; } <"$2/.failed" &&
                    [ "$s" = "$3" ]; then case $n in "" | *[!0-9]*) n=1 ;; esac; else n=0; fi
                printf "%s\n%s\n" "$3" $((n + 1)) >"$2/.failed"
            fi
            rm -rf "$2/.installing"' sh "$root" "$data" "$stamp" </dev/null >/dev/null 2>&1 &)
    fi
}

if [ -f "$venv/bin/session-watcher-hook" ]; then
    [ "$built" = "$stamp" ] || build
    # the plugin's command, which a cold-cache alert names: the bin/session-watcher beside this file,
    # by the path Claude Code ran this by (not an environment's), for this process only (base/route.py)
    case $0 in
        /*/hooks/run.sh)
            SESSION_WATCHER_PLUGIN_BIN="${0%/hooks/run.sh}/bin/session-watcher" SESSION_WATCHER_PLUGIN_PID=$$
            export SESSION_WATCHER_PLUGIN_BIN SESSION_WATCHER_PLUGIN_PID ;;
    esac
    exec "$venv/bin/python" -I -S "$venv/bin/session-watcher-hook" "$@"
fi
build
exit 0
