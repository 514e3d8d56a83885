"""The standard library's process pool in place of the project's (`state.pool.map_batches`), for
bench.tricks: the same batches, heaviest first, to `concurrent.futures.ProcessPoolExecutor` workers
(fork context; as many workers as the project's pool runs processes), each batch's result encoded
as the project's children encode it and pickled back to the parent, which waits. `patch()` puts it
in place for the report's scan and its pages; bench.tricks copies this file beside its driver (the
venv it measures has no `bench`)."""

from __future__ import annotations

from typing import Any

_work: list[Any] = []  # what the workers run, set before they are forked (a closure cannot be pickled)


def _call(number: int) -> Any:
    return _work[0](number)


def _map(fn: Any, count: int, workers: int) -> list[Any]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    _work[:] = [fn]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as ex:
        return list(ex.map(_call, range(count)))


def patch() -> None:
    """The scan and the pages through ProcessPoolExecutor: in place of `state.pool.map_batches`."""
    from session_watcher.state import pool

    pool.map_batches = stdlib_map_batches


def stdlib_map_batches(work: Any, count: int, workers: int | None = None, *, encode: Any = None, decode: Any = None,
                       name: str = "pool") -> list[Any]:
    """`state.pool.map_batches` on ProcessPoolExecutor: each batch encoded in its worker (the same
    marshal data the project's children hand back) and decoded here, which only waits."""
    import marshal

    from session_watcher.state import pool

    n = max(1, min(pool.cores() if workers is None else workers, count))
    if n == 1:
        return [work(k) for k in range(count)]
    enc, dec = encode or marshal.dumps, decode or marshal.loads
    return [dec(data) for data in _map(lambda k: enc(work(k)), count, n)]
