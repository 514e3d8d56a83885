#!/usr/bin/env bash
# The test command: a private dev venv, then lint, types and the whole suite.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
# a pyenv shim is a shell script; resolve the real interpreter so the venv does not depend on it
if command -v pyenv >/dev/null 2>&1; then PY=$(pyenv which python3 2>/dev/null || echo "$PY"); fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
.venv/bin/ruff check .
.venv/bin/mypy
set +e
.venv/bin/python -m pytest "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "no tests were collected: failing" >&2; exit 1; fi
exit "$rc"
