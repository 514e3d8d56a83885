#!/usr/bin/env sh
# session-watcher installer.
#   ./install.sh              private venv + hooks and status line in Claude Code's settings (Codex: hooks.json), a demo
#                             (for the agents here: Codex alone, no CLAUDE_CONFIG_DIR set, no ~/.claude and no
#                             claude on PATH: Codex's only)
#   ./install.sh --uninstall  remove exactly what the install added (your session data is kept)
#   ./install.sh --no-demo    the install without its closing screen (the sample session's status, your report)
#   ./install.sh --venv-only  only the venv (the benchmarks measure it; the plugin route builds its own: session_watcher/hooks/venv.sh)
#   ./install.sh --reinstall  pip again though the venv holds this very build (it is skipped then: the rest is done)
# Honours CLAUDE_CONFIG_DIR (default ~/.claude; a comma-separated list: settings in the first, your sessions from each), CODEX_HOME (~/.codex), SESSION_WATCHER_HOME, XDG_DATA_HOME, XDG_BIN_HOME, PYTHON.
# The command is linked into ~/.local/bin (XDG_BIN_HOME; pipx's convention). With the Claude Code plugin enabled
# too, the last line says each hook runs twice and how to keep one route, as doctor says it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mode=install
reinstall=0
data=""
while [ $# -gt 0 ]; do
    case "$1" in
        --uninstall) mode=uninstall ;;
        --venv-only) mode=venv ;;
        --no-demo) mode=nodemo ;;
        --reinstall) reinstall=1 ;;
        --data) shift; data="$1" ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;  # these lines, up to `set -eu`
        *) echo "install.sh: unknown option $1"' (`./install.sh --help` lists the options)' >&2; exit 2 ;;
    esac
    shift
done
# SESSION_WATCHER_HOME as the package reads it (session_watcher/base/paths.py): absolute or under ~;
# a relative one is ignored (it would put the venv and state wherever this runs)
swhome="${SESSION_WATCHER_HOME:-}"
case "$swhome" in "~/"*) swhome="$HOME/${swhome#"~/"}" ;; "~") swhome="$HOME" ;; esac
case "$swhome" in
    /*|"") ;;
    *) echo "install.sh: SESSION_WATCHER_HOME=$swhome is relative: ignored" >&2; swhome="" ;;
esac
if [ -z "$data" ]; then
    if [ -n "$swhome" ]; then data="$swhome/data"
    else data="${XDG_DATA_HOME:-$HOME/.local/share}/session-watcher"; fi
fi
venv="$data/venv"
bin="$venv/bin/session-watcher"
# a line of this script's, said as the package says its own (wrapped at spaces within the terminal's
# width, a path whole); as it is where the venv cannot say it
say() {  # say TEXT [PATH...]: the paths in TEXT kept whole where it wraps, though one holds a space
    [ -x "$venv/bin/python" ] && "$venv/bin/python" -I -m session_watcher.cli.install say "$@" || printf '%s\n' "$1"
}

if [ "$mode" = uninstall ]; then
    state=""
    cache=""
    config=""
    if [ -x "$venv/bin/python" ]; then
        "$venv/bin/python" -m session_watcher.cli.install remove
        "$venv/bin/python" -m session_watcher.cli.install_codex remove  # Codex's hooks.json, when added
        state=$("$venv/bin/python" -I -c 'from session_watcher.base import paths; print(paths.state_dir())' 2>/dev/null)
        cache=$("$venv/bin/python" -I -c 'from session_watcher.base import paths; print(paths.cache_dir())' 2>/dev/null)
        config=$("$venv/bin/python" -I -c 'from session_watcher.base import paths; print(paths.user_config_file())' 2>/dev/null)
    fi
    # the report's index (made again by the next report): its files, by their names (reports/index.py),
    # from the folder the package names, never through a link (the report writes through none); the
    # folder goes when nothing else is left in it (SESSION_WATCHER_HOME=~ makes it ~/cache, a user's)
    if [ -n "$cache" ] && [ -d "$cache" ] && [ ! -L "$cache" ]; then
        index=""
        for f in "$cache"/warmth-index*; do
            if [ -e "$f" ] || [ -L "$f" ]; then rm -rf "$f"; index=1; fi
        done
        if [ -n "$index" ]; then
            if rmdir "$cache" 2>/dev/null; then say "removed $cache (the report's index)" "$cache"
            else say "removed the report's index from $cache (the rest of that folder is not ours: kept)" "$cache"; fi
        fi
    fi
    # the replay cache `export --otlp` keeps (otlp/backfill.py: made again by the next export), by its
    # files' names, never through a link; the otlp folder goes when nothing else is in it (the live
    # exporter's record of the advice it sent, progress.json, is no cache: it stays)
    if [ -n "$state" ] && [ -d "$state/otlp" ] && [ ! -L "$state" ] && [ ! -L "$state/otlp" ]; then
        rm -f "$state/otlp/backfill.json" "$state/otlp/backfill.json.lock" "$state/otlp/backfill.json.tmp"
        rmdir "$state/otlp" 2>/dev/null || true
    fi
    # the command's link, only when it is ours
    link="${XDG_BIN_HOME:-$HOME/.local/bin}/session-watcher"
    if [ -L "$link" ] && [ "$(readlink "$link")" = "$bin" ]; then rm -f "$link" && say "removed $link" "$link"; fi
    # the cache lifetimes a report inferred (cliff.json), the daily sweep's marker (.tidied), a
    # sessions folder the sweep emptied and a handoffs folder with no handoff left (`handoff --drop`,
    # or the one given) are no session state: made again when needed, with nothing else in the state
    # folder they go with it
    if [ -n "$state" ] && [ -d "$state" ] && [ ! -L "$state" ]; then
        [ -L "$state/sessions" ] || rmdir "$state/sessions" 2>/dev/null || true
        if [ -d "$state/handoffs" ] && [ ! -L "$state/handoffs" ]; then  # its folders (state/handoffs.py), empty
            for kind in pending lent taken; do
                [ -L "$state/handoffs/$kind" ] || rmdir "$state/handoffs/$kind" 2>/dev/null || true
            done
            rmdir "$state/handoffs" 2>/dev/null || true
        fi
        case " $(ls -A "$state" 2>/dev/null | tr '\n' ' ')" in
            " "|" cliff.json "|" .tidied "|" .tidied cliff.json "|" cliff.json .tidied ")  # either sort order
                rm -f "$state/cliff.json" "$state/.tidied" && rmdir "$state" 2>/dev/null || true ;;
        esac
    fi
    # what stays is said only when it is there: the session states, your config (`config set` wrote
    # it, or you did: the next install reads it again)
    said="removed $venv"
    kept=""
    if [ -n "$state" ] && [ -n "$(ls -A "$state" 2>/dev/null)" ]; then
        kept="session states stay in $state"
    fi
    if [ -n "$config" ] && [ -f "$config" ]; then
        kept="${kept:+$kept; }your config stays in $config"
    fi
    them=them
    [ "$kept" != "your config stays in $config" ] || them=it  # the one file
    [ -z "$kept" ] || said="$said; $kept (delete $them yourself if you wish)"
    said=$(say "$said" "$venv" "$state" "$config")  # wrapped while the venv that wraps it is there; said once it is gone
    rm -rf "$venv"
    rm -f "$data/pip.log"
    rmdir "$data" 2>/dev/null || true  # the data folder, when nothing else is left in it
    printf '%s\n' "$said"
    exit 0
fi

. "$here/session_watcher/hooks/python.sh"  # find_python
py=$(find_python) || { echo "install.sh: Python >= 3.11 is needed (set PYTHON=/path/to/python3.11)" >&2; exit 1; }
mkdir -p "$data" && chmod 700 "$data"
# the build this checkout installs: its version, and its commit where this folder is a git checkout
# of its own (", changed" where the files installed differ from that commit); the venv keeps it in
# .install-build, so an update says from which build to which
# (git names its top folder with the links resolved: a checkout reached through a link is one too)
shipped="pyproject.toml README.md LICENSE MANIFEST.in config.example.toml session_watcher"  # what pip builds from
build=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$here/session_watcher/__init__.py")
if [ "$(git -C "$here" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$here" && pwd -P)" ] &&
   commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null); then
    # shellcheck disable=SC2086  # $shipped: the names, split
    [ -z "$(git -C "$here" status --porcelain -- $shipped 2>/dev/null)" ] ||
        commit="$commit, changed"
    build="$build ($commit)"
fi
# what pip would build, exactly: each file of $shipped as the copy below takes them (and this script,
# which says how), by its path, whether it runs, and its bytes; a hash of them, the record's second line
# (none where it cannot be made, a file not readable or a Python that fails: pip runs then, as before it)
# shellcheck disable=SC2086  # $shipped: the names, split
tree=$(cd "$here" && "$py" -I - install.sh $shipped 2>/dev/null <<'PY'
import hashlib, os, sys
h = hashlib.sha256()
def add(path):
    name = path.encode("utf-8", "surrogateescape") + b"\0"
    if os.path.islink(path):  # tar copies a link as a link
        h.update(b"L" + name + os.readlink(path).encode("utf-8", "surrogateescape") + b"\0")
    elif os.path.isdir(path):
        for entry in sorted(os.listdir(path)):
            if entry != "__pycache__" and not entry.endswith(".pyc"):
                add(os.path.join(path, entry))
    elif os.path.isfile(path):
        with open(path, "rb") as fh:
            data = fh.read()
        h.update(b"F" + name + (b"x" if os.access(path, os.X_OK) else b"-") + b"%d\0" % len(data) + data)
    else:
        h.update(b"?" + name)
for path in sys.argv[1:]:
    add(path)
print(h.hexdigest())
PY
) || tree=""
fresh=0
record="$venv/.install-build"
# the venv holds this very build (the record names it and the hash of its files; its launchers are
# there, its python imports the package and finds each distribution the package needs: one removed by
# hand since, `pip uninstall tomlkit`, or at a version a requirement does not take, is named,
# session_watcher/base/depcheck.py): no pip (--reinstall
# runs it all the same), the rest as always
lacking=""
if [ "$reinstall" = 0 ] && [ -n "$tree" ] && [ -x "$venv/bin/python" ] &&
   [ "$(sed -n 1p "$record" 2>/dev/null)" = "$build" ] && [ "$(sed -n 2p "$record" 2>/dev/null)" = "tree $tree" ] &&
   [ -x "$bin" ] && [ -f "$venv/bin/session-watcher-hook" ] && [ -f "$venv/bin/session-watcher-statusline" ] &&
   lacking=$("$venv/bin/python" -I -m session_watcher.base.depcheck 2>/dev/null); then
    if [ "$mode" = venv ]; then
        say "session-watcher $build already installed: $bin" "$bin"
        exit 0
    fi
    say "session-watcher $build already installed: hooks and settings checked"
else
    # this very build, but what it needs is not all there: said, and pip puts it back
    case "$lacking" in
        "") ;;
        *" "*) say "session-watcher $build is installed, but not what it needs: $lacking (pip installs them again)" ;;
        *) say "session-watcher $build is installed, but not what it needs: $lacking (pip installs it again)" ;;
    esac
    # pip is silent for its whole run (its output goes to pip.log): say what is happening first
    if [ ! -x "$venv/bin/python" ]; then
        printf 'installing %s with pip (a minute or two) into\n  %s\n' "$build" "$venv"
        # made from nothing (--clear): a venv there whose python is gone (its interpreter removed or
        # upgraded away) keeps its dangling links through a plain `venv`, which then fails at every
        # run; its packages were that python's, and its record goes with them
        "$py" -m venv --clear "$venv"; fresh=1
    else
        # the build it holds: as the last install.sh recorded it, else (one from before the record, or
        # one whose record is gone) the version the venv's package says
        was=$(head -n 1 "$record" 2>/dev/null) ||
            was=$("$venv/bin/python" -I -c 'import session_watcher; print(session_watcher.__version__)' 2>/dev/null) ||
            was="an unknown version"
        printf 'updating %s -> %s with pip\n  %s\n' "$was" "$build" "$venv"
        # its hash goes until pip is done: a pip that fails half way leaves no venv that says it holds a build
        [ ! -f "$record" ] || printf '%s\n' "$was" >"$record"
    fi
    # pip builds in the source tree, and setuptools' build/ there keeps modules deleted since (a pulled
    # checkout installed them again): build from a clean copy of what the sdist holds instead
    src=$(mktemp -d "${TMPDIR:-/tmp}/session-watcher-src.XXXXXX")
    trap 'rm -rf "$src"' EXIT
    # shellcheck disable=SC2086  # $shipped: the names, split
    (cd "$here" && tar cf - --exclude=__pycache__ --exclude='*.pyc' $shipped) | (cd "$src" && tar xf -)
    # the dependencies with the fast extra (stringzilla, where pip can install it: the marker search
    # falls back to bytes.find and re without it), then this checkout's code even when the version
    # number did not change (a venv made just now already has it: one build, not two)
    { { "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade "$src[fast]" ||
        "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade "$src"; } &&
      { [ "$fresh" = 1 ] ||
        "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall "$src"; }; } \
        >"$data/pip.log" 2>&1 \
        || { cat "$data/pip.log" >&2; echo "install.sh: pip failed (log: $data/pip.log)" >&2; exit 1; }
    # setuptools' .pth adds an import to every interpreter start; the venv does not need it after pip ran
    "$venv/bin/python" -m pip uninstall -y -q setuptools >/dev/null 2>&1 || true
    # Launchers for Claude Code (session_watcher.hooks.launchers): the interpreter straight into the entry point,
    # run as `python -I -S`, the package's modules found by their names (hooks/finder.py); the module bundle
    # an install before the package by layers left in the venv goes; the command in place of pip's wrapper
    # (which imports `re` on every run)
    "$venv/bin/python" -I -m session_watcher.hooks.launchers "$venv/bin"
    printf '%s\ntree %s\n' "$build" "$tree" >"$record"
    say "installed: $bin" "$bin"
    [ "$mode" = venv ] && exit 0
fi

"$venv/bin/python" -m session_watcher.cli.install add "$venv/bin"
"$venv/bin/python" -m session_watcher.cli.install_codex add "$venv/bin"  # where Codex is present
"$venv/bin/python" -m session_watcher.cli.install link "$bin"
# the run's last words where the Claude Code plugin is enabled too: each hook runs twice, and the
# command that keeps either route, as doctor says it (cli.install twice)
twice() { "$venv/bin/python" -m session_watcher.cli.install twice || true; }
[ "$mode" = nodemo ] && { twice; exit 0; }

echo
# what the install wrote for: Claude Code's settings unless Codex is the one agent here (cli.install add),
# read from what is there now (an earlier install's record of a settings file gone since counts for nothing)
claude=0
"$venv/bin/python" -m session_watcher.cli.install installed && claude=1
if [ "$fresh" = 1 ]; then  # an update (the venv was there) has seen it: only the user's sessions then
    # the sample of the agent installed for: where Codex is the one agent here (no Claude Code
    # settings written, Codex's folder there) a Codex thread's, generated (bench/sample_codex.py), not
    # a Claude Code session's; else Claude Code's
    if [ "$claude" = 0 ] && { [ -n "${CODEX_HOME:-}" ] || [ -d "$HOME/.codex" ]; }; then
        echo "== the status a sample Codex thread ends with (generated; session-watcher replay):"
        name=sample-codex.jsonl
    else
        echo "== the status a bundled sample session ends with (session-watcher replay):"
        name=sample-session.jsonl
    fi
    sample=$("$venv/bin/python" -c 'import session_watcher, os, sys; print(os.path.join(os.path.dirname(session_watcher.__file__), "data", sys.argv[1]))' "$name")
    "$bin" replay "$sample"
    echo
fi
# Claude Code's projects folders as the report reads them (session_watcher.cli.install projects: a
# comma-separated CLAUDE_CONFIG_DIR is a list of folders, as ccusage reads it), one a line: those there
# (else the first); whether one holds a session
sessions=0
projects=$("$venv/bin/python" -I -m session_watcher.cli.install projects) && sessions=1
if [ -z "$projects" ]; then
    # that step failed, naming none: the folder Claude Code would use, as paths.claude_config_dirs reads
    # the variable (its first non-empty part, spaces around it dropped, ~/ the home; else ~/.claude),
    # and whether it holds a session, looked at from here
    first=""
    ifs=$IFS; IFS=,; set -f
    for part in ${CLAUDE_CONFIG_DIR:-}; do
        part=${part#"${part%%[![:space:]]*}"}; part=${part%"${part##*[![:space:]]}"}
        if [ -n "$part" ]; then first=$part; break; fi
    done
    IFS=$ifs; set +f
    case "$first" in "~/"*) first="$HOME/${first#"~/"}" ;; "~") first="$HOME" ;; esac
    projects="${first:-$HOME/.claude}/projects"
    # the shell's own pattern, not `ls`: thousands of sessions are more than a command's arguments
    # may hold (E2BIG: macOS's 1 MB of them is some 8,000 paths), which read as none
    for f in "$projects"/*/*.jsonl; do
        if [ -e "$f" ] || [ -L "$f" ]; then sessions=1; fi
        break  # the first name the pattern gives is there, or the pattern matched none
    done
fi
# shellcheck disable=SC2086  # $projects: split at its newlines alone
ifs=$IFS; set -f; IFS='
'; set -- $projects; IFS=$ifs; set +f  # the folders, each whole though it holds a space: what a line below names
projects=""
for folder in "$@"; do projects="${projects:+$projects or }$folder"; done
# Codex's threads too, where Codex is (install_codex.codex_home): its rollouts, live or archived
codex="${CODEX_HOME:-$HOME/.codex}"
threads=""
if [ -n "${CODEX_HOME:-}" ] || [ -d "$HOME/.codex" ]; then
    threads="$codex/sessions"
    # the shell's own patterns, not `ls`: a year of threads is more than a command's arguments may hold
    for f in "$codex"/sessions/*/*/*/rollout-*.jsonl "$codex"/archived_sessions/rollout-*.jsonl \
        "$codex"/archived_sessions/*/*/*/rollout-*.jsonl; do
        if [ -e "$f" ] || [ -L "$f" ]; then threads=found; break; fi
    done
fi
if [ "$sessions" = 1 ] || [ "$threads" = found ]; then
    echo "== your sessions (session-watcher report):"
    # the report's first screens; a cut one says where the rest is. Its standard error stays the
    # terminal's: the progress bar of a first scan (a year of sessions takes a while), and any warning
    "$bin" report >"$data/report.txt" || true
    head -n 60 "$data/report.txt"
    shown=$(wc -l <"$data/report.txt")
    [ "$shown" -gt 60 ] && echo "... (the first 60 lines of $shown: the whole report with \`session-watcher report\`)"
    rm -f "$data/report.txt"
    # Codex's hooks went in: where a thread's alerts come, Codex having no status line (its next step,
    # as the screen with no thread yet says it)
    if [ -n "$threads" ] && [ "$claude" = 0 ]; then
        echo
        say "== Codex has no status line: a thread's alerts come to the desktop and with your next prompt (\`session-watcher status\` any time)."
    elif [ -n "$threads" ]; then
        echo
        say "== Claude Code shows the status line; Codex has none: a thread's alerts come to the desktop and with your next prompt (\`session-watcher status\` any time)."
    fi
elif [ -n "$threads" ] && [ "$claude" = 0 ]; then
    say "== no Codex threads in $threads yet: start one. Codex has no status line: its alerts come to the desktop and with your next prompt (\`session-watcher status\` any time)." "$threads"
elif [ -n "$threads" ]; then
    say "== no Claude Code sessions in $projects and no Codex threads in $threads yet: start one. Claude Code shows the status line; Codex has none: its alerts come to the desktop and with your next prompt (\`session-watcher status\` any time)." "$@" "$threads"
elif { [ -n "${SESSION_WATCHER_CODEX:-}" ] && [ -x "$SESSION_WATCHER_CODEX" ]; } ||
     { [ -z "${SESSION_WATCHER_CODEX:-}" ] && command -v codex >/dev/null 2>&1; }; then
    # Codex installed and never run (its folder not made yet): the line above said to run it once
    if [ "$claude" = 0 ]; then
        say "== run codex once (it makes $codex), then ./install.sh again to add its hooks." "$codex"
    else
        say "== no Claude Code sessions in $projects yet: start one and watch the status line, or run codex once, then ./install.sh again to add its hooks." "$@"
    fi
else
    say "== no Claude Code sessions in $projects yet: start one, and watch the status line." "$@"
fi
twice
