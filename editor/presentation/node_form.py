"""The editor's node form, in one place: which fields it shows, how a post is read back, and
which field each validation error belongs beside.

The fields of each kind, their order, their types and whether they are required come from the
graph model's field table (:data:`editor.graph.model.PAYLOAD_FIELDS`), so the form cannot drift
from the document format. This module adds only what a person needs on top: a label, a line of
help, and the control to use. Every control is named by its *key*, which is also the name it is
posted under and the key its errors are filed under (``case-0-name`` everywhere: the control,
its ``f-``/``fe-`` ids in the page, the error map and the field held back from a save). Each
control is a :class:`~editor.presentation.fields.FieldView` and a post is read back into a
:class:`~editor.presentation.fields.FormRead`, the types a gate's card shares.

Reading a post never raises: the fields that could be read are returned as payload updates, the
ones that could not (text that is not JSON, a count that is not a whole number, …) as problems,
each with the text the person typed, so the editor can save the rest and hold those back
(:mod:`editor.services.documents.editing`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from editor.graph import ErrorData
from editor.graph.durations import format_duration, parse_duration
from editor.graph.jsonio import pretty_json
from editor.graph.model import ON_BOUND_WORDS, PAYLOAD_FIELDS, U32_MAX, FieldSpec, SubgraphPath
from editor.presentation.fields import FieldView, FormRead
from editor.presentation.schema_builder import SCHEMA_KEYS, builder_of, read_builder
from editor.presentation.typed import JsonProblem, read_typed_json, whole_number
from editor.presentation.wiring import NodeWiring

__all__ = [
    "CASE_PARTS",
    "ON_BOUND_CHOICES",
    "AgentChoice",
    "CaseView",
    "FormField",
    "NodeFormView",
    "field_key_of_error",
    "form_fields",
    "node_form",
    "read_node_form",
]

#: The controls of one branch case, posted as ``case-<i>-<part>``.
CASE_PARTS = ("name", "kind", "value")

#: What a person reads beside each field: label and help. The field table says the rest.
_LABELS: dict[str, tuple[str, str]] = {
    "id": ("Id", "The node's name in edges and bodies; unique in its graph."),
    "name": ("Display name", "Optional; the canvas shows the id when it is empty."),
    "agent_hash": ("Agent", ""),
    "tool": ("Tool", "A tool registered on this installation."),
    "input": (
        "Input mapping",
        'A JSON object: input name → reference path, e.g. {"text": "draft"}. Optional.',
    ),
    "input_schema": (
        "Input schema",
        "What this node takes: its fields. Not set: anything is accepted.",
    ),
    "output_schema": (
        "Output schema",
        "What this node gives: its fields. Not set: anything may come out.",
    ),
    "prompt": ("Prompt", "Optional: shown to the approver in the inbox."),
    "approval_schema": (
        "Approval form",
        "What the approver fills in: one control per field. The first required yes-or-no "
        "field becomes the Approve and Reject buttons; a field named comment replaces the "
        "card's own comment.",
    ),
    "on": ("On", "Optional: the reference path the cases look at."),
    "cases": ("Cases", "The first case whose condition holds is taken."),
    "over": ("Over", "The reference path of the list to map over."),
    "concurrency": ("Concurrency", "How many items run at once: at least 1."),
    "body": ("Body", "What runs for each item or pass: a node of this graph, or a subgraph."),
    "max_iterations": ("Max iterations", "The most passes the loop may run: at least 1."),
    "stop_when": ("Stop when", "A condition; the loop stops when it holds."),
    "join": ("Join", "How the passes become one value."),
    "accumulator_schema": (
        "Accumulator schema",
        "The fields of the accumulated value. Not set: anything.",
    ),
    "on_bound": (
        "On bound",
        "What reaching max iterations without Stop when holding means. Join: the passes are "
        "joined as if the loop had converged. Fail: the run ends failed, its passes kept. "
        "Not set means join and keeps the document as it was.",
    ),
    "seconds": (
        "Wait",
        "How long the run waits here: 90m, 1h30m, 1 h 30 min, 2 days, or whole seconds "
        "(5400). Stored as seconds.",
    ),
}
#: The choices of the On bound control: (posted value, what the person reads).
ON_BOUND_CHOICES = (
    ("", "Not set (join)"),
    ("join", "Join the passes"),
    ("fail", "Fail the run"),
)
#: Fields shown as a multi-line text box rather than one line.
_LONG_TEXT = {"prompt"}
#: Controls by the field table's type; some fields get a control of their own.
_WIDGET_OF_TYPE = {
    "string": "text",
    "u32": "number",
    "u64": "duration",
    "on_bound": "on_bound",
    "json": "json",
    "string_map": "json",
    "cases": "cases",
    "body": "body",
    "join": "join",
}
_WIDGET_OF_NAME = {
    "agent_hash": "agent",
    "tool": "tool",
    "prompt": "textarea",
    **dict.fromkeys(SCHEMA_KEYS, "schema"),
}


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of a node form: its key, label, help, control and the table's rules."""

    key: str
    label: str
    help: str
    widget: str
    required: bool
    spec: FieldSpec


def form_fields(kind: str) -> list[FormField]:
    """The fields of a ``kind`` node's form, in wire order, ``id`` first."""
    fields = []
    for spec in PAYLOAD_FIELDS[kind]:
        label, help_text = _LABELS.get(spec.name, (spec.name, spec.description))
        if spec.name == "agent_hash" and kind == "branch":
            label = "Agent (for model decisions)"
        widget = _WIDGET_OF_NAME.get(spec.name, _WIDGET_OF_TYPE[spec.type])
        fields.append(FormField(spec.name, label, help_text, widget, spec.required, spec))
    return fields


#: The most cases a branch's form posts (the form says how many it holds in ``case_count``).
_MAX_CASES = 10_000


def read_node_form(
    kind: str,
    data: Mapping[str, str],
    *,
    agent_by_name: Callable[[str], str | None] | None = None,
) -> FormRead:
    """Read a posted node form of ``kind`` (without ``id``, which the editor renames by): the
    payload updates that could be read, and the fields that could not, never an exception.

    ``agent_by_name`` turns a stored agent definition's name into its hash, so the agent field
    takes a name as well as a hash.
    """
    read = FormRead()
    for form_field in form_fields(kind):
        name, spec = form_field.key, form_field.spec
        if name == "id":
            continue
        raw = str(data.get(name, ""))
        if spec.type == "string":
            value: Any = raw
            if spec.name == "agent_hash":
                value = _agent(raw, agent_by_name)
            if spec.optional and not value.strip():
                value = None
            read.fields[name] = value
        elif spec.type == "u32":
            number = whole_number(raw.strip(), maximum=U32_MAX)
            if number is None:
                read.refuse(name, f"needs a whole number from 0 to {U32_MAX}", raw)
            else:
                read.fields[name] = number
        elif spec.type == "u64":
            seconds = parse_duration(raw)
            if seconds is None:
                read.refuse(
                    name,
                    "needs a duration: whole seconds (5400), or hours, minutes and seconds "
                    "(1 h 30 min, 1h30m, 90m)",
                    raw,
                )
            else:
                read.fields[name] = seconds
        elif spec.type == "on_bound":
            if raw not in ("", *ON_BOUND_WORDS):
                read.refuse(name, "needs join, fail or not set", raw)
            else:
                read.fields[name] = raw or None
        elif name in SCHEMA_KEYS and _read_builder(read, name, data, optional=spec.optional):
            continue
        elif spec.type in ("json", "string_map"):
            _read_json(read, name, raw, required=spec.required, string_map=spec.type != "json")
        elif spec.type == "cases":
            raw_count = str(data.get("case_count", "0"))
            count = whole_number(raw_count.strip(), maximum=_MAX_CASES)
            if count is None:
                message = f"the form's case_count must be a whole number from 0 to {_MAX_CASES}"
                read.refuse(name, message, raw_count)
            else:
                read.fields[name] = _cases(data, count)
        elif spec.type == "body":
            _read_body(read, data)
        elif spec.type == "join":
            _read_join(read, data)
    return read


def _agent(raw: str, agent_by_name: Callable[[str], str | None] | None) -> str:
    text = raw.strip()
    if text and not text.startswith("sha256:") and agent_by_name is not None:
        found = agent_by_name(text)
        if found is not None:
            return found
    return raw


def _read_json(read: FormRead, name: str, raw: str, *, required: bool, string_map: bool) -> None:
    if not raw.strip():
        if required:
            read.refuse(
                name, 'is required: a JSON Schema, {"type": "object"} for a plain form', raw
            )
        else:
            read.fields[name] = None
        return
    value, problem = read_typed_json(raw)
    if problem is not None:
        read.refuse(name, _json_problem(problem), raw)
        return
    if string_map:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            read.refuse(name, "needs a JSON object mapping input names to reference paths", raw)
            return
        value = value or None
    read.fields[name] = value


def _read_builder(read: FormRead, name: str, data: Mapping[str, str], *, optional: bool) -> bool:
    """A schema field posted by its builder (False: posted as JSON text alone)."""

    def read_json(text: str) -> tuple[Any, str]:
        value, problem = read_typed_json(text)
        return value, "" if problem is None else _json_problem(problem)

    built = read_builder(name, data, optional=optional, read_json=read_json)
    if built is None:
        return False
    if built.problem:
        read.refuse(name, built.problem, built.held)
    else:
        read.fields[name] = built.value
    read.shown.update(built.shown or {})
    read.redraw = read.redraw or built.redraw
    return True


def _json_problem(problem: JsonProblem) -> str:
    """Why typed text is not JSON, said for a person: where, and what was expected."""
    found = problem.position
    if found is None:
        return f"is not valid JSON: {problem.error}"
    return (
        f"is not valid JSON: at line {found.line}, column {found.column}, "
        f"{found.what[0].lower()}{found.what[1:]} (check for a missing quote, comma or "
        "closing bracket)"
    )


def _cases(data: Mapping[str, str], count: int) -> list[dict[str, Any]]:
    remove = data.get("remove_case")
    cases = []
    for index in range(count):
        if remove is not None and remove == str(index):
            continue
        name = str(data.get(f"case-{index}-name", ""))
        if data.get(f"case-{index}-kind") == "model_decision":
            when: dict[str, Any] = {"kind": "model_decision"}
        else:
            when = {"kind": "expression", "value": str(data.get(f"case-{index}-value", ""))}
        cases.append({"name": name, "when": when})
    if data.get("add_case") is not None:
        names = {case["name"] for case in cases}
        number = len(cases) + 1
        while f"case{number}" in names:
            number += 1
        cases.append({"name": f"case{number}", "when": {"kind": "expression", "value": "true"}})
    return cases


#: A subgraph body as it starts: empty, built on the canvas like the top level.
EMPTY_SUBGRAPH: dict[str, Any] = {"schema_version": 1, "nodes": [], "edges": []}


def _read_body(read: FormRead, data: Mapping[str, str]) -> None:
    kind = "subgraph" if data.get("body_kind") == "subgraph" else "node"
    shown = data.get("body_shown")
    if shown is not None and shown != kind:
        read.redraw = True  # the body's own controls change with its kind
    if kind == "node":
        read.fields["body"] = {"kind": "node", "value": str(data.get("body_node", ""))}
        return
    raw = str(data.get("body_subgraph", ""))
    if not raw.strip():
        # Just switched to a subgraph (its text was not on the form), or its text emptied:
        # an empty body, which its level on the canvas builds.
        read.fields["body"] = {"kind": "subgraph", "value": dict(EMPTY_SUBGRAPH)}
        return
    graph, problem = read_typed_json(raw)
    if problem is not None:
        read.refuse("body", _json_problem(problem), raw)
        return
    if not isinstance(graph, dict):
        read.refuse("body", "needs a graph document: a JSON object", raw)
        return
    read.fields["body"] = {"kind": "subgraph", "value": graph}


def _read_join(read: FormRead, data: Mapping[str, str]) -> None:
    join_kind = data.get("join_kind", "last")
    if join_kind == "best_by":
        read.fields["join"] = {"kind": "best_by", "value": str(data.get("join_value", ""))}
    elif join_kind in ("last", "all"):
        read.fields["join"] = {"kind": join_kind}
    else:
        read.refuse("join", "needs one of best by, last or all", str(join_kind))


#: Which field each validation error is about, when its code names one.
_FIELD_OF_CODE = {
    "duplicate_node_id": "id",
    "dangling_map_body": "body",
    "dangling_fold_body": "body",
    "malformed_agent_hash": "agent_hash",
    "non_positive_concurrency": "concurrency",
    "approval_schema_not_object": "approval_schema",
    "non_positive_max_iterations": "max_iterations",
    "non_positive_delay": "seconds",
    "fold_stop_path_not_in_body_schema": "stop_when",
    "fold_join_reference_not_in_body_schema": "join",
    "blank_node_name": "name",
    "node_name_too_long": "name",
    "node_id_too_long": "id",
    "invalid_fold_stop_expression": "stop_when",
    "invalid_fold_join_reference": "join",
    "branch_without_cases": "cases",
    "duplicate_branch_case": "cases",
    "unknown_tool": "tool",
    "tool_disabled": "tool",
    "unknown_agent": "agent_hash",
    "unknown_agent_tool": "agent_hash",
    "provider_unavailable": "agent_hash",
}


def field_key_of_error(error: ErrorData, node: Mapping[str, Any] | None) -> str:
    """The key of the field an error belongs beside (``""``: the node's form as a whole)."""
    code = error.get("code")
    if code in _FIELD_OF_CODE:
        return _FIELD_OF_CODE[str(code)]
    if "field" in error:
        name = str(error["field"])
        return "input" if name.startswith("input.") else name
    if "case" in error and node is not None:
        for index, case in enumerate(node["payload"].get("cases", ())):
            if case.get("name") == error["case"]:
                part = "value"
                if code == "model_decision_without_agent":
                    part = "kind"
                elif code == "branch_case_without_edge":
                    part = "name"
                return f"case-{index}-{part}"
    return ""


# --- What the page shows -------------------------------------------------------------------------


def _pretty(value: Any) -> str:
    return "" if value is None else pretty_json(value)


def _shown(payload: Mapping[str, Any], form_field: FormField) -> str:
    """The stored value of a field as its control shows it."""
    stored = payload.get(form_field.key)
    if form_field.spec.type in ("json", "string_map"):
        return _pretty(stored or None) if form_field.key == "input" else _pretty(stored)
    if form_field.spec.type == "u64" and type(stored) is int:
        return format_duration(stored)
    return "" if stored is None else str(stored)


class CaseView(TypedDict):
    """One case of a branch's form: its controls' keys (``case-<i>-<part>``), what they show
    and their errors and hints, by part."""

    index: int
    number: int
    name: str
    kind: str
    value: str
    keys: dict[str, str]
    errors: dict[str, list[str]]
    hints: dict[str, list[str]]


class NodeFormView(TypedDict):
    """What the node form of one node shows (``templates/editor/_node_form.html``): its
    fields, the branch's cases, the body and join controls, every error and hint by field key
    (``oob_errors``: the pieces an answer replaces while the person types), and what the node
    receives and gives (``wiring``)."""

    id: str
    token: str
    kind: str
    level: list[str]
    fields: list[FieldView]
    general_errors: list[str]
    oob_errors: list[tuple[str, list[str], list[str]]]
    cases: list[CaseView]
    body_kind: str
    body_node: str
    body_subgraph: str
    #: How many nodes a subgraph body holds.
    body_nodes: int
    join_kind: str
    join_value: str
    other_ids: list[str]
    payload_json: str
    wiring: NodeWiring | None


@dataclass(frozen=True, slots=True)
class AgentChoice:
    """A stored agent definition the agent field offers: its hash and its name."""

    agent: str
    name: str | None


def node_form(
    node: Mapping[str, Any],
    *,
    token: str,
    level: SubgraphPath = (),
    errors: Mapping[str, list[str]] | None = None,
    typed: Mapping[str, str] | None = None,
    other_ids: list[str] | None = None,
    agents: Callable[[], list[AgentChoice]] | None = None,
    tools: Callable[[], list[str]] | None = None,
    tool_labels: Callable[[], Mapping[str, tuple[str, str]]] | None = None,
    hints: Mapping[str, list[str]] | None = None,
    wiring: NodeWiring | None = None,
) -> NodeFormView:
    """What the node form of ``node`` (a wire node) shows: each field's control, value and
    errors as a :class:`FieldView` (``errors`` by key); ``typed`` holds text the person typed
    that was not saved, shown in place of the stored value. ``tool_labels`` gives, per tool
    name, what the picker shows beside it (its effect, and its MCP server) and its
    description. ``hints`` (by key) are shown beside their fields, apart from the errors;
    ``wiring`` (:class:`~editor.presentation.wiring.NodeWiring`) says what the node receives
    and gives and what its reference fields offer."""
    payload = node["payload"]
    errors = errors or {}
    typed = typed or {}
    hints = hints or {}
    fields: list[FieldView] = []
    for form_field in form_fields(node["kind"]):
        key = form_field.key
        value = typed[key] if key in typed else _shown(payload, form_field)
        entry: dict[str, Any] = {}
        if form_field.widget == "tool":
            names = tools() if tools is not None else []
            labels = tool_labels() if tool_labels is not None else {}
            entry["options"] = names
            entry["choices"] = [(name, *labels.get(name, ("", ""))) for name in names]
            entry["unknown"] = bool(value) and value not in names
        elif form_field.widget == "agent":
            entry = _agent_entry(value, agents() if agents is not None else [])
            value = entry.pop("value")
        elif form_field.widget == "on_bound":
            entry["options"] = ON_BOUND_CHOICES
        elif form_field.widget == "duration":
            stored = payload.get(key)
            entry["seconds"] = stored if type(stored) is int else None
        elif form_field.widget == "schema":
            entry["builder"] = builder_of(
                key, payload.get(key), optional=form_field.spec.optional, typed=typed
            )
        fields.append(
            FieldView(
                key=key,
                kind=form_field.widget,
                label=form_field.label,
                required=form_field.required,
                help=form_field.help,
                initial=value,
                errors=tuple(errors.get(key, ())),
                hints=tuple(hints.get(key, ())),
                **entry,
            )
        )
    cases: list[CaseView] = []
    for index, case in enumerate(payload.get("cases", ())):
        when = case.get("when") or {}
        case_keys = {part: f"case-{index}-{part}" for part in CASE_PARTS}
        cases.append(
            {
                "index": index,
                "number": index + 1,
                "name": typed.get(case_keys["name"], case.get("name", "")),
                "kind": when.get("kind", "expression"),
                "value": typed.get(case_keys["value"], when.get("value", "")),
                "keys": case_keys,
                "errors": {part: errors.get(case_keys[part], []) for part in CASE_PARTS},
                "hints": {part: hints.get(case_keys[part], []) for part in CASE_PARTS},
            }
        )
    body = payload.get("body") or {}
    join = payload.get("join") or {}
    body_subgraph = _pretty(body.get("value")) if body.get("kind") == "subgraph" else ""
    body_kind = body.get("kind", "node")
    inner = body.get("value") if body_kind == "subgraph" else None
    body_nodes = (
        len(inner["nodes"])
        if isinstance(inner, dict) and isinstance(inner.get("nodes"), list)
        else 0
    )
    if "body" in typed:
        body_kind, body_subgraph = "subgraph", typed["body"]
    keys = [f.key for f in form_fields(node["kind"])]
    for case in cases:
        keys += case["keys"].values()
    return {
        "id": payload["id"],
        "token": token,
        "kind": node["kind"],
        "level": list(level),
        "fields": fields,
        "general_errors": errors.get("", []),
        "oob_errors": [
            (key or "node", errors.get(key, []), hints.get(key, [])) for key in [*keys, ""]
        ],
        "cases": cases,
        "body_kind": body_kind,
        "body_node": body.get("value", "") if body.get("kind") == "node" else "",
        "body_subgraph": body_subgraph,
        "body_nodes": body_nodes,
        "join_kind": join.get("kind", "last"),
        "join_value": join.get("value", ""),
        "other_ids": [other for other in (other_ids or []) if other != payload["id"]],
        "payload_json": _pretty(payload),
        "wiring": wiring,
    }


def _agent_entry(value: str, choices: list[AgentChoice]) -> dict[str, Any]:
    """The agent field shows a stored agent by its name (when no other has it) and says both
    its name and its hash."""
    by_hash = {choice.agent: choice for choice in choices}
    names: dict[str, int] = {}
    for choice in choices:
        if choice.name:
            names[choice.name] = names.get(choice.name, 0) + 1
    chosen = by_hash.get(value.strip())
    shown = value
    if chosen is not None and chosen.name and names[chosen.name] == 1:
        shown = chosen.name
    return {
        "value": shown,
        "choices": [
            {"value": c.name if c.name and names[c.name] == 1 else c.agent, "choice": c}
            for c in choices
        ],
        "chosen": chosen,
    }
