"""What checking one value against one schema may cost: time, and the size of what it says.

RE2 makes each pattern linear, but a schema as a whole can still multiply its size by the
value's: ten thousand ``allOf`` branches each check the whole value, a fifty-thousand-member
``enum`` is compared with every item of an array, and jsonschema's messages quote the value
or the schema (an ``enum``'s message quotes every member, once per item that misses). Two of
jsonschema's keywords are also slower than they need to be: ``uniqueItems`` compares objects
pair by pair (quadratic: minutes for 20,000 objects), and ``enum`` compares an item with each
member in turn. So, for the closed-world validator:

* every keyword is wrapped by :func:`bounded`, which checks the caller's deadline
  (:func:`within`) before the keyword runs and shortens each message it yields past
  :data:`MAX_MESSAGE` characters (its middle becomes ``…``, so that the end, which says what
  is wrong, stays); a check past its deadline raises :class:`CheckTooSlow`. Without a
  deadline nothing is timed (the worker's checks count against the run's wall time instead,
  which its watchdog enforces);
* ``uniqueItems`` and ``enum`` are replaced by linear versions that compare values by a
  hashable key with jsonschema's own equality (``1`` equals ``1.0``, ``true`` is not ``1``,
  objects and arrays by content), with jsonschema's messages;
* callers collect at most :data:`MAX_ERRORS` violations of one check.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Any

from jsonschema.exceptions import ValidationError

__all__ = [
    "KEYWORDS",
    "MAX_ERRORS",
    "MAX_MESSAGE",
    "CheckTooSlow",
    "bounded",
    "shorten",
    "spend",
    "within",
]

#: The longest message of one violation; a longer one keeps its start and its last
#: :data:`_TAIL` characters, with ``…`` between.
MAX_MESSAGE = 1000
_TAIL = 200
#: The most violations one check reports (the first ones jsonschema finds).
MAX_ERRORS = 100

_DEADLINE: ContextVar[float | None] = ContextVar("closed_schema_deadline", default=None)


class CheckTooSlow(Exception):
    """A check went past the deadline its caller gave (:func:`within`)."""


@contextlib.contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """Checks made in this block (on this thread) must end within ``seconds``; ``None``: no
    limit."""
    token = _DEADLINE.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def spend() -> None:
    """Raises :class:`CheckTooSlow` once the current check is past its deadline."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise CheckTooSlow


def shorten(message: str) -> str:
    """``message`` itself, or its start and end with ``…`` between: at most
    :data:`MAX_MESSAGE` characters."""
    if len(message) <= MAX_MESSAGE:
        return message
    return message[: MAX_MESSAGE - _TAIL - 1] + "…" + message[-_TAIL:]


Keyword = Callable[[Any, Any, Any, Any], Iterable[ValidationError] | None]


def bounded(keyword: Keyword) -> Keyword:
    """``keyword`` checking the deadline before it runs, its messages shortened."""

    def check(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        spend()
        errors = keyword(validator, value, instance, schema)
        return None if errors is None else _shortened(errors)

    check.__name__ = check.__qualname__ = getattr(keyword, "__name__", "keyword")
    return check


def _shortened(errors: Iterable[ValidationError]) -> Iterator[ValidationError]:
    for error in errors:
        if len(error.message) > MAX_MESSAGE:
            error.message = shorten(error.message)
        yield error


# --- Equality by key -----------------------------------------------------------------------------

_NULL, _BOOLEAN, _NUMBER, _STRING, _ARRAY, _OBJECT = range(6)


def _key(value: Any) -> Any:
    """A hashable key, equal for two values exactly when jsonschema's ``equal`` says they are.

    Numbers are keyed by value (Python's ``1 == 1.0`` and their hashes agree); booleans apart
    from numbers; arrays and objects by their content. Raises ``TypeError`` for a value that is
    not JSON (the caller then falls back to jsonschema's own keyword)."""
    if value is None:
        return (_NULL,)
    if value is True or value is False:
        return (_BOOLEAN, value)
    if isinstance(value, str):
        return (_STRING, value)
    if isinstance(value, int | float):
        return (_NUMBER, value)
    if isinstance(value, list | tuple):
        return (_ARRAY, tuple(_key(item) for item in value))
    if isinstance(value, dict):
        return (_OBJECT, frozenset((key, _key(item)) for key, item in value.items()))
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _unique_items(
    validator: Any, unique: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    try:
        for item in instance:
            key = _key(item)
            if key in seen:
                yield ValidationError(f"{instance!r} has non-unique elements")
                return
            seen.add(key)
    except TypeError:
        yield from _JSONSCHEMA["uniqueItems"](validator, unique, instance, schema) or ()


#: The members of each ``enum`` seen lately, as keys: ``id(members) → (members, keys)``. The
#: entry holds ``members`` itself, so the id cannot be reused while the entry lives.
_ENUM_KEYS: dict[int, tuple[list[Any], frozenset[Any]]] = {}
_ENUM_CACHE_SIZE = 1024


def _members(enums: list[Any]) -> frozenset[Any]:
    found = _ENUM_KEYS.get(id(enums))
    if found is not None and found[0] is enums:
        return found[1]
    keys = frozenset(_key(member) for member in enums)
    if len(_ENUM_KEYS) >= _ENUM_CACHE_SIZE:
        _ENUM_KEYS.clear()
    _ENUM_KEYS[id(enums)] = (enums, keys)
    return keys


def _not_one_of(instance: Any, members: list[Any]) -> str:
    """jsonschema's ``f"{instance!r} is not one of {members!r}"``, as :func:`shorten` would
    shorten it, written without the middle of a long enum."""
    head = f"{instance!r} is not one of ["
    first = 0
    while first < len(members) and len(head) < MAX_MESSAGE - _TAIL - 1:
        head += (", " if first else "") + repr(members[first])
        first += 1
    tail, last = "]", len(members)
    while last > first and len(tail) < _TAIL + 2:
        last -= 1
        tail = repr(members[last]) + ("" if tail == "]" else ", ") + tail
    if last == first:  # the start and the end meet: the message is short enough to write
        return shorten(f"{instance!r} is not one of {members!r}")
    return head[: MAX_MESSAGE - _TAIL - 1] + "…" + tail[-_TAIL:]


def _enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not isinstance(enums, list):
        yield from _JSONSCHEMA["enum"](validator, enums, instance, schema) or ()
        return
    try:
        found = _key(instance) in _members(enums)
    except TypeError:
        yield from _JSONSCHEMA["enum"](validator, enums, instance, schema) or ()
        return
    if not found:
        yield ValidationError(_not_one_of(instance, enums))


def _jsonschema_keywords() -> dict[str, Keyword]:
    from jsonschema import Draft202012Validator

    return dict(Draft202012Validator.VALIDATORS)


_JSONSCHEMA = _jsonschema_keywords()

#: The keywords that replace jsonschema's (before :func:`bounded` wraps every keyword).
KEYWORDS: dict[str, Keyword] = {"uniqueItems": _unique_items, "enum": _enum}
