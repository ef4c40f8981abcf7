"""Strict parsing of graph documents (spec 01, *Strict parsing*).

A graph is a control document: every unknown key, at every level, is refused and
named with where it was found; strings must be strings, u32 fields integers in
``0..=4294967295``; an explicit ``null`` for an optional field means unset. The
first problem raises :class:`MalformedDocument`; nothing else ever escapes.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any

from editor.graph.errors import JsonError, MalformedDocument
from editor.graph.jsonio import canonical_json, read_json
from editor.graph.model import (
    BODY_KINDS,
    JOIN_KINDS,
    KINDS,
    NODE_CLASSES,
    ON_BOUND_WORDS,
    PAYLOAD_FIELDS,
    U32_MAX,
    U64_MAX,
    BestBy,
    BranchCase,
    Edge,
    ExpressionCondition,
    Graph,
    JoinAll,
    JoinLast,
    ModelDecision,
    NodeBody,
    SubgraphBody,
)

__all__ = ["parse_document", "parse_graph"]

_GRAPH_KEYS = ("schema_version", "nodes", "edges")
_NODE_KEYS = ("kind", "payload")
_EDGE_KEYS = ("from", "to", "label")
_TAGGED_KEYS = ("kind", "value")
_TAGGED_KEY_SET = frozenset(_TAGGED_KEYS)
_NODE_KEY_SET = frozenset(_NODE_KEYS)
_EDGE_KEY_SET = frozenset(_EDGE_KEYS)


def _one_of(names: tuple[str, ...]) -> str:
    return ", ".join(f"`{name}`" for name in names)


_PAYLOAD_KEYS = {
    kind: frozenset(spec.name for spec in specs) for kind, specs in PAYLOAD_FIELDS.items()
}
_PAYLOAD_EXPECTED = {
    kind: _one_of(tuple(spec.name for spec in specs)) for kind, specs in PAYLOAD_FIELDS.items()
}


def _where(path: str) -> str:
    return f" at {path}" if path else " at the top level"


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if value is True or value is False:
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return "a floating-point number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _fail(message: str, path: str) -> MalformedDocument:
    return MalformedDocument(message + _where(path), location=path, reason=message)


def _check_keys(obj: dict[str, Any], allowed: tuple[str, ...], path: str) -> None:
    for key in obj:
        if key not in allowed:
            raise _fail(f"unknown field `{key}`, expected one of {_one_of(allowed)}", path)


def _refuse_unknown(obj: dict[str, Any], allowed: frozenset[str], expected: str, path: str) -> None:
    """Raise for the first key of ``obj`` not ``allowed`` (called once a subset test failed,
    so that the common case costs one set comparison)."""
    for key in obj:
        if key not in allowed:
            raise _fail(f"unknown field `{key}`, expected {expected}", path)


def _required(obj: dict[str, Any], key: str, path: str) -> Any:
    value = obj.get(key, _ABSENT)
    if value is _ABSENT:
        raise _fail(f"missing field `{key}`", path)
    return value


def _array(value: Any, field: str, path: str) -> list[Any]:
    if type(value) is not list:
        raise _fail(f"invalid type for `{field}`: {_type_name(value)}, expected an array", path)
    return value


def _object(value: Any, what: str, path: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise _fail(f"invalid type: {_type_name(value)}, expected {what}", path)
    return value


def _string(value: Any, name: str, path: str) -> str:
    if type(value) is not str:
        raise _fail(f"invalid type for `{name}`: {_type_name(value)}, expected a string", path)
    return value


def _u32(value: Any, name: str, path: str) -> int:
    return _unsigned(value, name, path, U32_MAX)


def _unsigned(value: Any, name: str, path: str, maximum: int) -> int:
    if type(value) is not int or not 0 <= value <= maximum:
        if type(value) is int:
            raise _fail(f"invalid value for `{name}`: {value} is not in 0..={maximum}", path)
        raise _fail(
            f"invalid type for `{name}`: {_type_name(value)}, expected an integer in 0..={maximum}",
            path,
        )
    return value


def _on_bound(value: Any, path: str) -> str:
    if type(value) is not str:
        raise _fail(
            f"invalid type for `on_bound`: {_type_name(value)}, expected `join` or `fail`", path
        )
    if value not in ON_BOUND_WORDS:
        raise _fail(f"unknown variant `{value}` for `on_bound`, expected `join` or `fail`", path)
    return value


def _tagged(obj: Any, variants: tuple[str, ...], what: str, path: str) -> tuple[str, Any, bool]:
    """Read an adjacently tagged ``{"kind", "value"}`` object: (kind, value, has_value)."""
    obj = _object(obj, what, path)
    _check_keys(obj, _TAGGED_KEYS, path)
    if "kind" not in obj:
        raise _fail("missing field `kind`", path)
    kind = obj["kind"]
    if type(kind) is not str or kind not in variants:
        shown = f"`{kind}`" if type(kind) is str else _type_name(kind)
        raise _fail(f"unknown variant {shown}, expected one of {_one_of(variants)}", path)
    return kind, obj.get("value"), "value" in obj


def _unit(kind: str, value: Any, path: str) -> None:
    if value is not None:
        raise _fail(f"`{kind}` carries no value, found {_type_name(value)}", path)


def _condition(raw: Any, path: str) -> ExpressionCondition | ModelDecision:
    """A branch case's ``when``: one message for every wrong shape (spec 08, section 3)."""
    if type(raw) is dict and raw.keys() <= _TAGGED_KEY_SET:
        kind = raw.get("kind")
        value = raw.get("value")
        if kind == "expression" and type(value) is str:
            return ExpressionCondition(value)
        if kind == "model_decision" and value is None:
            return ModelDecision()
    raise _fail(
        "a branch condition must be an object shaped "
        '`{"kind": "expression", "value": "<expr>"}` or `{"kind": "model_decision"}`; '
        f"got {_describe(raw)}",
        path,
    )


def _describe(value: Any) -> str:
    """The reference's words for a malformed ``when``: its kind, then the value as compact
    JSON with keys ascending (what ``serde_json`` writes without ``preserve_order``)."""
    if value is None:
        return "null"
    text = canonical_json(value).decode("utf-8")
    if value is True or value is False:
        return f"a bare boolean {text}"
    if isinstance(value, (int, float)):
        return f"a bare number {text}"
    if isinstance(value, str):
        return f"a bare string {text}"
    if isinstance(value, list):
        return f"a bare array {text}"
    return f"an object {text}"


def _cases(raw: Any, path: str) -> tuple[tuple[BranchCase, ...], list[dict[str, Any]]]:
    _array(raw, "cases", path)
    cases = []
    documents = []
    unchanged = True
    for index, item in enumerate(raw):
        case_path = f"{path}.cases[{index}]"
        item = _object(item, "a branch case object", case_path)
        _check_keys(item, ("name", "when"), case_path)
        if "name" not in item:
            raise _fail("missing field `name`", case_path)
        if "when" not in item:
            raise _fail("missing field `when`", case_path)
        name = _string(item["name"], "name", case_path)
        when = _condition(item["when"], case_path + ".when")
        cases.append(BranchCase(name, when))
        if isinstance(when, ExpressionCondition):
            documents.append(
                {"name": name, "when": {"kind": "expression", "value": when.expression}}
            )
        else:
            documents.append({"name": name, "when": {"kind": "model_decision"}})
            unchanged = unchanged and "value" not in item["when"]
    return tuple(cases), (raw if unchanged else documents)


def _body(raw: Any, path: str) -> tuple[NodeBody | SubgraphBody, dict[str, Any]]:
    kind, value, has_value = _tagged(raw, BODY_KINDS, "a body object", path)
    if not has_value:
        raise _fail("missing field `value`", path)
    if kind == "node":
        return NodeBody(_string(value, "value", path)), raw
    graph = _graph(value, path + ".value")
    if graph._document is value:
        return SubgraphBody(graph), raw
    return SubgraphBody(graph), {"kind": "subgraph", "value": graph._document}


def _join(raw: Any, path: str) -> tuple[BestBy | JoinLast | JoinAll, dict[str, Any]]:
    kind, value, has_value = _tagged(raw, JOIN_KINDS, "a join object", path)
    if kind == "best_by":
        if not has_value:
            raise _fail("missing field `value`", path)
        return BestBy(_string(value, "value", path)), raw
    _unit(kind, value, path)
    join = JoinLast() if kind == "last" else JoinAll()
    return join, ({"kind": kind} if has_value else raw)


def _string_map(raw: Any, name: str, path: str) -> dict[str, str]:
    if type(raw) is not dict:
        raise _fail(f"invalid type for `{name}`: {_type_name(raw)}, expected an object", path)
    for key, value in raw.items():
        if type(value) is not str:
            raise _fail(
                f"invalid type for `{name}.{key}`: {_type_name(value)}, expected a string", path
            )
    return raw


_STRING, _JSON, _U32, _STRING_MAP, _CASES, _BODY, _JOIN, _U64, _ON_BOUND = range(9)
_TYPE_CODES = {
    "string": _STRING,
    "json": _JSON,
    "u32": _U32,
    "u64": _U64,
    "on_bound": _ON_BOUND,
    "string_map": _STRING_MAP,
    "cases": _CASES,
    "body": _BODY,
    "join": _JOIN,
}
# Per kind: (name, type code, required, optional) in wire order, for a tight loop.
_FIELD_TABLE = {
    kind: tuple((spec.name, _TYPE_CODES[spec.type], spec.required, spec.optional) for spec in specs)
    for kind, specs in PAYLOAD_FIELDS.items()
}
_ABSENT = object()


def _payload(kind: str, raw: Any, path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read a payload: (constructor arguments, normalised document payload).

    The normalised payload is ``raw`` itself when nothing needs dropping or
    rewriting (the common case), which keeps parsing close to the cost of reading.
    """
    if type(raw) is not dict:
        raise _fail(f"invalid type: {_type_name(raw)}, expected a `{kind}` payload object", path)
    allowed = _PAYLOAD_KEYS[kind]
    if not raw.keys() <= allowed:
        for key in raw:
            if key not in allowed:
                raise _fail(
                    f"unknown field `{key}`, expected one of {_PAYLOAD_EXPECTED[kind]}", path
                )
    arguments: dict[str, Any] = {}
    # The JSON form of the structured fields (cases, body, join): a rebuilt payload
    # takes these, never the model objects in ``arguments``.
    structured: dict[str, Any] = {}
    changed = False
    normalised: Any  # the JSON form of one structured field
    for name, code, required, optional in _FIELD_TABLE[kind]:
        value = raw.get(name, _ABSENT)
        if value is _ABSENT:
            if required:
                raise _fail(f"missing field `{name}`", path)
            continue
        if value is None and optional:
            changed = True
            continue
        if code == _STRING:
            if type(value) is not str:
                _string(value, name, path)
        elif code == _U32:
            _u32(value, name, path)
        elif code == _U64:
            _unsigned(value, name, path, U64_MAX)
        elif code == _ON_BOUND:
            _on_bound(value, path)
        elif code == _STRING_MAP:
            _string_map(value, name, path)
            changed = changed or not value
        elif code in (_CASES, _BODY, _JOIN):
            if code == _CASES:
                arguments[name], normalised = _cases(value, path)
            elif code == _BODY:
                arguments[name], normalised = _body(value, f"{path}.body")
            else:
                arguments[name], normalised = _join(value, f"{path}.join")
            structured[name] = normalised
            changed = changed or normalised is not value
            continue
        arguments[name] = value
    if not changed:
        return arguments, raw
    document = {}
    for name, _, _, _ in _FIELD_TABLE[kind]:
        if name in structured:
            document[name] = structured[name]
        elif name in arguments and not (name == "input" and not arguments[name]):
            document[name] = arguments[name]
    return arguments, document


def _node(raw: Any, path: str) -> tuple[Any, dict[str, Any]]:
    raw = _object(raw, "a node object", path)
    if not raw.keys() <= _NODE_KEY_SET:
        _refuse_unknown(raw, _NODE_KEY_SET, "`kind` or `payload`", path)
    kind = _required(raw, "kind", path)
    if type(kind) is not str or kind not in PAYLOAD_FIELDS:
        shown = f"`{kind}`" if type(kind) is str else _type_name(kind)
        raise _fail(f"unknown node kind {shown}, expected one of {_one_of(KINDS)}", path)
    payload = _required(raw, "payload", path)
    arguments, document = _payload(kind, payload, path + ".payload")
    node = NODE_CLASSES[kind](**arguments)
    if document is payload:
        return node, raw
    return node, {"kind": kind, "payload": document}


def _edge(raw: Any, path: str) -> tuple[Edge, dict[str, Any]]:
    raw = _object(raw, "an edge object", path)
    if not raw.keys() <= _EDGE_KEY_SET:
        _refuse_unknown(raw, _EDGE_KEY_SET, f"one of {_one_of(_EDGE_KEYS)}", path)
    source = _required(raw, "from", path)
    target = _required(raw, "to", path)
    if type(source) is not str:
        _string(source, "from", path)
    if type(target) is not str:
        _string(target, "to", path)
    label = raw.get("label")
    if label is None:
        if "label" in raw:
            return Edge(source, target), {"from": source, "to": target}
        return Edge(source, target), raw
    if type(label) is not str:
        _string(label, "label", path)
    return Edge(source, target, label), raw


def _graph(raw: Any, path: str) -> Graph:
    raw = _object(raw, "a graph document object", path)
    prefix = f"{path}." if path else ""
    _check_keys(raw, _GRAPH_KEYS, path)
    version = _u32(_required(raw, "schema_version", path), "schema_version", path)
    raw_nodes = _array(_required(raw, "nodes", path), "nodes", path)
    raw_edges = _array(raw.get("edges", []), "edges", path)
    nodes = []
    node_documents = []
    fast = _FAST_PAYLOAD
    for index, item in enumerate(raw_nodes):
        # The fast path takes a node that needs no rewriting; anything else,
        # errors included, goes through the general path that explains itself.
        if type(item) is dict and len(item) == 2:
            kind = item.get("kind")
            payload = item.get("payload")
            if type(kind) is str and kind in fast and type(payload) is dict:
                node = fast[kind](payload, prefix, index)
                if node is not None:
                    nodes.append(node)
                    node_documents.append(item)
                    continue
        node, document = _node(item, f"{prefix}nodes[{index}]")
        nodes.append(node)
        node_documents.append(document)
    edges = []
    edge_documents = []
    for index, item in enumerate(raw_edges):
        if type(item) is dict:
            source = item.get("from")
            target = item.get("to")
            label = item.get("label", _ABSENT)
            if (
                type(source) is str
                and type(target) is str
                and len(item) == (2 if label is _ABSENT else 3)
                and (label is _ABSENT or type(label) is str)
            ):
                edges.append(Edge(source, target, label if type(label) is str else None))
                edge_documents.append(item)
                continue
        edge, document = _edge(item, f"{prefix}edges[{index}]")
        edges.append(edge)
        edge_documents.append(document)
    if (
        "edges" in raw
        and all(map(operator.is_, node_documents, raw_nodes))
        and all(map(operator.is_, edge_documents, raw_edges))
    ):
        document = raw
    else:
        document = {"schema_version": version, "nodes": node_documents, "edges": edge_documents}
    return Graph(version, tuple(nodes), tuple(edges), document)


def _fast_payload_source(kind: str) -> str:
    """Source of a parser for one kind's payload that needs no rewriting.

    Generated from :data:`PAYLOAD_FIELDS` (as :mod:`dataclasses` generates
    ``__init__``) so that the common case runs as straight-line code. It returns
    ``None`` whenever the payload is not plainly valid and already normalised;
    the general path then parses it again and explains any error.
    """
    lines = [
        f"def fast_{kind}(p, prefix, index):",
        "    if not p.keys() <= KEYS:",
        "        return None",
    ]
    variables = {}
    for number, (name, code, required, optional) in enumerate(_FIELD_TABLE[kind]):
        var = f"v{number}"
        variables[name] = var
        lines.append(f"    {var} = p.get({name!r}, ABSENT)")
        if code in (_CASES, _BODY, _JOIN):
            helper = {_CASES: "cases", _BODY: "body", _JOIN: "join"}[code]
            suffix = "" if code == _CASES else f".{name}"
            lines += [
                f"    if {var} is ABSENT:",
                "        return None",
                f"    {var}, normalised = {helper}("
                f"{var}, f'{{prefix}}nodes[{{index}}].payload{suffix}')",
                f"    if normalised is not p[{name!r}]:",
                "        return None",
            ]
            continue
        if code == _JSON:
            if optional:
                lines += [
                    f"    if {var} is ABSENT:",
                    f"        {var} = None",
                    f"    elif {var} is None:",
                    "        return None",
                ]
            else:
                lines += [f"    if {var} is ABSENT:", "        return None"]
            continue
        check = {
            _STRING: f"type({var}) is not str",
            _U32: f"type({var}) is not int or not 0 <= {var} <= U32_MAX",
            _U64: f"type({var}) is not int or not 0 <= {var} <= U64_MAX",
            _ON_BOUND: f"{var} not in ON_BOUND_WORDS",
            _STRING_MAP: (
                f"type({var}) is not dict or not {var}"
                f" or not all(type(x) is str for x in {var}.values())"
            ),
        }[code]
        if required:
            lines += [f"    if {check}:", "        return None"]
        else:
            default = "{}" if code == _STRING_MAP else "None"
            lines += [
                f"    if {var} is ABSENT:",
                f"        {var} = {default}",
                f"    elif {check}:",
                "        return None",
            ]
    # Positional arguments in the dataclass's own field order: the cheapest call.
    order = [field.name for field in dataclasses.fields(NODE_CLASSES[kind])]
    lines.append(f"    return CLASS({', '.join(variables[name] for name in order)})")
    return "\n".join(lines)


def _build_fast_payload() -> dict[str, Any]:
    parsers = {}
    for kind in PAYLOAD_FIELDS:
        namespace: dict[str, Any] = {
            "KEYS": _PAYLOAD_KEYS[kind],
            "ABSENT": _ABSENT,
            "U32_MAX": U32_MAX,
            "U64_MAX": U64_MAX,
            "ON_BOUND_WORDS": ON_BOUND_WORDS,
            "CLASS": NODE_CLASSES[kind],
            "cases": _cases,
            "body": _body,
            "join": _join,
        }
        exec(_fast_payload_source(kind), namespace)
        parsers[kind] = namespace[f"fast_{kind}"]
    return parsers


_FAST_PAYLOAD = _build_fast_payload()


def parse_graph(value: Any) -> Graph:
    """Parse a document already read as JSON (by :func:`read_json`)."""
    try:
        return _graph(value, "")
    except RecursionError:
        # Unreachable through read_json (nesting is capped at 127 levels), but a
        # caller may hand us a value built in code.
        raise MalformedDocument("the document nests too deeply") from None


def parse_document(data: bytes | bytearray | memoryview | str) -> Graph:
    """Read and parse a graph document strictly; raises :class:`MalformedDocument`."""
    try:
        value = read_json(data)
    except JsonError as error:
        raise MalformedDocument(str(error), at=error.at) from None
    return parse_graph(value)
