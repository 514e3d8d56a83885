#!/usr/bin/env bash
# The test command (CI runs exactly this, through .ci/run):
#   1. system pieces the tests use, each from .ci/setup.d/ (a notification server, Chromium, the
#      pinned Claude Code CLI and ccusage from npm); a step that cannot run (no root, no network)
#      fails under CI=true and only warns elsewhere, where the tests that need it skip saying why;
#   2. a private dev venv (.venv) with the package installed editable;
#   3. ruff, mypy --strict, and the whole pytest suite (pytest's "no tests" counts as a failure).
# Arguments go to pytest, e.g. `./run-tests.sh -m "not e2e"` or `./run-tests.sh tests/test_engine.py`.
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
for step in .ci/setup.d/*.sh; do
    [ -e "$step" ] || continue
    if ! bash "$step"; then
        if [ "${CI:-}" = "true" ]; then echo "setup step failed: $step" >&2; exit 1; fi
        echo "warning: setup step failed: $step (tests that need it will skip)" >&2
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
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
.venv/bin/ruff check .
.venv/bin/mypy
set +e
.venv/bin/python -m pytest "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "run-tests.sh: no tests were collected: failing" >&2; exit 1; fi
exit "$rc"
