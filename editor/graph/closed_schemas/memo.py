"""Memos of what schemas cost to read, keyed by a digest of their canonical bytes.

A memo keyed by the canonical bytes themselves keeps those bytes for as long as the entry
lives: up to a megabyte per schema (more, as orjson allocates them), and thousands of entries.
A signed-in user could fill a web process's memory by asking for the validation of thousands
of different large schemas (150 requests of 800 kB added 290 MB). Keyed by SHA-256 (32 bytes),
an entry holds only what it remembers; :class:`DigestMemo` also bounds how much source text
the remembered values may stand for, for values that hold their schema (a compiled schema).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["CacheInfo", "DigestMemo"]


class CacheInfo(NamedTuple):
    """As :func:`functools.lru_cache` reports it."""

    hits: int
    misses: int
    maxsize: int
    currsize: int


class DigestMemo[T]:
    """At most ``maxsize`` values, standing for at most ``max_bytes`` of canonical text in all
    (``None``: no such bound), the least recently used forgotten first."""

    def __init__(self, maxsize: int, max_bytes: int | None = None) -> None:
        self.maxsize = maxsize
        self.max_bytes = max_bytes
        self._entries: OrderedDict[bytes, tuple[T, int]] = OrderedDict()
        self._bytes = 0
        self._hits = self._misses = 0
        self._lock = threading.Lock()

    def get(self, text: bytes, make: Callable[[], T]) -> T:
        """The value remembered for ``text``, or ``make()``'s, remembered."""
        digest = hashlib.sha256(text).digest()
        with self._lock:
            found = self._entries.get(digest)
            if found is not None:
                self._entries.move_to_end(digest)
                self._hits += 1
                return found[0]
            self._misses += 1
        value = make()  # outside the lock: two threads may both make it, once each
        size = len(text)
        with self._lock:
            if digest not in self._entries:
                self._entries[digest] = (value, size)
                self._bytes += size
                while len(self._entries) > self.maxsize or (
                    self.max_bytes is not None
                    and self._bytes > self.max_bytes
                    and len(self._entries) > 1
                ):
                    _, (_, dropped) = self._entries.popitem(last=False)
                    self._bytes -= dropped
        return value

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self._hits, self._misses, self.maxsize, len(self._entries))
