#!/usr/bin/env bash
# The test command (CI runs exactly this, through .ci/run):
#   ./run-tests.sh           everything: ruff, mypy --strict (the package, bench/, tools/ and tests/: pyproject.toml's
#                            [tool.mypy] files), the whole pytest suite under coverage, in TEST_WORKERS
#                            parallel workers (4; fails below the floor in pyproject.toml's [tool.coverage.report])
#   ./run-tests.sh --quick   ruff, mypy and the quick tier: every test that starts no process (tests/conftest.py)
#   under CI=true the whole run first runs the quick tier and the hook tests on one core beside a busy loop
#   ./run-tests.sh ARGS      ruff, mypy, then pytest ARGS, e.g. tests/test_engine.py or -m "not e2e"
# First the system pieces the tests use, each from .ci/setup.d/ (a notification server, Chromium, the
# pinned Claude Code CLI and ccusage from npm), and a private dev venv (.venv) with the package
# installed editable; their output goes to test-output/setup.log, not to the terminal. A setup step
# that cannot run (no root, no network) fails under CI=true and only warns elsewhere, where the
# tests that need it skip saying why. pytest's "no tests collected" counts as a failure.
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
mkdir -p test-output
log=test-output/setup.log
: >"$log"
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi

for step in .ci/setup.d/*.sh; do
    [ -e "$step" ] || continue
    echo "== $step" >>"$log"
    if ! bash "$step" >>"$log" 2>&1; then
        tail -n 20 "$log" >&2
        if [ "${CI:-}" = "true" ]; then echo "setup step failed: $step (log: $log)" >&2; exit 1; fi
        echo "warning: setup step failed: $step (tests that need it will skip; log: $log)" >&2
    fi
done
PY=${PYTHON:-}
if [ -z "$PY" ]; then
    for cand in python3.13 python3.12 python3.11 python3; do
        command -v "$cand" >/dev/null 2>&1 || continue
        # the real interpreter, not a shell shim (pyenv): the venv must not depend on the shim
        PY=$("$cand" -c 'import sys; print(sys.executable if sys.version_info >= (3, 11) else "")' 2>/dev/null) || PY=""
        [ -n "$PY" ] && break
    done
fi
[ -n "$PY" ] || { echo "run-tests.sh: Python >= 3.11 is needed (set PYTHON=...)" >&2; exit 1; }
echo "== dev venv" >>"$log"
if ! { [ -x .venv/bin/python ] || "$PY" -m venv .venv; } >>"$log" 2>&1 ||
    ! .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]' >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "run-tests.sh: the dev venv could not be built (log: $log)" >&2
    exit 1
fi
# byte-compiled once here: the tests start hundreds of Python processes, and with PYTHONDONTWRITEBYTECODE
# set (as in some CI images) each would otherwise compile every module it imports from source
.venv/bin/python -m compileall -q -j 0 session_watcher tests bench >>"$log" 2>&1 || true
# pytest keeps each test module as its asserts rewritten only where bytecode may be written: with
# PYTHONDONTWRITEBYTECODE set, every pytest process (each parallel worker) rewrites all of them again
unset PYTHONDONTWRITEBYTECODE
.venv/bin/ruff check -q .
.venv/bin/mypy
set +e
if [ "$quick" = 1 ]; then
    .venv/bin/python -m pytest -m quick "$@"
    rc=$?
elif [ "$#" -gt 0 ]; then
    .venv/bin/python -m pytest "$@"
    rc=$?
else
    if [ "${CI:-}" = "true" ] && command -v taskset >/dev/null 2>&1; then
        # a busy machine, on purpose: the quick tier and the hook tests on one core shared with a busy
        # loop; no test may depend on how much work fits in a time span
        taskset -c 0 timeout 900 sh -c 'while :; do :; done' &
        busy=$!
        taskset -c 0 .venv/bin/python -m pytest -q -p no:cacheprovider -m quick &&
            taskset -c 0 .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_guard_hook.py \
                tests/test_hook_process.py tests/test_hook_events.py
        rc=$?
        kill "$busy" 2>/dev/null
        wait "$busy" 2>/dev/null
        if [ "$rc" -ne 0 ]; then echo "run-tests.sh: the tests on one busy core failed" >&2; exit "$rc"; fi
    fi
    rm -f .coverage .coverage.*
    # the rewritten test modules written once, so that the workers read them rather than each rewrite them
    .venv/bin/python -m pytest --collect-only -q >/dev/null 2>&1 || true
    # parallel workers (pytest-xdist; most tests wait on processes, not the CPU), a module's tests on
    # one worker so its module fixtures are built once; coverage combined by pytest-cov
    .venv/bin/python -m pytest -n "${TEST_WORKERS:-4}" --dist loadfile --cov --cov-report=
    rc=$?
    if [ "$rc" -eq 0 ]; then
        .venv/bin/python -m coverage report >test-output/coverage.txt
        rc=$?
        tail -n 1 test-output/coverage.txt
        [ "$rc" -eq 0 ] || echo "run-tests.sh: coverage is under the floor (test-output/coverage.txt)" >&2
        if [ "$rc" -eq 0 ]; then
            # the pure core has its own floor: it is where the model lives, and nothing there needs a process
            .venv/bin/python -m coverage report --include='session_watcher/core/*' --fail-under=93 \
                >test-output/coverage-core.txt
            rc=$?
            echo "core: $(tail -n 1 test-output/coverage-core.txt)"
            [ "$rc" -eq 0 ] || echo "run-tests.sh: the core's coverage is under 93 % (test-output/coverage-core.txt)" >&2
        fi
    fi
fi
set -e
if [ "$rc" -eq 5 ]; then echo "run-tests.sh: no tests were collected: failing" >&2; exit 1; fi
exit "$rc"
