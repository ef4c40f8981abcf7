"""The critic-panel rounds of seed 004: ``panel_prompts`` and ``panel_collect`` (spec 04).

A round is ``panel_prompts`` → a map of the ``critic`` agent over its ``prompts`` →
``panel_collect``; a fold repeats it until ``converged == true``. The map hands
``panel_collect`` only the list of critic replies, so everything else it needs (the subject,
the critics, the round number, the transcript so far, and who each prompt was addressed to)
travels **inside each prompt**, in its ``panel`` field, and comes back in the reply: the
``echo`` model returns the prompt object unchanged except for its ``kind``. A real model
that answers with plain text is fine as long as one reply of the round still carries the
state; a plain-text reply is a ``critique`` written by the critic it was addressed to.

Messages are ``{"kind", "sender", "recipient", "text"}``; transcript messages also carry
``round`` (1-based). Round 1 sends the subject from ``system`` to every critic (kind
``prompt``). Round r > 1 sends each critic, in declared order, every message of round r − 1
(transcript order) that another critic wrote, keeping its kind — so an echoing critic answers a
critique with a rebuttal. Reply *i* is attributed to the critic prompt *i* was addressed to
(the echo model does not swap sender and recipient), addressed back to that prompt's sender.

``converged`` is true when a round after the first produced no ``rebuttal`` (seed 004's
rule), or when nobody would have anything to answer next round (a one-critic panel).
"""

from __future__ import annotations

from typing import Any

from editor.engine.errors import ToolError
from editor.engine.ports import ToolContext, ToolEffect, ToolSpec
from editor.graph.closed_schemas import compile_schema
from editor.tools.checked import compact_json, json_path, with_input_check

__all__ = ["SYSTEM_SENDER", "panel_collect", "panel_prompts", "panel_tools"]

SYSTEM_SENDER = "system"

#: What every message and prompt carries, beside its round or the panel state.
_ADDRESSED = {
    "kind": {"type": "string"},
    "sender": {"type": "string"},
    "recipient": {"type": "string"},
    "text": {"type": "string"},
}
_ROUND = {"type": "integer", "minimum": 1}
_MESSAGE = {
    "type": "object",
    "properties": {**_ADDRESSED, "round": _ROUND},
    "required": [*_ADDRESSED, "round"],
}
#: The panel as it stands after a round: what the prompts, the state and the output share.
_PANEL = {
    "subject": {"type": "string"},
    "critics": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
    "round": _ROUND,
    "transcript": {"type": "array", "items": _MESSAGE},
}

PROMPTS_INPUT = {
    "description": "The panel input (round 1) or panel_collect's output (later rounds).",
    "type": "object",
    "properties": {**_PANEL, "converged": {"type": "boolean"}},
    "required": ["subject", "critics"],
    "dependentRequired": {"transcript": ["round"], "round": ["transcript"]},
}
_STATE = {
    "type": "object",
    "properties": {
        **_PANEL,
        "routes": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sender": {"type": "string"}, "recipient": {"type": "string"}},
                "required": ["sender", "recipient"],
            },
        },
    },
    "required": [*_PANEL, "routes"],
}
_PROMPT = {
    "type": "object",
    "properties": {**_ADDRESSED, "panel": _STATE},
    "required": [*_ADDRESSED, "panel"],
}
PROMPTS_OUTPUT = {
    "type": "object",
    "properties": {
        "round": _ROUND,
        "prompts": {"type": "array", "items": _PROMPT},
    },
    "required": ["round", "prompts"],
}
COLLECT_INPUT = {
    "description": "The critics' replies, in prompt order (the map's output).",
    "type": "array",
}
COLLECT_OUTPUT = {
    "type": "object",
    "properties": {**_PANEL, "converged": {"type": "boolean"}},
    "required": [*_PANEL, "converged"],
}

_STATE_VALIDATOR = compile_schema(_STATE)


def _message(kind: str, sender: str, recipient: str, text: str, round_: int) -> dict[str, Any]:
    return {"kind": kind, "sender": sender, "recipient": recipient, "text": text, "round": round_}


def panel_prompts(value: dict[str, Any], context: ToolContext | None = None) -> dict[str, Any]:
    """The prompt messages of the next round, each carrying the panel state."""
    subject: str = value["subject"]
    critics: list[str] = list(value["critics"])
    if len(set(critics)) != len(critics):
        raise ToolError("the critics must be different from each other")
    transcript: list[dict[str, Any]] = list(value.get("transcript", []))
    if "round" not in value:
        round_ = 1
        routes = [(SYSTEM_SENDER, critic, "prompt", subject) for critic in critics]
    else:
        round_ = value["round"] + 1
        previous = [message for message in transcript if message["round"] == round_ - 1]
        routes = [
            (message["sender"], critic, message["kind"], message["text"])
            for critic in critics
            for message in previous
            if message["sender"] != critic
        ]
        if not routes:
            raise ToolError(
                f"round {round_} of the panel has nothing to send: no critic has a message "
                f"from another critic in round {round_ - 1}"
            )
    state = {
        "subject": subject,
        "critics": critics,
        "round": round_,
        "transcript": transcript,
        "routes": [
            {"sender": sender, "recipient": recipient} for sender, recipient, _, _ in routes
        ],
    }
    prompts = [
        {"kind": kind, "sender": sender, "recipient": recipient, "text": text, "panel": state}
        for sender, recipient, kind, text in routes
    ]
    return {"round": round_, "prompts": prompts}


def _find_state(replies: list[Any]) -> dict[str, Any]:
    for reply in replies:
        if isinstance(reply, dict) and isinstance(reply.get("panel"), dict):
            state = reply["panel"]
            error = next(iter(_STATE_VALIDATOR.errors(state)), None)
            if error is not None:
                raise ToolError(
                    f"the panel state carried by the replies is malformed at "
                    f"{json_path(error.absolute_path)}: {error.message}"
                )
            return state
    raise ToolError(
        f"none of the {len(replies)} critic replies carries the panel state: panel_collect "
        "needs at least one reply that returns its prompt object with the `panel` field "
        "panel_prompts put there (the `echo` model does; a critic agent answering in plain "
        "text must keep one reply per round as that object)"
    )


def _reply_message(reply: Any) -> tuple[str, str]:
    """(kind, text) of one critic reply."""
    if isinstance(reply, dict) and isinstance(reply.get("text"), str):
        kind = reply.get("kind")
        return (kind if isinstance(kind, str) and kind else "critique"), reply["text"]
    if isinstance(reply, str):
        return "critique", reply
    return "critique", compact_json(reply)


def panel_collect(replies: list[Any], context: ToolContext | None = None) -> dict[str, Any]:
    """The round's replies appended to the transcript, and whether the panel converged."""
    state = _find_state(replies)
    routes = state["routes"]
    if len(routes) != len(replies):
        raise ToolError(
            f"panel_collect got {len(replies)} replies for the {len(routes)} prompts of "
            f"round {state['round']}"
        )
    round_ = state["round"]
    messages = []
    for route, reply in zip(routes, replies, strict=True):
        kind, text = _reply_message(reply)
        messages.append(_message(kind, route["recipient"], route["sender"], text, round_))
    critics = state["critics"]
    no_rebuttal = round_ > 1 and not any(message["kind"] == "rebuttal" for message in messages)
    nothing_to_answer = not any(
        message["sender"] != critic for critic in critics for message in messages
    )
    return {
        "subject": state["subject"],
        "critics": critics,
        "round": round_,
        "transcript": [*state["transcript"], *messages],
        "converged": no_rebuttal or nothing_to_answer,
    }


def panel_tools() -> list[ToolSpec]:
    return [
        ToolSpec(
            "panel_prompts",
            "Critic panel (seed 004): the prompt messages of the next round. Round 1 sends the "
            "subject to every critic; later rounds send each critic the other critics' messages "
            "of the previous round. Each prompt carries the panel state in `panel`.",
            with_input_check(PROMPTS_INPUT, panel_prompts),
            ToolEffect.READ,
            PROMPTS_INPUT,
            PROMPTS_OUTPUT,
        ),
        ToolSpec(
            "panel_collect",
            "Critic panel (seed 004): appends a round's critic replies to the transcript and "
            "sets `converged` when a round after the first produced no rebuttal.",
            with_input_check(COLLECT_INPUT, panel_collect),
            ToolEffect.READ,
            COLLECT_INPUT,
            COLLECT_OUTPUT,
        ),
    ]
