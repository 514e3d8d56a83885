"""session_watcher.base.depcheck: the distributions a build needs, read from the dist-info folders pip
wrote (install.sh's check that a venv holding this very build lacks none)."""

from __future__ import annotations

import sys
from itertools import pairwise
from typing import TYPE_CHECKING

from hypothesis import given, settings
from hypothesis import strategies as st

from session_watcher.base.depcheck import Version, environment, marker_holds, missing, satisfies

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

LINUX: dict[str, object] = {**environment(), "sys_platform": "linux", "platform_system": "Linux",
                            "python_version": Version("3.11")}


def dist(site: Path, folder: str, *requires: str) -> None:
    """A dist-info folder as pip writes it: METADATA's headers (its version the folder's), a blank
    line, the description."""
    (site / folder).mkdir(parents=True)
    head = "".join(f"Requires-Dist: {r}\n" for r in requires)
    version = folder.removesuffix(".dist-info").rpartition("-")[2]
    (site / folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: x\nVersion: {version}\n{head}\n"
                                            "Requires-Dist: not-a-header-in-the-description\nVersion: 0\n")


def replace(site: Path, old: str, new: str) -> None:
    """The dist-info folder `old` gone and `new` there instead, as pip leaves another version."""
    (site / old / "METADATA").unlink()
    (site / old).rmdir()
    dist(site, new)


def venv(site: Path) -> None:
    """session-watcher's requirements as its METADATA has them, and theirs, all installed."""
    dist(site, "session_watcher-0.1.0.dist-info", "platformdirs>=4.12", "tomlkit>=0.12",
         "desktop-notifier>=6",
         "dbus-fast>=2; sys_platform != \"darwin\" and sys_platform != \"win32\"",
         "opentelemetry-proto>=1.27", "stringzilla>=5; extra == \"fast\"", "pytest>=8; extra == \"dev\"")
    dist(site, "platformdirs-4.14.9.dist-info")
    dist(site, "tomlkit-0.15.3.dist-info")
    dist(site, "desktop_notifier-6.2.0.dist-info", "bidict", "rubicon-objc>=0.4; sys_platform == \"darwin\"",
         "typing-extensions>=4; python_version < \"3.9\"")
    dist(site, "bidict-0.24.1.dist-info")
    dist(site, "dbus_fast-5.2.0.dist-info")
    dist(site, "opentelemetry_proto-1.45.2.dist-info", "protobuf (<8.0,>=5.0)")
    dist(site, "protobuf-7.36.2.dist-info")


class TestMissing:
    def test_all_there_is_nothing_missing(self, tmp_path: Path) -> None:
        """Every requirement installed: none named (the extras, the other platforms' ones not asked)."""
        venv(tmp_path)
        assert missing([str(tmp_path)], LINUX) == []

    def test_one_removed_by_hand_is_named(self, tmp_path: Path) -> None:
        """`pip uninstall -y tomlkit` took its dist-info folder: tomlkit is named."""
        venv(tmp_path)
        (tmp_path / "tomlkit-0.15.3.dist-info" / "METADATA").unlink()
        (tmp_path / "tomlkit-0.15.3.dist-info").rmdir()
        assert missing([str(tmp_path)], LINUX) == ["tomlkit"]

    def test_a_dependency_of_a_dependency_is_named(self, tmp_path: Path) -> None:
        """protobuf is opentelemetry-proto's requirement (the OTLP messages need it), by its own
        metadata's spelling ("protobuf (<8.0,>=5.0)")."""
        venv(tmp_path)
        (tmp_path / "protobuf-7.36.2.dist-info" / "METADATA").unlink()
        (tmp_path / "protobuf-7.36.2.dist-info").rmdir()
        assert missing([str(tmp_path)], LINUX) == ["protobuf"]

    def test_a_platforms_requirement_is_asked_only_there(self, tmp_path: Path) -> None:
        """dbus-fast (not on macOS) missing is named on Linux, not on macOS; rubicon-objc (macOS only)
        is asked on macOS alone."""
        venv(tmp_path)
        (tmp_path / "dbus_fast-5.2.0.dist-info" / "METADATA").unlink()
        (tmp_path / "dbus_fast-5.2.0.dist-info").rmdir()
        assert missing([str(tmp_path)], LINUX) == ["dbus-fast"]
        mac = {**LINUX, "sys_platform": "darwin", "platform_system": "Darwin"}
        assert missing([str(tmp_path)], mac) == ["rubicon-objc"]

    def test_names_compare_as_pep_503_says(self, tmp_path: Path) -> None:
        """desktop-notifier is found as desktop_notifier-6.2.0.dist-info; Typing_Extensions as typing-extensions."""
        venv(tmp_path)
        old = {**LINUX, "python_version": Version("3.8")}
        assert missing([str(tmp_path)], old) == ["typing-extensions"]
        dist(tmp_path, "Typing_Extensions-4.16.0.dist-info")
        assert missing([str(tmp_path)], old) == []

    def test_the_build_itself_missing_is_named(self, tmp_path: Path) -> None:
        """No session-watcher dist-info along the path (a venv pip never finished): it is named."""
        assert missing([str(tmp_path), str(tmp_path / "not-there")], LINUX) == ["session-watcher"]

    def test_the_first_along_the_path_is_read(self, tmp_path: Path) -> None:
        """Two folders with a session-watcher: the first one's requirements count, as imports go."""
        first, second = tmp_path / "a", tmp_path / "b"
        dist(first, "session_watcher-0.2.0.dist-info", "tomlkit")
        venv(second)
        assert missing([str(first), str(second)], LINUX) == []
        dist(first, "session_watcher_extra-1.dist-info")  # another name: no bearing
        (first / "session_watcher-0.2.0.dist-info" / "METADATA").write_text("Requires-Dist: nowhere\n")
        assert missing([str(first), str(second)], LINUX) == ["nowhere"]

    def test_an_egg_info_counts_as_installed(self, tmp_path: Path) -> None:
        """tomlkit installed the legacy way (`setup.py develop`: tomlkit.egg-info in its source folder,
        on the path), or as an egg-info with its version: pip takes it for there and installs nothing,
        so naming it missing had every run run pip again, to no end."""
        venv(tmp_path)
        (tmp_path / "tomlkit-0.15.3.dist-info" / "METADATA").unlink()
        (tmp_path / "tomlkit-0.15.3.dist-info").rmdir()
        source = tmp_path / "src"
        (source / "tomlkit.egg-info").mkdir(parents=True)
        (source / "tomlkit.egg-info" / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: tomlkit\n")
        assert missing([str(tmp_path)], LINUX) == ["tomlkit"]
        assert missing([str(tmp_path), str(source)], LINUX) == []
        (tmp_path / "protobuf-7.36.2.dist-info" / "METADATA").unlink()
        (tmp_path / "protobuf-7.36.2.dist-info").rmdir()
        (tmp_path / "protobuf-7.36.2-py3.11.egg-info").write_text("Name: protobuf\n")  # a file, as distutils wrote it
        assert missing([str(tmp_path), str(source)], LINUX) == []

    def test_a_version_outside_the_requirement_is_named(self, tmp_path: Path) -> None:
        """A dependency there at a version its requirement does not take (`tomlkit>=0.12` with tomlkit
        0.11.8; protobuf 8.1 against opentelemetry-proto's `(<8.0,>=5.0)`, the older spelling) counted
        as installed, and install.sh ran no pip: each is named now by the requirement it does not
        meet; a version that meets it is named no more."""
        venv(tmp_path)
        replace(tmp_path, "tomlkit-0.15.3.dist-info", "tomlkit-0.11.8.dist-info")
        assert missing([str(tmp_path)], LINUX) == ["tomlkit>=0.12"]
        replace(tmp_path, "protobuf-7.36.2.dist-info", "protobuf-8.1.0.dist-info")
        assert missing([str(tmp_path)], LINUX) == ["tomlkit>=0.12", "protobuf<8.0,>=5.0"]
        replace(tmp_path, "tomlkit-0.11.8.dist-info", "tomlkit-0.12.0.dist-info")
        replace(tmp_path, "protobuf-8.1.0.dist-info", "protobuf-5.0.dist-info")
        assert missing([str(tmp_path)], LINUX) == []

    def test_a_pre_release_below_the_version_asked_is_named(self, tmp_path: Path) -> None:
        """PEP 440: 1.27.0rc1 comes before 1.27 (`>=1.27` not met); a post-release after it."""
        venv(tmp_path)
        replace(tmp_path, "opentelemetry_proto-1.45.2.dist-info", "opentelemetry_proto-1.27.0rc1.dist-info")
        assert missing([str(tmp_path)], LINUX) == ["opentelemetry-proto>=1.27"]
        replace(tmp_path, "opentelemetry_proto-1.27.0rc1.dist-info", "opentelemetry_proto-1.27.post1.dist-info")
        assert missing([str(tmp_path)], LINUX) == []

    def test_a_specifier_or_a_version_it_cannot_read_counts_as_met(self, tmp_path: Path) -> None:
        """As a marker it cannot read leaves its requirement out: `===`, a wildcard, a version it
        cannot place, a metadata file without a version (an egg-info's) count as met; pip decides."""
        venv(tmp_path)
        meta = tmp_path / "session_watcher-0.1.0.dist-info" / "METADATA"
        meta.write_text(meta.read_text().replace("tomlkit>=0.12", "tomlkit===9 ; python_version >= '3'", 1)
                        .replace("platformdirs>=4.12", "platformdirs ==9.*", 1))
        assert missing([str(tmp_path)], LINUX) == []
        replace(tmp_path, "bidict-0.24.1.dist-info", "bidict-latest.dist-info")
        dist(tmp_path, "needs_bidict-1.0.dist-info")
        meta.write_text(meta.read_text().replace("Requires-Dist: tomlkit", "Requires-Dist: needs-bidict\n"
                                                 "Requires-Dist: tomlkit", 1))
        (tmp_path / "needs_bidict-1.0.dist-info" / "METADATA").write_text("Version: 1.0\nRequires-Dist: bidict>=1\n")
        assert missing([str(tmp_path)], LINUX) == []  # "latest": no version it can place
        (tmp_path / "bidict-latest.dist-info" / "METADATA").write_text("Name: bidict\n")  # no version at all
        assert missing([str(tmp_path)], LINUX) == []

    def test_a_compatible_release_is_its_version_and_the_same_series(self, tmp_path: Path) -> None:
        """`~=0.23.0`: 0.23.5 meets it, 0.24.1 (another series) does not; `~=6.1`: 6.2 does, 7.0 not."""
        venv(tmp_path)
        meta = tmp_path / "desktop_notifier-6.2.0.dist-info" / "METADATA"
        meta.write_text(meta.read_text().replace("Requires-Dist: bidict", "Requires-Dist: bidict~=0.23.0", 1))
        assert missing([str(tmp_path)], LINUX) == ["bidict~=0.23.0"]
        replace(tmp_path, "bidict-0.24.1.dist-info", "bidict-0.23.5.dist-info")
        assert missing([str(tmp_path)], LINUX) == []
        top = tmp_path / "session_watcher-0.1.0.dist-info" / "METADATA"
        top.write_text(top.read_text().replace("desktop-notifier>=6", "desktop-notifier~=6.1", 1))
        assert missing([str(tmp_path)], LINUX) == []
        replace(tmp_path, "desktop_notifier-6.2.0.dist-info", "desktop_notifier-7.0.dist-info")
        assert missing([str(tmp_path)], LINUX) == ["desktop-notifier~=6.1"]

    def test_this_interpreter_finds_what_it_runs_with(self) -> None:
        """The test environment's own sys.path holds session-watcher and all it needs (installed
        editable: its dist-info is in site-packages)."""
        assert missing(sys.path, environment()) == []


class TestSatisfies:
    def test_the_simple_operators_as_pep_440_reads_them(self) -> None:
        """Each operator, with pre-, post- and local versions where PEP 440 says something of them."""
        met = [("0.18", ">=0.18"), ("0.19.0", ">=0.18"), ("7.36.2", "<8.0,>=5.0"), ("1.0", "==1.0.0"),
               ("1.0+local", "==1.0"), ("1.1", "!=1.0"), ("2.0", "<=2.0"), ("1.0.post1", ">=1.0"),
               ("1.0rc1", "<1.0rc2"), ("1.4.5", "~=1.4.0"), ("1.9", "~=1.4"), ("2", ""), ("2", " > 1 , < 3 ")]
        unmet = [("0.17.1", ">=0.18"), ("0.18rc1", ">=0.18"), ("8.0", "<8.0,>=5.0"), ("8.0rc1", "<8.0"),
                 ("1.1", "==1.0"), ("1.0", "!=1.0.0"), ("2.0.1", "<=2.0"), ("1.0.post1", ">1.0"), ("1.5", "~=1.4.0"),
                 ("2.0", "~=1.4"), ("1.3", "~=1.4")]
        assert [spec for version, spec in met if not satisfies(version, spec)] == []
        assert [spec for version, spec in unmet if satisfies(version, spec)] == []

    def test_what_it_cannot_read_counts_as_met(self) -> None:
        for version, spec in (("1.0", "===2.0"), ("1.0", "==2.*"), ("1.0", "~=2"), ("1.0", ">=two"),
                              ("latest", ">=2"), ("1.0", "@ https://example.org/x.whl")):
            assert satisfies(version, spec), (version, spec)

    def test_a_local_version_in_a_specifier_counts_as_met(self) -> None:
        """`!=2.0+cpu`: 2.0 and 2.0+cu121 meet it (PEP 440: the label must match), but its label
        went unread, 2.0 taken for it, and such a venv named on every run (pip, which finds it met,
        changing nothing); read as met, as the other clauses it cannot read (2.0+cpu too: pip decides)."""
        for version in ("2.0", "2.0+cu121", "2.0+cpu"):
            assert satisfies(version, "!=2.0+cpu"), version
            assert satisfies(version, ">=1,!=2.0+cpu"), version
        assert not satisfies("2.0+cu121", ">=3,!=2.0+cpu")  # the clause it reads still counts


# versions as PEP 440 writes them, every spelling it normalizes (pre, post and dev releases, a local
# label), no epoch (`1!2.0`: one the check cannot place, counted as met); specifiers whose reading every
# `packaging` since 21 (pip's) shares: `>` and `~=` of a final release (packaging 26 reads `>1.0a1` of
# 1.0.post1 otherwise), no post or dev release, no local label (neither read: counted as met)
_RELEASE = st.lists(st.integers(0, 3), min_size=1, max_size=4).map(lambda p: ".".join(map(str, p)))
_PRE = st.sampled_from(["", "", "a1", "b2", "rc1", "rc", "c1", "alpha1", "-beta.2", "pre1", "preview0", ".a0"])
_VERSION = st.tuples(_RELEASE, _PRE, st.sampled_from(["", "", ".post0", ".post1", "-1", "post", ".r2", "-rev1"]),
                     st.sampled_from(["", "", ".dev0", ".dev1", "dev", "-dev2"]),
                     st.sampled_from(["", "", "+local", "+1", "+ubuntu-1"])).map("".join)
_CLAUSES = st.one_of(
    st.tuples(st.sampled_from(["==", "!=", "<=", ">=", "<"]), st.tuples(_RELEASE, _PRE).map("".join)).map("".join),
    st.tuples(st.just(">"), _RELEASE).map("".join),
    st.tuples(_RELEASE, st.integers(0, 3)).map(lambda p: f"~={p[0]}.{p[1]}"))  # `~=1` is no specifier


@settings(max_examples=400, deadline=None)
@given(_VERSION, st.lists(_CLAUSES, min_size=1, max_size=3).map(",".join))
def test_satisfies_reads_a_specifier_as_packaging_does(version: str, spec: str) -> None:
    """`satisfies` against `packaging` (what pip decides with; installed versions as pip reads them,
    a pre-release taken), over every operator and every spelling of a version both read the same."""
    from packaging.specifiers import SpecifierSet

    assert satisfies(version, spec) == SpecifierSet(spec).contains(version, prereleases=True)


class TestMarkers:
    def test_platform_markers(self) -> None:
        """sys_platform compared as text; `and`/`or` as written."""
        both = "sys_platform != 'darwin' and sys_platform != 'win32'"
        assert marker_holds(both, LINUX)
        assert not marker_holds(both, {**LINUX, "sys_platform": "win32"})
        assert marker_holds('sys_platform == "darwin" or os_name == "posix"', {**LINUX, "os_name": "posix"})

    def test_versions_compare_by_their_numbers(self) -> None:
        """python_version "3.11" is above "3.9" (text would say below), on either side of the operator."""
        assert marker_holds('python_version >= "3.9"', LINUX)
        assert not marker_holds('python_version < "3.9"', LINUX)
        assert marker_holds('"3.9" <= python_version', LINUX)
        assert not marker_holds('"3.12" <= python_version', LINUX)
        assert marker_holds('python_version == "3.11"', LINUX)

    def test_an_extra_is_not_asked_and_an_unreadable_marker_not_met(self) -> None:
        """`extra == "fast"`: no extra is asked for; `~=` (no Python operator) and an unknown name:
        not met."""
        assert not marker_holds('extra == "fast"', LINUX)
        assert not marker_holds('python_version ~= "3.8"', LINUX)
        assert not marker_holds('platform_release == "6.1"', LINUX)
        assert not marker_holds('__import__("os")', LINUX)


RC: dict[str, object] = {**LINUX, "python_version": Version("3.13"), "python_full_version": Version("3.13.0rc1")}


class TestPreReleases:
    """On a pre-release Python (3.13.0rc1) `python_full_version` read 3.13.0: a requirement marked
    `python_full_version >= "3.13.0"`, which pip leaves out there (PEP 440: 3.13.0rc1 comes before
    3.13.0), was asked for, never installed, named missing on every run: pip on each install.sh run."""

    def test_this_interpreters_full_version_names_its_pre_release(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from collections import namedtuple

        info = namedtuple("info", "major minor micro releaselevel serial")
        for level, serial, full in (("candidate", 1, "3.13.0rc1"), ("beta", 2, "3.13.0b2"), ("alpha", 3, "3.13.0a3"),
                                    ("final", 0, "3.13.0")):
            monkeypatch.setattr(sys, "version_info", info(3, 13, 0, level, serial))
            assert str(environment()["python_full_version"]) == full

    def test_a_release_candidate_comes_before_its_release(self) -> None:
        assert not marker_holds('python_full_version >= "3.13.0"', RC)
        assert not marker_holds('"3.13.0" <= python_full_version', RC)
        assert not marker_holds('python_full_version == "3.13.0"', RC)
        assert marker_holds('python_full_version != "3.13.0"', RC)
        assert marker_holds('python_full_version >= "3.13.0rc1"', RC)
        assert marker_holds('python_full_version > "3.13.0b4"', RC)
        assert marker_holds('python_full_version >= "3.12"', RC)
        assert marker_holds('python_full_version == "3.13.0rc1"', RC)
        assert marker_holds('python_version == "3.13.0"', RC)  # 3.13 is 3.13.0
        # PEP 440's exclusive `<`: not a pre-release of the version named, as pip reads it
        assert not marker_holds('python_full_version < "3.13.0"', RC)
        assert marker_holds('python_full_version < "3.13.0rc2"', RC)
        assert marker_holds('python_full_version < "3.13.1"', RC)

    def test_versions_order_as_pep_440_says(self) -> None:
        order = ["3.13.0.dev1", "3.13.0a1", "3.13.0a2.dev1", "3.13.0a2", "3.13.0b1", "3.13.0rc1", "3.13.0",
                 "3.13.0.post1", "3.13.1"]
        for lo, hi in pairwise(order):
            assert Version(lo) <= Version(hi), (lo, hi)
            assert not Version(hi) <= Version(lo), (lo, hi)
        assert Version("3.13") == Version("3.13.0") == Version("3.13.0.0")
        assert Version("3.13.0c1") == Version("3.13.0rc1") == Version("3.13.0-rc.1")

    def test_a_version_it_cannot_place_is_not_met(self) -> None:
        assert not marker_holds('python_full_version == "3.13.*"', RC)
        assert not marker_holds('python_full_version >= "three"', RC)

    def test_a_requirement_pip_leaves_out_on_a_release_candidate_is_not_named(self, tmp_path: Path) -> None:
        venv(tmp_path)
        meta = tmp_path / "session_watcher-0.1.0.dist-info" / "METADATA"
        meta.write_text(meta.read_text().replace(
            "Requires-Dist: platformdirs", 'Requires-Dist: later-only>=1; python_full_version >= "3.13.0"\n'
            "Requires-Dist: platformdirs", 1))
        assert missing([str(tmp_path)], RC) == []
        assert missing([str(tmp_path)], {**RC, "python_full_version": Version("3.13.0")}) == ["later-only"]
