"""Every environment variable the settings read is documented, for whoever deploys Gatehouse:
in ``.env.example`` and in the operator's guide (``docs/operations.md``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READ = re.compile(r'env_(?:str|bool|int|list|secret)\(\s*"([A-Z0-9_]+)"')
#: The settings module, and the web server's worker class (read before Django's settings are).
READERS = ("settings.py", "server.py")
SETTINGS = sorted(
    {name for module in READERS for name in READ.findall((ROOT / "editor" / module).read_text())}
)


def test_the_settings_read_variables_at_all() -> None:
    assert {"DEBUG", "SECRET_KEY", "DATABASE_URL", "GATEHOUSE_MAX_BODY_BYTES"} <= set(SETTINGS)


@pytest.mark.parametrize("name", SETTINGS)
def test_each_variable_is_in_the_env_example(name: str) -> None:
    assert re.search(rf"\b{name}\b", (ROOT / ".env.example").read_text())


@pytest.mark.parametrize("name", SETTINGS)
def test_each_variable_is_in_the_operators_guide(name: str) -> None:
    assert f"`{name}`" in (ROOT / "docs" / "operations.md").read_text()
