"""Whether the distributions session-watcher needs at run time are installed beside it.

install.sh skips pip where the venv holds this very build (its record names it and the hash of its
files); a dependency removed from that venv by hand since (`pip uninstall -y tomlkit`) went unseen,
and every command that needs it failed. `python -I -m session_watcher.base.depcheck` prints the ones
missing, space-separated, and exits 1 when one is (install.sh then runs pip and says which); it exits
0 printing nothing when all are there. It reads what pip wrote: each `*.dist-info` folder on
`sys.path` (an `*.egg-info` counts as installed, its requirements unread: `installed`),
session-watcher's `Requires-Dist` lines, and theirs in turn (protobuf, which the OTLP messages
need, is opentelemetry-proto's), the extras left out (`[fast]`'s stringzilla is optional:
the marker search works without it), and each one's `Version`: one installed at a version its
requirement's specifier does not take (msgspec 0.17 against `msgspec>=0.18`: PEP 440's `>=`, `<=`,
`==`, `!=`, `<`, `>` and `~=`, `satisfies`) is named by the requirement it does not meet
(`msgspec>=0.18`), pip then installing one that does; a specifier or a version it cannot read counts
as met. A requirement's environment marker is read as the Python
expression it is written as, over the environment's names (`sys_platform != 'win32'`; a version
compares as PEP 440 orders them: by its numbers, a pre-release such as 3.13.0rc1 below its release);
one it cannot read (a name not among them, an operator Python does not have, a version it cannot
place such as `3.13.*`) counts as not met, so that requirement is not asked for. No `importlib.metadata` and no
`packaging`: the check runs on every install.sh run, and those two took 10 times the time of the rest
to import.
"""

from __future__ import annotations

import os
import re
import sys

_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def normal(name: str) -> str:
    """A distribution's name as PEP 503 compares them: lower case, each run of -_. one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


# a version as PEP 440 writes it (its public part: a local `+label` compares as the same version here)
_PEP440 = re.compile(r"v?(\d+(?:\.\d+)*)(?:[-_.]?(a|alpha|b|beta|c|rc|pre|preview)[-_.]?(\d*))?"
                     r"(?:[-_.]?(post|rev|r)[-_.]?(\d*)|-(\d+))?(?:[-_.]?(dev)[-_.]?(\d*))?(?:\+[a-z0-9._-]*)?",
                     re.IGNORECASE)
_PHASE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_Key = tuple[tuple[int, ...], tuple[int, int, int], int, tuple[int, int]]


def version_key(text: str) -> _Key:
    """A version's place in PEP 440's order: its release numbers (trailing zeros left out: 3.13 is
    3.13.0), then a pre-release below its release (3.13.0rc1 < 3.13.0; a, b, rc in that order; a dev
    release of none below them all), a post-release above, a dev release below the one it leads to.
    ValueError for text that is no such version (`3.13.*`, a word): the marker is then unread."""
    m = _PEP440.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"not a version: {text!r}")
    rel, phase, pre_n, post, post_n, post_bare, dev, dev_n = m.groups()
    release = tuple(int(p) for p in rel.split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    post_at = int(post_n or 0) if post else int(post_bare) if post_bare else -1
    if phase:
        pre = (0, _PHASE[phase.lower()], int(pre_n or 0))
    elif dev and post_at < 0:
        pre = (-1, 0, 0)  # X.devN: before X's alphas
    else:
        pre = (1, 0, 0)  # the release itself
    return release, pre, post_at, (0, int(dev_n or 0)) if dev else (1, 0)


class Version(str):
    """A version in a marker (`python_version`, `python_full_version`): compared as PEP 440 orders
    them, not as text ("3.11" > "3.9"; "3.13.0rc1" < "3.13.0")."""

    __slots__ = ()

    def _key(self, other: object) -> tuple[_Key, _Key]:
        return version_key(self), version_key(str(other))

    def __lt__(self, other: object) -> bool:
        """PEP 440's exclusive `<`: never a pre-release of the version named (3.13.0rc1 is not
        `< "3.13.0"`, as pip reads it: nor is it `>= "3.13.0"`), unless that one is a pre-release."""
        a, b = self._key(other)
        return a < b and not (b[1][0] == 1 and b[3][0] == 1 and a[1][0] < 1 and a[0] == b[0])

    def __gt__(self, other: object) -> bool:
        """PEP 440's exclusive `>`: never a post-release of the version named, unless that one is one."""
        a, b = self._key(other)
        return a > b and not (b[2] < 0 and a[2] >= 0 and a[0] == b[0])

    def __le__(self, other: object) -> bool:
        a, b = self._key(other)
        return a <= b

    def __ge__(self, other: object) -> bool:
        a, b = self._key(other)
        return a >= b

    def __eq__(self, other: object) -> bool:
        a, b = self._key(other)
        return a == b

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return str.__hash__(self)


def environment() -> dict[str, object]:
    """The marker names (PEP 508) this interpreter answers, `extra` empty (no extra asked for)."""
    uname = os.uname() if hasattr(os, "uname") else None
    system = {"linux": "Linux", "darwin": "Darwin", "win32": "Windows"}.get(
        sys.platform, uname.sysname if uname else sys.platform)
    info = sys.version_info
    # as `platform.python_version()` writes it (3.13.0rc1), without its import
    pre = {"alpha": "a", "beta": "b", "candidate": "rc"}.get(info.releaselevel, "")
    return {
        "sys_platform": sys.platform, "platform_system": system, "os_name": os.name,
        "platform_machine": uname.machine if uname else "", "implementation_name": sys.implementation.name,
        "platform_python_implementation": {"cpython": "CPython", "pypy": "PyPy"}.get(
            sys.implementation.name, sys.implementation.name),
        "python_version": Version(f"{info.major}.{info.minor}"),
        "python_full_version": Version(f"{info.major}.{info.minor}.{info.micro}{pre}{info.serial if pre else ''}"),
        "extra": "",
    }


def marker_holds(marker: str, env: dict[str, object]) -> bool:
    """Whether a requirement's marker is met in `env`; one this cannot read is not."""
    try:
        return bool(eval(marker, {"__builtins__": {}}, dict(env)))  # noqa: S307  # names and literals only
    except Exception:  # an unreadable marker: the requirement is not asked for
        return False


def installed(path: list[str]) -> dict[str, str]:
    """Each distribution's name (normal) and its metadata file, the first found along `path`. An
    `.egg-info` (a legacy `setup.py develop`, an `-e` install pip made that way: `name.egg-info`, or
    `name-1.0-py3.11.egg-info`, `-` in a name written `_`) counts as installed too, as pip counts it:
    its requirements (requires.txt, no Requires-Dist) are not read. Not counted, it was named
    missing on every run, and pip, which found it there, changed nothing: pip on each run."""
    found: dict[str, str] = {}
    for folder in path:
        try:
            entries = os.listdir(folder or ".")
        except OSError:
            continue
        for entry in entries:
            if entry.endswith(".dist-info"):
                name = normal(entry[: -len(".dist-info")].rsplit("-", 1)[0])
                found.setdefault(name, os.path.join(folder, entry, "METADATA"))
            elif entry.endswith(".egg-info"):
                name = normal(entry[: -len(".egg-info")].split("-", 1)[0])
                found.setdefault(name, os.path.join(folder, entry, "PKG-INFO"))
    return found


def headers(metadata: str) -> tuple[str | None, list[str]]:
    """A METADATA (or PKG-INFO) file's `Version` (None: none read) and its `Requires-Dist` values
    (its headers: up to the first empty line)."""
    version: str | None = None
    out: list[str] = []
    try:
        with open(metadata, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.strip():
                    break
                if line[:14].lower() == "requires-dist:":
                    out.append(line[14:].strip())
                elif line[:8].lower() == "version:":
                    version = line[8:].strip()
    except OSError:
        pass
    return version, out


_CLAUSE = re.compile(r"\s*(~=|==|!=|<=|>=|<|>)\s*(\S+)\s*")


def satisfies(version: str, spec: str) -> bool:
    """Whether an installed `version` meets a requirement's specifier (`>=0.18`, `<8.0,>=5.0`), each
    clause compared as PEP 440 orders versions (`Version`; `~=2.2` is `>=2.2` and `==2.*`). A clause
    it cannot read (`===`, `==1.*`, a local version such as `!=2.0+cpu`, whose label `Version` does not
    compare: 2.0 would be taken for it), or a version it cannot place, counts as met, as a marker it
    cannot read leaves its requirement out: pip decides then."""
    for clause in spec.split(","):
        m = _CLAUSE.fullmatch(clause)
        if m is None or "+" in m.group(2):
            continue
        op, target = m.groups()
        have = Version(version)
        try:
            if op == "~=":
                release = _PEP440.fullmatch(target)
                prefix = tuple(int(p) for p in release.group(1).split(".")[:-1]) if release else ()
                if not prefix:  # `~=1` is no specifier
                    continue
                numbers = version_key(version)[0] + (0,) * len(prefix)
                ok = have >= target and numbers[:len(prefix)] == prefix
            else:
                ok = {"==": have.__eq__, "!=": have.__ne__, "<=": have.__le__, ">=": have.__ge__,
                      "<": have.__lt__, ">": have.__gt__}[op](target)
        except ValueError:
            continue
        if not ok:
            return False
    return True


def specifier(head: str, end: int) -> str:
    """The version specifier of a requirement (what follows its name, at `end` in `head`): its
    extras and the brackets of the older spelling (`protobuf (<8.0,>=5.0)`) left out; "" for none
    (or a URL, `name @ https://...`)."""
    rest = head[end:].strip()
    if rest.startswith("["):
        rest = rest.partition("]")[2].strip()
    if rest.startswith("@"):
        return ""
    return rest.removeprefix("(").removesuffix(")").strip()


def missing(path: list[str], env: dict[str, object], top: str = "session-watcher") -> list[str]:
    """The distributions `top` needs, itself and through those it needs, not installed along `path`;
    one installed at a version a requirement of them does not take (`satisfies`), by the name and
    the specifier it does not meet (`msgspec>=0.18`): pip installs one that does."""
    have = installed(path)
    lacking: list[str] = []
    seen = {normal(top)}
    todo = [normal(top)]
    wanted: list[tuple[str, str]] = []  # (name, specifier) of each requirement asked for
    versions: dict[str, str | None] = {}
    while todo:
        name = todo.pop(0)
        if name not in have:
            lacking.append(name)
            continue
        versions[name], requires = headers(have[name])
        for req in requires:
            head, _, marker = req.partition(";")
            if marker.strip() and not marker_holds(marker.strip(), env):
                continue
            match = _NAME.match(head)
            if not match:
                continue
            dep = normal(match.group(1))
            spec = specifier(head, match.end())
            if spec:
                wanted.append((dep, spec))
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    named: set[str] = set()
    for dep, spec in wanted:
        version = versions.get(dep)
        if version is not None and dep not in named and not satisfies(version, spec):
            named.add(dep)
            lacking.append(dep + "".join(spec.split()))
    return lacking


def main() -> int:
    lacking = missing(sys.path, environment())
    if lacking:
        print(" ".join(lacking))
    return 1 if lacking else 0


if __name__ == "__main__":
    raise SystemExit(main())
