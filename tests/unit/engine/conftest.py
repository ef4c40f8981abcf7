"""Fixtures of the engine's unit tests (spec 04)."""

from __future__ import annotations

import pytest

from tests.unit.engine.harness import Harness


@pytest.fixture
def h() -> Harness:
    return Harness()
