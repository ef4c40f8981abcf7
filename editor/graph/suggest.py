"""The nearest-name suggestion of spec 02 ("did you mean …?").

Candidates are walked in ascending byte order and compared by Levenshtein
distance over UTF-8 bytes; the first strictly smaller distance wins, so ties go
to the smallest candidate. That single best candidate is suggested only when its
distance is at most ``max(max(len(missing), len(candidate)) // 3, 1)`` bytes.

The distance search runs in RapidFuzz's C++ core with a cutoff. A shared
:class:`Suggester` also bounds the total work one validation may spend, so a
hostile document (tens of thousands of distinct dangling ids, megabyte-long ids)
cannot hang the server: once the budget is spent, remaining suggestions are
``None``.
"""

from __future__ import annotations

from collections.abc import Iterable

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

__all__ = ["Suggester", "nearest", "suggest_suffix"]

#: Upper bound on bytes × 64-byte words compared by one :class:`Suggester`.
DEFAULT_BUDGET = 200_000_000


def _threshold(missing: bytes, candidate: bytes) -> int:
    return max(max(len(missing), len(candidate)) // 3, 1)


class Suggester:
    """Nearest-candidate lookups over one candidate set, memoised and budgeted."""

    def __init__(self, candidates: Iterable[str], budget: int = DEFAULT_BUDGET) -> None:
        ordered = sorted(set(candidates))
        self._names = ordered
        self._encoded = [name.encode("utf-8", "surrogatepass") for name in ordered]
        self._total_bytes = sum(len(name) for name in self._encoded)
        self._longest = max((len(name) for name in self._encoded), default=0)
        self._budget = budget
        self._memo: dict[str, str | None] = {}

    def __call__(self, missing: str) -> str | None:
        if missing in self._memo:
            return self._memo[missing]
        answer = self._search(missing)
        self._memo[missing] = answer
        return answer

    def _search(self, missing: str) -> str | None:
        if not self._encoded:
            return None
        wanted = missing.encode("utf-8", "surrogatepass")
        cost = (self._total_bytes + len(self._encoded)) * (len(wanted) // 64 + 1)
        if cost > self._budget:
            return None
        self._budget -= cost
        # No candidate can be suggested beyond the largest threshold, so the
        # search may stop there; the winner is then checked against its own.
        cutoff = max(max(len(wanted), self._longest) // 3, 1)
        found = process.extractOne(
            wanted, self._encoded, scorer=Levenshtein.distance, score_cutoff=cutoff
        )
        if found is None:
            return None
        candidate, distance, index = found
        if distance > _threshold(wanted, candidate):
            return None
        return self._names[index]


def nearest(missing: str, candidates: Iterable[str]) -> str | None:
    """The suggestion for ``missing`` among ``candidates``, or ``None``."""
    return Suggester(candidates)(missing)


def suggest_suffix(suggestion: str | None) -> str:
    """The ``{suggest}`` fragment of a message: `` (did you mean `x`?)`` or empty."""
    return "" if suggestion is None else f" (did you mean `{suggestion}`?)"
