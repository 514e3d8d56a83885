# find_python: a real interpreter >= 3.11 (PYTHON first), never a shell shim (a pyenv shim would start
# a shell on every hook). POSIX sh; sourced by install.sh and hooks/venv.sh.
# Nothing is looked up on an empty or relative PATH element (a trailing `:` means the current folder,
# the project a hook runs in): each name is tried in the absolute PATH entries, then in a fixed list of
# system folders; PYTHON must be an absolute path or a bare name looked up the same way.
SW_PY_DIRS="/usr/local/bin:/usr/bin:/bin:/opt/homebrew/bin:/opt/local/bin"

# _sw_try PATH: print the interpreter PATH runs when it is an absolute, executable Python >= 3.11
_sw_try() {
    case $1 in /*) ;; *) return 1 ;; esac
    [ -f "$1" ] && [ -x "$1" ] || return 1
    _sw_real=$("$1" -c 'import sys; print(sys.executable if sys.version_info >= (3, 11) else "")' 2>/dev/null) || return 1
    case $_sw_real in /*) echo "$_sw_real"; return 0 ;; esac
    return 1
}

# _sw_lookup NAME: NAME in each absolute folder of PATH, then of SW_PY_DIRS
_sw_lookup() {
    _sw_ifs=$IFS
    case $- in *f*) _sw_noglob=1 ;; *) _sw_noglob= ;; esac
    set -f
    IFS=:
    _sw_found=1
    for _sw_dir in $PATH $SW_PY_DIRS; do
        case $_sw_dir in /*) ;; *) continue ;; esac
        IFS=$_sw_ifs
        if _sw_try "${_sw_dir%/}/$1"; then _sw_found=0; break; fi
        IFS=:
    done
    IFS=$_sw_ifs
    [ -n "$_sw_noglob" ] || set +f
    return $_sw_found
}

find_python() {
    if [ -n "${PYTHON:-}" ]; then
        case $PYTHON in
            /*) _sw_try "$PYTHON" && return 0 ;;
            */*) ;;  # a relative path: never
            *) _sw_lookup "$PYTHON" && return 0 ;;
        esac
    fi
    for _sw_name in python3.13 python3.12 python3.11 python3; do
        _sw_lookup "$_sw_name" && return 0
    done
    return 1
}
