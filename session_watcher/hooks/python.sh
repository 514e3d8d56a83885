# find_python: a real interpreter >= 3.11 (PYTHON first), never a shell shim (a pyenv shim costs ~70 ms
# on every hook). POSIX sh; sourced by install.sh and hooks/venv.sh.
find_python() {
    for cand in ${PYTHON:-} python3.13 python3.12 python3.11 python3; do
        command -v "$cand" >/dev/null 2>&1 || continue
        real=$("$cand" -c 'import sys; print(sys.executable if sys.version_info >= (3, 11) else "")' 2>/dev/null) || continue
        [ -n "$real" ] && { echo "$real"; return 0; }
    done
    return 1
}
