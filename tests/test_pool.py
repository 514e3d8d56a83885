"""`state.pool.map_batches`, the one process pool (the report's scan, `report --pages`): every batch
done once, by forked children and the parent, the results those of one process; what a child could
not finish done again by the parent; and on every way out, the parent's own failure included, no
child left running and none left unreaped. Real forks, real pipes and files."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import TYPE_CHECKING

import pytest

from session_watcher.state import pool

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.usefixtures("alone")  # no fork while another thread runs

WAIT = 60.0  # seconds the parent's work waits for a child to have taken a batch (a deadlock guard)


def children_of_this_process() -> set[int]:
    """The pids whose parent is this process, zombies included (from /proc)."""
    me = os.getpid()
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        if int(stat.rsplit(b")", 1)[1].split()[1]) == me:  # the field after the state: the ppid
            out.add(int(entry))
    return out


def note(folder: Path) -> None:
    (folder / f"child-{os.getpid()}").touch()


def wait_for_a_child(folder: Path) -> None:
    end = time.monotonic() + WAIT
    while not any(folder.glob("child-*")):
        if time.monotonic() > end:
            raise AssertionError("no child took a batch")
        time.sleep(0.005)


def noted(folder: Path) -> list[int]:
    return [int(p.name.split("-")[1]) for p in folder.glob("child-*")]


def assert_all_reaped(pids: list[int], before: set[int]) -> None:
    for pid in pids:
        with pytest.raises(ChildProcessError):  # neither running nor a zombie: waited for already
            os.waitpid(pid, os.WNOHANG)
    assert children_of_this_process() <= before


def test_every_batch_once_and_the_results_of_one_process(tmp_path: Path) -> None:
    parent = os.getpid()
    before = children_of_this_process()

    def work(k: int) -> tuple[int, list[int]]:
        if os.getpid() == parent:  # the parent holds on until a child has done a batch
            wait_for_a_child(tmp_path)
        else:
            note(tmp_path)
        with (tmp_path / f"batch-{k}").open("a") as fh:
            fh.write(f"{os.getpid()}\n")
        return k, [k * k, -k]

    alone = [(k, [k * k, -k]) for k in range(40)]
    assert pool.map_batches(work, 40, 3) == alone
    runs = {p.name: p.read_text().split() for p in tmp_path.glob("batch-*")}
    assert sorted(runs) == sorted(f"batch-{k}" for k in range(40))
    assert all(len(pids) == 1 for pids in runs.values())  # each batch once, by one process
    children = noted(tmp_path)
    assert children
    assert {pid for pids in runs.values() for pid in pids} <= {str(parent), *map(str, children)}
    assert_all_reaped(children, before)


def test_batches_a_child_could_not_finish_are_done_by_the_parent(tmp_path: Path) -> None:
    """One child's work raises, another's process dies on a batch: the parent does those batches
    (and all the others) itself, with the same results."""
    parent = os.getpid()
    before = children_of_this_process()

    def work(k: int) -> str:
        if os.getpid() != parent:
            note(tmp_path)
            if len(noted(tmp_path)) == 1:
                raise OSError("a child cannot go on")
            os.kill(os.getpid(), signal.SIGKILL)
        wait_for_a_child(tmp_path)
        return f"batch {k}"

    assert pool.map_batches(work, 30, 3) == [f"batch {k}" for k in range(30)]
    assert_all_reaped(noted(tmp_path), before)


def test_the_parents_error_propagates_and_no_child_is_left(tmp_path: Path) -> None:
    parent = os.getpid()
    before = children_of_this_process()

    def work(k: int) -> None:
        if os.getpid() == parent:
            wait_for_a_child(tmp_path)
            raise ValueError(f"batch {k} failed")
        note(tmp_path)
        time.sleep(0.05)  # the children are still working when the parent fails

    with pytest.raises(ValueError, match="failed"):
        pool.map_batches(work, 1000, 3)
    children = noted(tmp_path)
    assert children
    assert_all_reaped(children, before)


def test_no_fork_with_threads_or_when_none_is_allowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another thread running, or fork refused: the parent does every batch, in order."""
    order: list[int] = []

    def work(k: int) -> int:
        order.append(k)
        assert os.getpid() == parent
        return -k

    parent = os.getpid()
    release = threading.Event()
    other = threading.Thread(target=release.wait, daemon=True)
    other.start()
    try:
        assert pool.map_batches(work, 5, 3) == [0, -1, -2, -3, -4]
    finally:
        release.set()
        other.join()
    assert order == [0, 1, 2, 3, 4]

    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr("session_watcher.state.pool.os.fork", no_fork)
    assert pool.map_batches(work, 5, 3) == [0, -1, -2, -3, -4]


def test_what_a_child_hands_back_cut_short_is_taken_whole_records_only(tmp_path: Path) -> None:
    sink = pool.scratch_file("test")
    records = [(3, b"abc"), (7, b""), (1, b"x" * 5000)]
    data = b"".join(k.to_bytes(4, "little") + len(d).to_bytes(8, "little") + d for k, d in records)
    sink.write(data[:-10])  # the last record cut short
    ready, told = os.pipe()
    os.write(told, b"1")
    os.close(told)
    assert pool._handed_back(sink, ready) == records[:2]
    os.close(ready)
    ready, told = os.pipe()
    os.close(told)  # a child that died before saying it was done: nothing of it is taken
    assert pool._handed_back(sink, ready) == []
    os.close(ready)
    sink.close()


def test_batches_take_the_heaviest_first_and_cover_every_group() -> None:
    weights = [5, 900, 40, 900, 7, 300]
    assert pool.batches(weights, 100) == [[1], [3], [5], [2], [4], [0]]
    grouped = pool.batches(weights, 4)  # more groups than batches: neighbours in that order share one
    assert grouped == [[1, 3], [5, 2], [4, 0]]
    assert sorted(i for b in grouped for i in b) == list(range(len(weights)))


@pytest.mark.parametrize(("files", "expected"), [
    ({"cpu.max": b"150000 100000\n"}, 1),  # v2: 1.5 cores of quota: one whole
    ({"cpu.max": b"400000 100000\n"}, 4),
    ({"cpu.max": b"50000 100000\n"}, 0),  # half a core: cores() still says 1
    ({"cpu.max": b"max 100000\n"}, None),  # v2 without a quota
    ({"cpu/cpu.cfs_quota_us": b"200000\n", "cpu/cpu.cfs_period_us": b"100000\n"}, 2),  # v1
    ({"cpu/cpu.cfs_quota_us": b"-1\n", "cpu/cpu.cfs_period_us": b"100000\n"}, None),  # v1 without one
    ({"cpu.max": b"garbage"}, None),
    ({}, None),
])
def test_the_cpu_quota_of_a_control_group(tmp_path: Path, files: dict[str, bytes], expected: int | None) -> None:
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    assert pool.quota_cores(str(tmp_path), str(tmp_path / "no-such-file")) == expected


@pytest.mark.parametrize(("own", "files", "expected"), [
    # a host's v2 hierarchy: no quota at its root, one on the process's own group in a slice
    ("0::/user.slice/job.scope\n", {"user.slice/cpu.max": b"max 100000\n",
                                    "user.slice/job.scope/cpu.max": b"200000 100000\n"}, 2),
    # ... a smaller one on a group above it
    ("0::/user.slice/job.scope\n", {"user.slice/cpu.max": b"100000 100000\n",
                                    "user.slice/job.scope/cpu.max": b"300000 100000\n"}, 1),
    # a container in its own namespace: its group is the root it sees
    ("0::/\n", {"cpu.max": b"300000 100000\n"}, 3),
    # a v2 container in a group of its own below its root (an init moved aside)
    ("0::/init\n", {"cpu.max": b"300000 100000\n", "init/cpu.max": b"max 100000\n"}, 3),
    # v1 with cpu and cpuacct in one hierarchy of that name, and no `cpu` link to it
    ("4:cpu,cpuacct:/\n", {"cpu,cpuacct/cpu.cfs_quota_us": b"300000\n",
                           "cpu,cpuacct/cpu.cfs_period_us": b"100000\n"}, 3),
    # v1 on a host: the quota on a service's group
    ("4:cpu,cpuacct:/system.slice/x.service\n2:memory:/system.slice/x.service\n",
     {"cpu,cpuacct/cpu.cfs_quota_us": b"-1\n", "cpu,cpuacct/cpu.cfs_period_us": b"100000\n",
      "cpu,cpuacct/system.slice/x.service/cpu.cfs_quota_us": b"200000\n",
      "cpu,cpuacct/system.slice/x.service/cpu.cfs_period_us": b"100000\n"}, 2),
    # a v1 container: its group named as the host sees it, its own folder at the root it sees
    ("4:cpu,cpuacct:/docker/0123abcd\n", {"cpu/cpu.cfs_quota_us": b"150000\n",
                                          "cpu/cpu.cfs_period_us": b"100000\n"}, 1),
])
def test_the_cpu_quota_of_this_process_s_own_group(
    tmp_path: Path, own: str, files: dict[str, bytes], expected: int,
) -> None:
    """The quota of the group /proc/self/cgroup names, and of those above it, where it is not at
    the hierarchy's root (a host's slices; v1's joined `cpu,cpuacct` folder): none was read before."""
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cgroup").write_text(own)
    for name, data in files.items():
        (tmp_path / "fs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "fs" / name).write_bytes(data)
    assert pool.quota_cores(str(tmp_path / "fs"), own=str(tmp_path / "proc" / "cgroup")) == expected


def test_cores_are_no_more_than_the_quota_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A container given a fraction of the machine's cores forks no more readers than its quota
    pays for (at least one)."""
    monkeypatch.setattr(pool, "quota_cores", lambda root="/sys/fs/cgroup": 0)
    assert pool.cores() == 1
    monkeypatch.setattr(pool, "quota_cores", lambda root="/sys/fs/cgroup": 1000)
    assert pool.cores() == len(os.sched_getaffinity(0))
