"""Tool results that ask to park the run: ``_meta.salvor`` (spec 08, section 5).

A tool node's result may carry ``_meta.salvor``: ``{"suspend": {"reason", "input_schema",
"kind"?}}`` parks the run ``suspended`` awaiting an input, ``{"sleep_until": "<RFC 3339>"}``
parks it ``sleeping`` until that instant. Anything else in that place fails the call with a
message starting ``_meta.salvor``, checked in the reference's order (its ``park.rs``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "PARK_IN_AGENT",
    "ParkRequestError",
    "SleepRequest",
    "SuspendRequest",
    "asks_to_park",
    "park_request",
    "without_park",
]

#: A park asked by a tool inside an agent's loop (Gatehouse honours them on tool nodes only).
PARK_IN_AGENT = "_meta.salvor parks are honoured on tool nodes only"

_ON_ERROR = (
    "`_meta.salvor` asks to park the run on a result flagged `isError`. A call that failed "
    "parks nothing: return the park on a successful result, or drop the `_meta.salvor` key and "
    "let the failure stand"
)
_DURATION_REFUSED = (
    "A duration is not accepted here: the server holds the clock and states the instant"
)


class ParkRequestError(Exception):
    """A malformed ``_meta.salvor``: the call fails with this message."""


@dataclass(frozen=True, slots=True)
class SuspendRequest:
    reason: str
    input_schema: dict[str, Any] | bool
    signal: bool  # ``kind: "signal"``: a system owes the run the input, not a person


@dataclass(frozen=True, slots=True)
class SleepRequest:
    wake_at: datetime  # UTC


def _what(value: Any) -> str:
    """A value as the messages name it: ``null``, the boolean `true`, an array…"""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean `{'true' if value else 'false'}`"
    if isinstance(value, int | float):
        return f"the number `{json.dumps(value)}`"
    if isinstance(value, str):
        return f"the string `{value}`"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _salvor(result: Any) -> Any:
    """``_meta.salvor`` of ``result``, or ``None`` when absent (or ``null``)."""
    if not isinstance(result, dict):
        return None
    meta = result.get("_meta")
    if not isinstance(meta, dict):
        return None
    return meta.get("salvor")


def asks_to_park(result: Any) -> bool:
    """Whether ``result`` carries a ``_meta.salvor`` (well formed or not)."""
    return _salvor(result) is not None


def park_request(
    result: Any, *, is_error: bool | None = None
) -> SuspendRequest | SleepRequest | None:
    """The park ``result`` asks for, ``None`` for an ordinary result; raises
    :class:`ParkRequestError` for a malformed one. ``is_error`` overrides the result's own
    ``isError`` (an MCP result flagged so never reaches the engine as a result)."""
    salvor = _salvor(result)
    if salvor is None:
        return None
    flagged = is_error if is_error is not None else result.get("isError") is True
    if flagged:
        raise ParkRequestError(_ON_ERROR)
    if not isinstance(salvor, dict):
        raise ParkRequestError(
            f"`_meta.salvor` must be a JSON object naming one park request, got {_what(salvor)}"
        )
    unknown = sorted(key for key in salvor if key not in ("suspend", "sleep_until"))
    if unknown:
        raise ParkRequestError(
            f"`_meta.salvor` has an unknown key `{unknown[0]}`. The only keys are `suspend` and "
            "`sleep_until`"
        )
    suspend, sleep_until = salvor.get("suspend"), salvor.get("sleep_until")
    if suspend is not None and sleep_until is not None:
        raise ParkRequestError(
            "`_meta.salvor` names both `suspend` and `sleep_until`. A run parks one way at a "
            "time: on an input it waits for, or on an instant it waits until"
        )
    if suspend is None and sleep_until is None:
        raise ParkRequestError(
            "`_meta.salvor` names no park request. It must carry exactly one of `suspend` or "
            "`sleep_until`"
        )
    if suspend is not None:
        return _suspend(suspend)
    return _sleep(sleep_until)


def _suspend(suspend: Any) -> SuspendRequest:
    if not isinstance(suspend, dict):
        raise ParkRequestError(
            f"`_meta.salvor.suspend` must be a JSON object, got {_what(suspend)}"
        )
    unknown = sorted(key for key in suspend if key not in ("reason", "input_schema", "kind"))
    if unknown:
        raise ParkRequestError(
            f"`_meta.salvor.suspend` has an unknown key `{unknown[0]}`. The keys are `reason`, "
            "`input_schema`, and an optional `kind`"
        )
    if "reason" not in suspend:
        raise ParkRequestError(
            "`_meta.salvor.suspend` is missing `reason`, the line the person or the operator "
            "reads to know what the run is waiting for"
        )
    reason = suspend["reason"]
    if isinstance(reason, str) and not reason.strip():
        raise ParkRequestError(
            "`_meta.salvor.suspend.reason` is empty. A park nobody can explain is a park nobody "
            "can answer"
        )
    if not isinstance(reason, str):
        raise ParkRequestError(
            f"`_meta.salvor.suspend.reason` must be a string, got {_what(reason)}"
        )
    if "input_schema" not in suspend:
        raise ParkRequestError(
            "`_meta.salvor.suspend` is missing `input_schema`, the JSON Schema the resume input "
            "is validated against"
        )
    schema = suspend["input_schema"]
    if not isinstance(schema, dict | bool):
        raise ParkRequestError(
            f"`_meta.salvor.suspend.input_schema` must be a JSON Schema object, got {_what(schema)}"
        )
    kind = suspend.get("kind", None)
    if "kind" in suspend and kind != "signal":
        raise ParkRequestError(
            f'`_meta.salvor.suspend.kind` must be `"signal"` when present, got {_what(kind)}. '
            "Omit it for the ordinary case, a person deciding"
        )
    return SuspendRequest(reason, schema, kind == "signal")


def _sleep(text: Any) -> SleepRequest:
    if not isinstance(text, str):
        raise ParkRequestError(
            f"`_meta.salvor.sleep_until` must be an RFC 3339 timestamp string, got {_what(text)}"
        )
    try:
        wake_at = _rfc3339(text)
    except ValueError as error:
        raise ParkRequestError(
            f"`_meta.salvor.sleep_until` is not an RFC 3339 timestamp: `{text}` ({error}). "
            + _DURATION_REFUSED
        ) from None
    return SleepRequest(wake_at)


def _rfc3339(text: str) -> datetime:
    """An RFC 3339 date-time: a full date, ``T`` (or ``t``/space), a time, ``Z`` or an offset."""
    if len(text) < 20 or text[4] != "-" or text[7] != "-" or text[10] not in "Tt ":
        raise ValueError("expected a date, `T`, a time and an offset, like 2026-01-01T00:00:00Z")
    if text[-1] in "Zz":
        normal = text[:-1] + "+00:00"
    elif len(text) >= 6 and text[-6] in "+-" and text[-3] == ":":
        normal = text
    else:
        raise ValueError("the offset is missing: end with `Z` or `+hh:mm`")
    parsed = datetime.fromisoformat(normal[:10] + "T" + normal[11:])
    if parsed.tzinfo is None:  # pragma: no cover - the offset was checked above
        raise ValueError("the offset is missing")
    return parsed.astimezone(UTC)


def without_park(result: Any) -> Any:
    """``result`` without ``_meta.salvor``; ``_meta`` dropped when that empties it."""
    if not isinstance(result, dict) or not isinstance(result.get("_meta"), dict):
        return result
    meta = {key: value for key, value in result["_meta"].items() if key != "salvor"}
    stripped = {key: value for key, value in result.items() if key != "_meta"}
    if meta:
        stripped["_meta"] = meta
    return stripped
