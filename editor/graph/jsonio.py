"""Strict JSON in, canonical JSON out.

:func:`read_json` reads JSON the way the reference implementation's parser
does (spec 01, *Strict parsing*): it refuses what Python's :mod:`json` quietly
accepts — a byte-order mark, invalid UTF-8, lone surrogate escapes, ``NaN`` and
``Infinity``, duplicate object keys, nesting 128 levels deep — and it reads
numbers as the reference does (``-0`` is the float ``-0.0``; an integer outside
i64 ∪ u64 is a float; a number that overflows a double is refused).

:func:`canonical_json` writes the canonical form: compact, every object's keys
sorted, strings escaped like the reference, floats in the reference's shortest
round-trip layout (which is not Python's ``repr``).

Reading leans on the C-accelerated :mod:`json` module with cheap byte-level
checks around it; writing on orjson, whose output is the reference's byte for
byte. A typical document costs little more than ``json.loads``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from typing import Any

import orjson

from editor.graph.errors import JsonError, JsonPosition
from editor.graph.model import U64_MAX

__all__ = [
    "HASH_PREFIX",
    "I64_MIN",
    "MAX_DEPTH",
    "NUL",
    "SHORT_HASH_DIGITS",
    "ReferenceJsonDecoder",
    "canonical_json",
    "canonical_text",
    "format_float",
    "hash_value",
    "hex_digits",
    "nul_path",
    "number_from_text",
    "pretty_json",
    "read_json",
    "reference_number",
    "short_hash",
    "write_json",
]

I64_MIN = -(2**63)
#: The deepest nesting the reference's parser accepts (the outermost value is level 1).
MAX_DEPTH = 127
#: The character PostgreSQL refuses in text and ``jsonb`` (JSON spells it ``\u0000``).
NUL = "\x00"

# The structure of the text is measured on its bytes: escapes removed, braces
# mapped to brackets, everything but brackets, colons and quotes deleted, string
# contents dropped. What is left counts the object members (one colon each) and
# gives the nesting depth (one level of innermost ``[]`` peeled per pass).
_STRUCTURE_MAP = bytes.maketrans(b"{}", b"[]")
_STRUCTURE_DELETE = bytes(byte for byte in range(256) if byte not in b'"[]{}:')
_QUOTED = re.compile(rb'"[^"]*"')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def number_from_text(text: str) -> int | float:
    """Convert the text of a valid JSON number as the reference reads it.

    Raises :class:`ValueError` when the value overflows a double.
    """
    if "." in text or "e" in text or "E" in text:
        value = float(text)
    elif text == "-0":
        return -0.0
    else:
        number = int(text)
        if I64_MIN <= number <= U64_MAX:
            return number
        value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text} is out of range")
    return value


def reference_number(value: int) -> int | float:
    """Apply the reference's integer rule to an integer from plain ``json.loads``."""
    if I64_MIN <= value <= U64_MAX:
        return value
    return float(value)


class ReferenceJsonDecoder(json.JSONDecoder):
    """``json.loads(text, cls=ReferenceJsonDecoder)``: stored JSON read back under the
    reference's integer rule, an integer past 64 bits being the double it was written as.

    PostgreSQL's ``jsonb`` keeps a number's value, not its spelling: the double ``2.0**70``
    comes back as the digits ``1180591620717411303424``, which plain ``json.loads`` reads as an
    integer the rest of the system (and the reference) never holds."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**{**options, "parse_int": _stored_int})


def _stored_int(text: str) -> int | float:
    return reference_number(int(text))


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JsonError(f"the number {_shorten(text)} is out of range for a double")
    return value


def _parse_int(text: str) -> int | float:
    try:
        value = int(text)
    except ValueError:
        # Longer than Python's int-from-text limit (4300 digits): far beyond a double.
        raise JsonError(f"the number {_shorten(text)} is out of range for a double") from None
    if I64_MIN <= value <= U64_MAX and text != "-0":
        return value
    try:
        return number_from_text(text)
    except ValueError:
        raise JsonError(f"the number {_shorten(text)} is out of range for a double") from None


def _refuse_constant(name: str) -> Any:
    raise JsonError(f"`{name}` is not a JSON value")


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JsonError(f"duplicate key `{key}` in one object")
            seen.add(key)
    return obj


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _decode(raw: bytes) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        raise JsonError("the text starts with a byte-order mark, which JSON does not allow")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise JsonError(f"the text is not valid UTF-8 (byte {error.start})") from None


def _has_non_finite(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _structure(raw: bytes) -> tuple[int, bytes]:
    """(object members, brackets) of valid JSON ``raw``, in linear passes in C."""
    skeleton = (
        raw.replace(b"\\\\", b"")
        .replace(b'\\"', b"")
        .translate(_STRUCTURE_MAP, _STRUCTURE_DELETE)
        # Adjacent quotes are an empty string, or the end and the start of two
        # strings with nothing between them: dropping the pair keeps quotes paired.
        .replace(b'""', b"")
    )
    if b'"' in skeleton:
        skeleton = _QUOTED.sub(b"", skeleton)
    return skeleton.count(b":"), skeleton.replace(b":", b"")


def _nests_deeper(brackets: bytes, limit: int) -> bool:
    """Whether balanced ``brackets`` nest deeper than ``limit``; at most ``limit`` passes."""
    for _ in range(limit):
        if not brackets:
            return False
        brackets = brackets.replace(b"[]", b"")
    return bool(brackets)


def _find_duplicate_key(text: str) -> JsonError:
    try:
        json.loads(text, object_pairs_hook=_object_without_duplicates)
    except JsonError as error:
        return error
    return JsonError("an object repeats a key")


def read_json(data: bytes | bytearray | memoryview | str) -> Any:
    """Read one JSON value strictly, as the reference implementation does.

    Returns plain Python values (``dict``, ``list``, ``str``, ``int``, ``float``,
    ``bool``, ``None``). Raises :class:`JsonError` naming what is wrong; no
    input makes any other exception escape.
    """
    if isinstance(data, str):
        text = data
        if text.startswith("\ufeff"):
            raise JsonError("the text starts with a byte-order mark, which JSON does not allow")
        raw = None
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        text = _decode(raw)
    else:
        raise JsonError(f"expected JSON text, got {type(data).__name__}")
    members = 0

    def count_members(obj: dict[str, Any]) -> dict[str, Any]:
        # Duplicates collapse in the dict; comparing the members kept with the
        # members written (colons in the text) finds them without a slow hook.
        nonlocal members
        members += len(obj)
        return obj

    try:
        value = json.loads(
            text,
            object_hook=count_members,
            parse_constant=_refuse_constant,
            parse_float=_parse_float,
            parse_int=_parse_int,
        )
    except json.JSONDecodeError as error:
        raise JsonError(
            f"invalid JSON: {error.msg} at line {error.lineno} column {error.colno}",
            at=JsonPosition(error.msg, error.lineno, error.colno),
        ) from None
    except RecursionError:
        raise JsonError(_too_deep()) from None
    if isinstance(data, str) and _SURROGATE_ESCAPE.search(text) is None:
        # A str argument may carry raw lone surrogates that no escape produced.
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise JsonError("the text contains a lone UTF-16 surrogate") from None
    elif _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        raise JsonError("a \\u escape is an unpaired UTF-16 surrogate")
    if isinstance(value, (dict, list)):
        if raw is None:
            raw = text.encode("utf-8")
        written, brackets = _structure(raw)
        if written != members:
            raise _find_duplicate_key(text)
        if _nests_deeper(brackets, MAX_DEPTH):
            raise JsonError(_too_deep())
    return value


def _too_deep() -> str:
    return f"the JSON nests {MAX_DEPTH + 1} levels or deeper; the limit is {MAX_DEPTH}"


def format_float(value: float) -> str:
    """Format a finite float in the reference's shortest round-trip layout.

    Plain decimal from 1e-5 up to 1e16 (always with a fraction: ``1.0``),
    exponent form outside it with an explicit sign and no padding
    (``1e-6``, ``1.5e-7``, ``1e+16``).
    """
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, exponent_text = text.split("e")
    exponent = int(exponent_text)
    if exponent == -5:
        sign = "-" if mantissa.startswith("-") else ""
        return f"{sign}0.0000{mantissa.lstrip('-').replace('.', '')}"
    return f"{mantissa}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


#: The standard library's JSON string escaping, non-ASCII kept (its C version when built).
_json_string = json.encoder.encode_basestring


def _scalar(value: Any, float_text: Callable[[float], str]) -> str | None:
    """The JSON text of a string, ``null``, a boolean or a number (``float_text`` writes a
    float); ``None`` for anything else."""
    if isinstance(value, str):
        return _json_string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float_text(value)
    return None


def _canonical_float(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError("NaN and infinities are not JSON values")
    return format_float(value)


def _write(value: Any, parts: list[str], sort: bool = True) -> None:
    scalar = _scalar(value, _canonical_float)
    if scalar is not None:
        parts.append(scalar)
    elif isinstance(value, dict):
        parts.append("{")
        for index, key in enumerate(sorted(value) if sort else value):
            if index:
                parts.append(",")
            parts.append(json.dumps(key, ensure_ascii=False))
            parts.append(":")
            _write(value[key], parts, sort)
        parts.append("}")
    elif isinstance(value, (list, tuple)):
        parts.append("[")
        for index, item in enumerate(value):
            if index:
                parts.append(",")
            _write(item, parts, sort)
        parts.append("]")
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


def write_json(value: Any, *, sort_keys: bool) -> str:
    """Compact JSON in the reference's layout, written by this module alone.

    With ``sort_keys`` it is the canonical form; it is the fallback for values
    orjson refuses and the oracle the tests check orjson against.
    """
    parts: list[str] = []
    _write(value, parts, sort_keys)
    return "".join(parts)


def canonical_json(value: Any) -> bytes:
    """The canonical form of a JSON value (spec 01), as UTF-8 bytes.

    orjson writes exactly the reference's bytes (sorted keys by UTF-8 order,
    the same string escapes, the same shortest float layout: ``1e-6``,
    ``0.00001``, ``1e+16``), ten times faster than :mod:`json`; a test checks it
    against :func:`write_json`. Values orjson refuses (integers beyond 64
    bits, built in code) go through :func:`write_json`. NaN and infinities
    raise :class:`ValueError`.
    """
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        return write_json(value, sort_keys=True).encode("utf-8")
    # orjson writes NaN and infinities as null; only then is a walk worth it.
    if b"null" in text and _has_non_finite(value):
        raise ValueError("NaN and infinities are not JSON values")
    return text


def canonical_text(value: Any) -> str:
    """The canonical form of a JSON value, as text."""
    return canonical_json(value).decode("utf-8")


#: What every content hash starts with (a graph's id, an agent definition's, a schema's).
HASH_PREFIX = "sha256:"
#: How many hex digits stand for a hash where people read it (a link, a label, a file name).
SHORT_HASH_DIGITS = 12


def hash_bytes(data: bytes) -> str:
    """``sha256:`` + the lowercase hex SHA-256 of ``data`` (canonical bytes, say: a graph's id)."""
    return HASH_PREFIX + hashlib.sha256(data).hexdigest()


def hash_value(value: Any) -> str:
    """``sha256:`` + the lowercase hex SHA-256 of the value's canonical form."""
    return hash_bytes(canonical_json(value))


def pretty_json(value: Any) -> str:
    """``value`` as JSON for people: indented by two spaces, non-ASCII text as it is (the
    pages, the command line, the schema file); the text of
    ``json.dumps(value, indent=2, ensure_ascii=False)``.

    The standard library writes indented JSON with its pure-Python encoder, whose nested
    functions refer to each other: every call leaves a cycle of some twenty objects for the
    garbage collector (a thousand for the inbox's 50 cards, and a pause of 15-20 ms every
    few pages while it collects them). This writes the same text without closures, with the C
    encoder's string escaping; what is not plain JSON (a key that is not a string, a value of
    another type) goes to ``json.dumps``, which converts it or says why not.
    """
    parts: list[str] = []
    try:
        _pretty(value, "\n", parts)
    except _NotPlain:
        return json.dumps(value, indent=2, ensure_ascii=False)
    return "".join(parts)


class _NotPlain(Exception):
    """A value :func:`pretty_json` leaves to ``json.dumps``."""


def _pretty(value: Any, newline: str, parts: list[str]) -> None:
    """Appends ``value`` to ``parts``; ``newline`` is a line break and the current indent."""
    scalar = _scalar(value, _json_float)
    if scalar is not None:
        parts.append(scalar)
    elif isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        inner = newline + "  "
        opening = "{" + inner
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotPlain
            parts.append(opening + _json_string(key) + ": ")
            _pretty(item, inner, parts)
            opening = "," + inner
        parts.append(newline + "}")
    elif isinstance(value, list | tuple):
        if not value:
            parts.append("[]")
            return
        inner = newline + "  "
        opening = "[" + inner
        for item in value:
            parts.append(opening)
            _pretty(item, inner, parts)
            opening = "," + inner
        parts.append(newline + "]")
    else:
        raise _NotPlain


def _json_float(value: float) -> str:
    """A float as ``json.dumps`` writes it (``NaN`` and the infinities as JavaScript's)."""
    if value != value:
        return "NaN"
    if value == math.inf:
        return "Infinity"
    if value == -math.inf:
        return "-Infinity"
    return float.__repr__(value)


def hex_digits(digest: str) -> str:
    """A content hash without its ``sha256:`` prefix (as the ``/g/<hex>/`` pages name it)."""
    return digest.removeprefix(HASH_PREFIX)


def short_hash(digest: str) -> str:
    """The first :data:`SHORT_HASH_DIGITS` hex digits of a content hash, with or without its
    prefix: how pages, labels and file names show it."""
    return hex_digits(digest)[:SHORT_HASH_DIGITS]


def nul_path(value: Any, path: str = "") -> str | None:
    """Where the first NUL character in a JSON value is (``""`` for the value itself), or None.

    ``path`` names ``value``; the answer extends it with ``.key`` and ``[index]``."""
    if isinstance(value, str):
        return path if NUL in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if NUL in str(key):
                return where
            found = nul_path(item, where)
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = nul_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None
