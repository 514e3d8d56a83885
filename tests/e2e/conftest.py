"""Fixtures of the end-to-end suite: the pinned client (installed once per run), a throwaway world."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from . import plugin
from .harness import CLIENT_VERSION, ClientUnavailable, World, find_client, make_world

if TYPE_CHECKING:
    from pathlib import Path


FIGURES: dict[str, str] = {}  # printed at the end of the run (tests/conftest.py)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under pytest-xdist a worker's figures go to the controller, which prints them (tests/conftest.py)."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None and FIGURES:
        out["e2e_figures"] = dict(FIGURES)


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    try:
        binary = find_client()
    except ClientUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"e2e: the real Claude Code CLI is required under CI and is missing: {exc}")
        pytest.skip(f"e2e SKIPPED LOUDLY: the real Claude Code CLI is not available here: {exc}")
    FIGURES["client"] = f"@anthropic-ai/claude-code {CLIENT_VERSION} at {binary}"
    return binary


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> World:
    """One user's world with the plugin installed by the README's command (once per run)."""
    world = make_world(tmp_path_factory.mktemp("installed"))
    plugin.write_config(world)
    proc = plugin.install(world)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return world
