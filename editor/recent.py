"""A small thread-safe memory of the last few values made, by key (least recently used out)."""

from __future__ import annotations

import threading
from collections import OrderedDict

__all__ = ["Recent"]


class Recent[Key, Value]:
    """The last ``kept`` values put, by key; reading one makes it the most recent."""

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self._values: OrderedDict[Key, Value] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Key) -> Value | None:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: Key, value: Value) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.kept:
                self._values.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
