"""Where the reference's examples are, and the mark for the tests that need them.

They are read from ``shared/reference/examples`` beside the checkout: the nearest folder above
the checkout that has one (a worktree may sit a level deeper than a clone). A test marked
``needs_examples()`` is skipped when they are absent, with a reason naming where they were
looked for; with ``GATEHOUSE_TEST_EXPECT_EXAMPLES=1`` (which ``.ci/run`` sets when it finds them
from its own checkout) it fails instead, so a pass that should have run the examples cannot
quietly skip them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = [
    "EXAMPLES",
    "EXPECT_EXAMPLES",
    "LOOKED_IN",
    "REFERENCE",
    "absent_examples_message",
    "needs_examples",
]

ROOT = Path(__file__).resolve().parents[1]
#: Every place looked in, nearest first.
LOOKED_IN = tuple(folder / "shared" / "reference" / "examples" for folder in ROOT.parents)
EXAMPLES = next((folder for folder in LOOKED_IN if folder.is_dir()), LOOKED_IN[0])
#: The examples' agent files name their servers relative to the reference's root.
REFERENCE = EXAMPLES.parent
EXPECT_EXAMPLES = os.environ.get("GATEHOUSE_TEST_EXPECT_EXAMPLES", "") == "1"


def absent_examples_message(missing: Path) -> str:
    return (
        f"the reference's examples are absent: no {missing} "
        f"(looked for shared/reference/examples in {', '.join(map(str, LOOKED_IN))})"
    )


def needs_examples(*paths: Path) -> pytest.MarkDecorator:
    """Skip (or, with ``GATEHOUSE_TEST_EXPECT_EXAMPLES=1``, fail) unless the examples folder and
    each of ``paths`` exist."""
    missing = next((path for path in (EXAMPLES, *paths) if not path.exists()), None)
    if missing is None:
        return pytest.mark.skipif(False, reason="the reference's examples are here")
    if EXPECT_EXAMPLES:
        return pytest.mark.reference_examples_missing(
            "GATEHOUSE_TEST_EXPECT_EXAMPLES=1, but " + absent_examples_message(missing)
        )
    return pytest.mark.skip(reason=absent_examples_message(missing))
