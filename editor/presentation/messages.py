"""Messages for people: each error of spec 02 (and the parse errors of spec 01) said as what is
wrong, where, and what to do about it.

The exact reference message stays in the error object (the API answers with it, and the editor
shows it behind a *details* toggle); this is the line the editor shows first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from editor.graph import ErrorData

__all__ = ["for_people", "held_phrase"]

_EXPRESSION = re.compile(r"\Afound (?P<what>.+) at character (?P<at>\d+)\Z", re.S)


def _suggest(error: ErrorData) -> str:
    suggestion = error.get("suggestion")
    return f" Did you mean `{suggestion}`?" if suggestion else ""


def _expression(text: Any) -> str:
    """An expression error of spec 03 as a person reads it (positions counted from 1)."""
    match = _EXPRESSION.match(str(text))
    if match is None:
        return str(text)
    what = match["what"].replace(" where one was required", " is missing")
    return f"at character {int(match['at']) + 1}, {what}"


def _level(error: ErrorData) -> str:
    """Where an error inside a body is: ``Inside the body of `b` (in `a`): ``."""
    owners = [str(owner) for owner in error.get("subgraph") or []]
    if not owners:
        return ""
    outer = "".join(f" (in `{owner}`)" for owner in reversed(owners[:-1]))
    return f"Inside the body of `{owners[-1]}`{outer}: "


def held_phrase(message: str) -> str:
    """Why a field was not saved, said after "not saved:": a reason given as a verb phrase
    ("needs a whole number…", "is not valid JSON…") gets its subject, a whole clause ("id
    `x` is already used") stands as it is."""
    first = message.split(" ", 1)[0]
    return f"it {message}" if first in _VERBS else message


_VERBS = frozenset({"is", "needs", "has", "holds", "uses", "must", "cannot", "was"})


def _agent_hash(error: ErrorData) -> str:
    node, found = error.get("node"), str(error.get("hash", ""))
    if not found.strip():
        return (
            f"`{node}` has no agent yet. Choose one in its Agent field, by name, "
            "or paste a `sha256:` hash."
        )
    return (
        f"The agent of `{node}`, `{found}`, is neither a stored agent's name nor a "
        "`sha256:` hash. Choose an agent by name in its Agent field."
    )


def _malformed(error: ErrorData) -> str:
    """Where a draft stops being readable, from the place its error carries (``line`` and
    ``column`` in the text, or ``location`` in the document: :class:`editor.graph.ErrorData`)."""
    if "line" in error and "column" in error:
        return (
            f"The JSON has a typo at line {error['line']}, column {error['column']} "
            f"({error.get('reason', '').lower()}). The canvas keeps the last draft that could "
            "be read; fix the text to go on."
        )
    location = error.get("location")
    place = f" (at `{location}`)" if location else ""
    text = error.get("reason", error["message"]) if location else error["message"]
    return (
        f"The JSON is not a graph document{place}: {text}. Fix it in the JSON tab; the canvas "
        "keeps the last draft that could be read."
    )


_TEMPLATES: dict[str, Callable[[ErrorData], str]] = {
    "unsupported_schema_version": lambda e: (
        f'This draft says "schema_version": {e.get("found")}; Gatehouse reads versions 1 to '
        f"{e.get('supported')}. Set it to 1 in the JSON."
    ),
    "duplicate_node_id": lambda e: (
        f"Two nodes have the id `{e.get('node')}`. Give one of them another id."
    ),
    "dangling_edge": lambda e: (
        f"The edge `{e['edge']['from']}` → `{e['edge']['to']}` leads to `{e.get('missing')}`, "
        f"which is not a node of this graph.{_suggest(e)} Pick an existing node or delete "
        "the edge."
    ),
    "dangling_map_body": lambda e: (
        f"The body of `{e.get('node')}` is `{e.get('missing')}`, which is not a node of this "
        f"graph.{_suggest(e)} Choose its body node in its form."
    ),
    "dangling_fold_body": lambda e: (
        f"The body of `{e.get('node')}` is `{e.get('missing')}`, which is not a node of this "
        f"graph.{_suggest(e)} Choose its body node in its form."
    ),
    "malformed_agent_hash": _agent_hash,
    "non_positive_concurrency": lambda e: (
        f"`{e.get('node')}` would run {e.get('found')} items at once, so it would never run. "
        "Set its Concurrency to 1 or more."
    ),
    "approval_schema_not_object": lambda e: (
        f"The approval form of `{e.get('node')}` is not a JSON object. Write it as a list of "
        'fields, or as a JSON object such as {"type": "object"}.'
    ),
    "non_positive_max_iterations": lambda e: (
        f"`{e.get('node')}` may run {e.get('found')} passes, so it would never run. Set its "
        "Max iterations to 1 or more."
    ),
    "non_positive_delay": lambda e: (
        f"`{e.get('node')}` would wait {e.get('found')} seconds. Set its Wait to 1 s or more."
    ),
    "fold_stop_path_not_in_body_schema": lambda e: (
        f"The Stop when of `{e.get('node')}` reads `{e.get('path')}`, which the output schema of "
        f"its body `{e.get('body')}` does not have. Check the spelling, or add it to that schema."
    ),
    "fold_join_reference_not_in_body_schema": lambda e: (
        f"The join of `{e.get('node')}` picks the best by `{e.get('reference')}`, which the "
        f"output schema of its body `{e.get('body')}` does not have. Check the spelling, or add "
        "it to that schema."
    ),
    "blank_node_name": lambda e: (
        f"The display name of `{e.get('node')}` is only spaces. Type a name, or clear the field."
    ),
    "node_name_too_long": lambda e: (
        f"The display name of `{e.get('node')}` is {e.get('len')} characters long; shorten "
        f"it to {e.get('max')} or fewer."
    ),
    "invalid_branch_expression": lambda e: (
        f"The condition of case `{e.get('case')}` in `{e.get('node')}` cannot be read: "
        f"{_expression(e.get('error'))}. Complete it, e.g. `approved == true`."
    ),
    "model_decision_without_agent": lambda e: (
        f"Case `{e.get('case')}` of `{e.get('node')}` is decided by a model, but the branch "
        "has no agent. Choose one in its Agent field, or decide the case by an expression."
    ),
    "invalid_fold_stop_expression": lambda e: (
        f"The Stop when condition of `{e.get('node')}` cannot be read: "
        f"{_expression(e.get('error'))}. Complete it, e.g. `done == true`."
    ),
    "invalid_fold_join_reference": lambda e: (
        f"The Best by path of `{e.get('node')}`, `{e.get('reference')}`, is not a path: "
        f"{_expression(e.get('error'))}. Give a path such as `score`."
    ),
    "cycle": lambda e: (
        f"The edges go round in a circle: {e.get('path')}. Delete one of these edges; a "
        "repeat is a fold node."
    ),
    "edge_type_mismatch": lambda e: (
        f"`{e['edge']['from']}` gives values of another shape than `{e['edge']['to']}` "
        "takes: its output schema and the next one's input schema differ. Make them the same, "
        "or clear one."
    ),
    "document_too_large": lambda e: (
        f"The graph has {e.get('nodes')} nodes and {e.get('edges')} edges; this installation "
        f"takes at most {e.get('max_nodes')} and {e.get('max_edges')}. Split it into smaller "
        "graphs."
    ),
    "branch_edge_without_label": lambda e: (
        f"The edge from the branch `{e.get('node')}` to `{e.get('to')}` names no case. "
        "Delete it and add it again, choosing the case it is for."
    ),
    "branch_edge_without_case": lambda e: (
        f"The edge from `{e.get('node')}` to `{e.get('to')}` is labelled `{e.get('label')}`, "
        f"which is not one of the branch's cases.{_suggest(e)} Rename the case, or relabel "
        "the edge."
    ),
    "branch_case_without_edge": lambda e: (
        f"Case `{e.get('case')}` of `{e.get('node')}` leads nowhere. Add an edge from "
        f"`{e.get('node')}` labelled `{e.get('case')}`, or remove the case."
    ),
    "branch_without_cases": lambda e: (
        f"The branch `{e.get('node')}` has no cases. Add one with Add case."
    ),
    "duplicate_branch_case": lambda e: (
        f"Two cases of `{e.get('node')}` are called `{e.get('case')}`. Rename one of them."
    ),
    "invalid_reference": lambda e: (
        f"The {e.get('field')} path of `{e.get('node')}`, `{e.get('reference')}`, is not a "
        f"path: {_expression(e.get('error'))}. Give a path such as `draft` or `items.0`."
    ),
    "invalid_json_schema": lambda e: (
        f"The {str(e.get('field', '')).replace('_', ' ')} of `{e.get('node')}` is not a valid "
        f"JSON Schema: {e.get('error')}."
    ),
    "body_node_has_edges": lambda e: (
        f"`{e.get('node')}` is the body of `{e.get('owner')}`, so it cannot have edges of its "
        "own. Delete its edges, or choose another body."
    ),
    "unsupported_body_kind": lambda e: (
        f"`{e.get('node')}` is the body of `{e.get('owner')}`, but a {e.get('kind')} node "
        "cannot be a body: only an agent or a tool can."
    ),
    "nesting_too_deep": lambda e: (
        f"Bodies inside `{e.get('node')}` nest deeper than {e.get('max')} levels. Flatten them."
    ),
    "unsupported_in_subgraph": lambda e: (
        f"`{e.get('node')}` is a {e.get('kind')} node inside a body; "
        + ("a run cannot wait" if e.get("kind") == "delay" else "a person cannot approve")
        + " inside a map item or a fold pass. Move it to the top level."
    ),
    "malformed_document": _malformed,
    "unsaved_field": lambda e: str(e.get("message", "")),
    "unknown_tool": lambda e: (
        f"`{e.get('node')}` uses the tool `{e.get('tool')}`, which is not registered "
        f"here.{_suggest(e)}"
    ),
    "unknown_agent": lambda e: (
        f"`{e.get('node')}` uses an agent this installation does not have "
        f"(`{e.get('agent_hash')}`)."
    ),
    "unknown_agent_tool": lambda e: (
        f"The agent of `{e.get('node')}` may call the tool `{e.get('tool')}`, which is not "
        "registered here."
    ),
    "provider_unavailable": lambda e: (
        f"The agent of `{e.get('node')}` needs the model `{e.get('model')}`, which is not "
        "configured here."
    ),
    "tool_disabled": lambda e: (
        f"`{e.get('node')}` uses the tool `{e.get('tool')}`, which is turned off here."
    ),
}


def for_people(error: ErrorData) -> str:
    """The line the editor shows for ``error`` (its exact message when no better one is known)."""
    template = _TEMPLATES.get(str(error.get("code")))
    if template is None:
        return str(error.get("message", ""))
    try:
        return _level(error) + template(error)
    except (KeyError, TypeError):
        return str(error.get("message", ""))
