"""Fixtures of the end-to-end suite: the pinned client (installed once per run), a throwaway world."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from .harness import ClientUnavailable, World, find_client, make_world

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    try:
        return find_client()
    except ClientUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"e2e: the real Claude Code CLI is required under CI and is missing: {exc}")
        pytest.skip(f"e2e SKIPPED LOUDLY: the real Claude Code CLI is not available here: {exc}")


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)
