#!/bin/sh
# Builds the plugin route's venv; hooks/run.sh starts it in the background, on the plugin's first
# hook run and when the plugin's version changed:
#   sh hooks/venv.sh PLUGIN_ROOT DATA STAMP
# The dependencies come from PyPI (pip, with the user's own index settings): the plugin route's one
# need of the network. The package is the plugin's own folder (this copy of session_watcher/), put in
# place without a build. The new venv is made beside the one in use, `DATA/venv` then names it in one
# rename (a link), and the old one is removed once the hooks that started from it are done.
set -eu
root=$(cd "$1" && pwd && echo .)  # the `.`: a path ending in a newline keeps it
root=${root%?.}
data=$2
stamp=$3
. "$root/hooks/python.sh"
py=$(find_python) || { echo "venv.sh: Python >= 3.11 is needed (set PYTHON=/path/to/python3.11)" >&2; exit 1; }
mkdir -p "$data" && chmod 700 "$data"
new="$data/venv-$(date +%Y%m%d%H%M%S)-$$"
trap 'rm -rf "$new"' EXIT  # a build cut short leaves nothing half made
"$py" -m venv "$new"
"$new/bin/python" -m pip install -q --disable-pip-version-check -r "$root/data/requirements.txt"
# the fast extra where this platform has it (a SIMD search; the pure one gives the same answers)
"$new/bin/python" -m pip install -q --disable-pip-version-check -r "$root/data/requirements-fast.txt" \
    >/dev/null 2>&1 || true
# setuptools' .pth adds an import to every interpreter start; the venv does not need it
"$new/bin/python" -m pip uninstall -y -q setuptools >/dev/null 2>&1 || true
"$new/bin/python" -I - "$root" <<'PY'
import compileall, os, shutil, sys, sysconfig
root = sys.argv[1]
dest = os.path.join(sysconfig.get_paths()["purelib"], "session_watcher")
# the package as the plugin ships it, without its caches and the plugin's own files
shutil.copytree(root, dest, ignore=shutil.ignore_patterns("__pycache__", ".claude-plugin", "commands", "bin"))
compileall.compile_dir(dest, quiet=1)
PY
"$new/bin/python" -I -m session_watcher.hooks.launchers "$new/bin"
printf '%s\n' "$stamp" >"$new/.plugin-version"
old=$("$new/bin/python" -I - "$data" "$new" <<'PY'
import os, sys
data, new = sys.argv[1], sys.argv[2]
link = os.path.join(data, "venv")
old = os.path.realpath(link) if os.path.lexists(link) else ""
if os.path.isdir(link) and not os.path.islink(link):  # the first layout: a folder of its own
    old = os.path.join(data, f"venv-old-{os.getpid()}")
    os.rename(link, old)
tmp = os.path.join(data, f".venv-{os.getpid()}")
os.symlink(os.path.basename(new), tmp)
os.replace(tmp, link)  # one rename: a hook sees the old venv or the new one, whole
print(old)
PY
)
trap - EXIT
# the stamp is `ROOT   "version": "0.1.0",` (run.sh's: the folder, then the manifest's version line);
# the log says the version alone, or nothing when the manifest named none
version=""
case $stamp in *'"version"'*)
    version=${stamp##*'"version"'}; version=${version#*'"'}; version=${version%%'"'*} ;;
esac
echo "venv.sh: $new ready${version:+ (version $version)}"
if [ -n "$old" ] && [ "$old" != "$new" ] && [ -d "$old" ]; then
    sleep "${SESSION_WATCHER_OLD_VENV_GRACE:-20}"  # hooks started from the old venv finish within their 10 s timeout
    rm -rf "$old"
fi
