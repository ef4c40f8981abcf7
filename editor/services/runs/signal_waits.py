"""Answering a signal wait from the run page (spec 08, section 5).

A tool that parks its run with ``_meta.salvor.suspend`` and ``kind: "signal"`` waits for an
input another system owes it: nobody's inbox card. Operators may send that input themselves on
the run page; :func:`resume_signal` reads the form (the wait's log position and the input as
JSON text) and records the resolution through :func:`editor.services.runs.resolutions.resume_run`,
the one place the API's ``POST /v1/runs/{id}/resume`` records it too: the input is checked
against the recorded ``input_schema`` and resolves the wait exactly once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from editor.graph import JsonError, read_json
from editor.services.access import can_operate
from editor.services.errors import InvalidResume, NotAllowed, NotSuspended
from editor.services.numbers import strict_int
from editor.services.runs import resolutions
from editor.services.runs.rows import run_row
from editor.services.storable import nul_path

__all__ = ["SignalAnswer", "resume_signal"]


@dataclass(frozen=True, slots=True)
class SignalAnswer:
    """What became of a submitted signal form: ``recorded``, or the ``errors`` to show beside
    its input (nothing recorded), or a ``notice`` that the run no longer waits there."""

    seq: int | None
    text: str = ""
    recorded: bool = False
    errors: list[str] = field(default_factory=list)
    notice: str = ""


def _waiting_signal(status: Mapping[str, Any], seq: int) -> dict[str, Any] | None:
    """The signal wait recorded at ``seq`` that the run still waits for, if it does."""
    for item in status.get("pending") or ():
        if item.get("seq") == seq and item.get("wait") == "signal":
            return dict(item)
    return None


def resume_signal(user: Any, run_id: str, post: Mapping[str, str]) -> SignalAnswer:
    """Resolve the signal wait the form names (``seq``) with the JSON text of ``input``.

    Raises :class:`NotAllowed` unless ``user`` is an operator, :class:`UnknownRun`, and
    :class:`InvalidRequest` for a ``seq`` that is not a whole number (a form always sends
    one)."""
    if not can_operate(user):
        raise NotAllowed()
    seq = strict_int(str(post.get("seq", "")), "seq")  # InvalidRequest (400) when crafted
    text = str(post.get("input", ""))
    run = run_row(run_id)
    item = _waiting_signal(run.status or {}, seq)
    if item is None:
        notice = "The run no longer waits on a system there: it was resolved or moved on."
        return SignalAnswer(seq, text, notice=notice)
    try:
        value = read_json(text)
    except JsonError as error:
        return SignalAnswer(seq, text, errors=[f"This is not valid JSON: {error}."])
    if nul_path(value) is not None:
        return SignalAnswer(seq, text, errors=["This cannot contain the NUL character (U+0000)."])
    body: dict[str, Any] = {"input": value, "node": item["node"]}
    if item.get("scope"):
        body["scope"] = item["scope"]
    try:
        resolutions.resume_run(user, run, body)
    except InvalidResume as error:
        messages = [
            f"{violation.get('path', '$')}: {violation.get('message', '')}"
            for violation in error.violations
        ]
        return SignalAnswer(seq, text, errors=messages)
    except NotSuspended as error:
        return SignalAnswer(seq, text, notice=f"Not resumed: {error}.")
    return SignalAnswer(seq, text, recorded=True)
