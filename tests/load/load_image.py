"""What the Docker image's runtime stage sets for its processes' memory (``MALLOC_*``), so that
the load test and the hostile corpus run gunicorn and the workers as the image runs them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def image_environment() -> dict[str, str]:
    """The ``MALLOC_*`` variables of the Dockerfile's runtime ``ENV``."""
    runtime = (ROOT / "Dockerfile").read_text().rsplit("\nFROM ", 1)[-1]
    found = dict(re.findall(r"\b(MALLOC_[A-Z_]+)=(\S+)", runtime))
    assert found, "the Dockerfile's runtime stage sets no MALLOC_ variable"
    return found
