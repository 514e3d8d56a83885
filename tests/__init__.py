"""The test suite, a package so that its helpers import one way: `from tests.oracle import ...`.

Pytest puts the repository root on sys.path (pyproject's `pythonpath`), which makes `tests` and
`bench` (the one transcript writer, bench.synth) importable from a fresh clone.
"""
