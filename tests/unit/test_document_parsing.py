"""Strict parsing of graph documents and their wire form (spec 01; seed 000's ``mod tests``).

A graph is a control document: unknown keys at every level, wrong types, out-of-range u32s
and ``null`` where a value is required are refused, always as one ``MalformedDocument``.
The wire form is compact, fields in the spec's table order, free JSON values key-sorted.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editor.graph.errors import MalformedDocument
from editor.graph.jsonio import canonical_json, canonical_text, read_json
from editor.graph.model import (
    AgentNode,
    BestBy,
    Edge,
    FoldNode,
    GateNode,
    Graph,
    JoinAll,
    JoinLast,
    NodeBody,
    ToolNode,
)
from editor.graph.parsing import parse_document, parse_graph
from editor.graph.wire import canonical_graph, graph_hash, wire_json
from tests.unit.strategies import json_values

HASH_A = "sha256:" + "a" * 64

#: Spec 01's payload table, in wire order.
ORDER = {
    "agent": ["id", "agent_hash", "name", "input_schema", "output_schema"],
    "tool": ["id", "tool", "name", "input", "input_schema", "output_schema"],
    "gate": ["id", "name", "prompt", "approval_schema"],
    "branch": ["id", "name", "on", "agent_hash", "cases"],
    "map": ["id", "name", "over", "concurrency", "body", "output_schema"],
    "fold": [
        "id",
        "name",
        "body",
        "max_iterations",
        "stop_when",
        "join",
        "on_bound",
        "accumulator_schema",
    ],
    "delay": ["id", "name", "seconds"],
}
#: The `?` fields: absent or null both mean unset.
OPTIONAL = {
    "agent": ["name", "input_schema", "output_schema"],
    "tool": ["name", "input_schema", "output_schema"],
    "gate": ["name", "prompt"],
    "branch": ["name", "on", "agent_hash"],
    "map": ["name", "output_schema"],
    "fold": ["name", "on_bound", "accumulator_schema"],
    "delay": ["name"],
}
REQUIRED = {
    kind: [name for name in fields if name not in OPTIONAL[kind] and name != "input"]
    for kind, fields in ORDER.items()
}
FREE = {"input_schema", "output_schema", "approval_schema", "accumulator_schema", "input"}
UNIT_VARIANTS = {"model_decision", "last", "all"}

#: One payload per kind with every field set, keys deliberately out of wire order.
FULL = {
    "agent": {
        "output_schema": {"type": "object", "properties": {"b": {}, "a": {}}},
        "input_schema": {"z": 1, "a": [{"y": 2, "x": 3}]},
        "name": "Research",
        "agent_hash": HASH_A,
        "id": "a",
    },
    "tool": {
        "output_schema": {"type": "string"},
        "input_schema": {"type": "object"},
        "input": {"z": "route.z", "a": "route.a"},
        "name": "Publish",
        "tool": "echo",
        "id": "t",
    },
    "gate": {
        "approval_schema": {"type": "object", "required": ["b", "a"]},
        "prompt": "Approve?",
        "name": "Review",
        "id": "g",
    },
    "branch": {
        "cases": [
            {"when": {"value": "score >= 1", "kind": "expression"}, "name": "high"},
            {"when": {"kind": "model_decision"}, "name": "ask"},
        ],
        "agent_hash": HASH_A,
        "on": "review",
        "name": "Decide",
        "id": "b",
    },
    "map": {
        "output_schema": {"type": "array"},
        "body": {"value": "a", "kind": "node"},
        "concurrency": 4,
        "over": "items",
        "name": "Each",
        "id": "m",
    },
    "fold": {
        "accumulator_schema": {"type": "object"},
        "join": {"value": "score", "kind": "best_by"},
        "on_bound": "fail",
        "stop_when": "score >= 0.85",
        "max_iterations": 3,
        "body": {"value": "a", "kind": "node"},
        "name": "Refine",
        "id": "f",
    },
    "delay": {"seconds": 3600, "name": "Cool off", "id": "d"},
}
#: What each FULL payload must be written as, byte for byte.
FULL_WIRE = {
    "agent": (
        '{"kind":"agent","payload":{"id":"a","agent_hash":"' + HASH_A + '","name":"Research",'
        '"input_schema":{"a":[{"x":3,"y":2}],"z":1},'
        '"output_schema":{"properties":{"a":{},"b":{}},"type":"object"}}}'
    ),
    "tool": (
        '{"kind":"tool","payload":{"id":"t","tool":"echo","name":"Publish",'
        '"input":{"a":"route.a","z":"route.z"},"input_schema":{"type":"object"},'
        '"output_schema":{"type":"string"}}}'
    ),
    "gate": (
        '{"kind":"gate","payload":{"id":"g","name":"Review","prompt":"Approve?",'
        '"approval_schema":{"required":["b","a"],"type":"object"}}}'
    ),
    "branch": (
        '{"kind":"branch","payload":{"id":"b","name":"Decide","on":"review","agent_hash":"'
        + HASH_A
        + '","cases":[{"name":"high","when":{"kind":"expression","value":"score >= 1"}},'
        '{"name":"ask","when":{"kind":"model_decision"}}]}}'
    ),
    "map": (
        '{"kind":"map","payload":{"id":"m","name":"Each","over":"items","concurrency":4,'
        '"body":{"kind":"node","value":"a"},"output_schema":{"type":"array"}}}'
    ),
    "fold": (
        '{"kind":"fold","payload":{"id":"f","name":"Refine","body":{"kind":"node","value":"a"},'
        '"max_iterations":3,"stop_when":"score >= 0.85","join":{"kind":"best_by","value":"score"},'
        '"on_bound":"fail","accumulator_schema":{"type":"object"}}}'
    ),
    "delay": '{"kind":"delay","payload":{"id":"d","name":"Cool off","seconds":3600}}',
}
KINDS = list(ORDER)


def node(kind: str, **changes: Any) -> dict[str, Any]:
    payload = copy.deepcopy(FULL[kind])
    payload.update(changes)
    return {"kind": kind, "payload": payload}


def document(*nodes: dict[str, Any], **top: Any) -> dict[str, Any]:
    value: dict[str, Any] = {"schema_version": 1, "nodes": list(nodes)}
    value.update(top)
    return value


def text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def wire_of_nodes(*node_wires: str, edges: str = "") -> str:
    return '{"schema_version":1,"nodes":[' + ",".join(node_wires) + '],"edges":[' + edges + "]}"


def refused(data: str | bytes | dict[str, Any]) -> str:
    """Parse ``data`` expecting exactly one MalformedDocument; return its message."""
    if isinstance(data, dict):
        data = text(data)
    with pytest.raises(MalformedDocument) as caught:
        parse_document(data)
    assert caught.value.code == "malformed_document"
    message = str(caught.value)
    assert message
    return message


# --- seed 000's tests ---------------------------------------------------------------------------


def sample() -> Graph:
    """Seed 000's ``sample()``: research (agent) -> approve (gate)."""
    return Graph(
        1,
        (
            AgentNode(id="research", agent_hash=HASH_A, output_schema={"type": "object"}),
            GateNode(
                id="approve", prompt="Approve publication?", approval_schema={"type": "object"}
            ),
        ),
        (Edge("research", "approve"),),
    )


def test_round_trips_through_json() -> None:
    original = sample()
    restored = parse_document(wire_json(original))
    assert restored == original
    assert wire_json(restored) == wire_json(original)
    assert graph_hash(restored) == graph_hash(original)


def test_node_uses_adjacent_kind_payload_shape() -> None:
    graph = Graph(1, (ToolNode(id="publish", tool="http_post"),))
    assert wire_json(graph) == wire_of_nodes(
        '{"kind":"tool","payload":{"id":"publish","tool":"http_post"}}'
    )


def test_node_name_is_present_only_when_set() -> None:
    named = Graph(1, (ToolNode(id="publish", tool="http_post", name="Publish the draft"),))
    assert wire_json(named) == wire_of_nodes(
        '{"kind":"tool","payload":{"id":"publish","tool":"http_post","name":"Publish the draft"}}'
    )
    unnamed = Graph(1, (ToolNode(id="publish", tool="http_post"),))
    assert wire_json(unnamed) == wire_of_nodes(
        '{"kind":"tool","payload":{"id":"publish","tool":"http_post"}}'
    ), "an unset name must not appear on the wire"


def test_fold_node_serializes_with_join_and_body_shapes() -> None:
    fold = FoldNode(
        id="refine",
        body=NodeBody("tailor"),
        max_iterations=3,
        stop_when="score >= 0.85",
        join=BestBy("score"),
    )
    graph = Graph(1, (fold,))
    expected = (
        '{"kind":"fold","payload":{"id":"refine","body":{"kind":"node","value":"tailor"},'
        '"max_iterations":3,"stop_when":"score >= 0.85","join":{"kind":"best_by","value":"score"}}}'
    )
    assert wire_json(graph) == wire_of_nodes(expected)
    restored = parse_document(wire_json(graph))
    assert restored.nodes == (fold,), "fold round trip changed the value"


@pytest.mark.parametrize(
    ("join", "shape"), [(JoinLast(), '{"kind":"last"}'), (JoinAll(), '{"kind":"all"}')]
)
def test_fold_join_unit_variants_carry_only_the_kind_tag(join: Any, shape: str) -> None:
    fold = FoldNode(id="f", body=NodeBody("a"), max_iterations=1, stop_when="x", join=join)
    wire = wire_json(Graph(1, (fold,)))
    assert f'"join":{shape}' in wire
    assert parse_document(wire).nodes[0].join == join


def test_unknown_document_field_is_rejected() -> None:
    message = refused('{"schema_version":1,"nodes":[],"edges":[],"surprise":true}')
    assert "surprise" in message, f"error should name the stray field: {message}"


def test_unknown_payload_field_is_rejected() -> None:
    message = refused(
        '{"schema_version":1,"nodes":[{"kind":"gate","payload":{"id":"g","approval_schema":{},"oops":1}}]}'
    )
    assert "oops" in message, f"error should name the stray field: {message}"


def test_unknown_node_envelope_field_is_rejected() -> None:
    message = refused(
        '{"schema_version":1,"nodes":[{"kind":"gate","payload":{"id":"g","approval_schema":{}},"extra":1}]}'
    )
    assert "extra" in message, f"error should name the stray key: {message}"


# --- the wire form ------------------------------------------------------------------------------


def test_the_wire_bytes_of_01_for_a_tool_and_a_fold_node() -> None:
    source = """
    { "edges": [], "nodes": [
        {"payload": {"tool": "http_post", "id": "publish"}, "kind": "tool"},
        {"payload": {"join": {"value": "score", "kind": "best_by"}, "stop_when": "score >= 0.85",
                     "max_iterations": 3, "body": {"value": "tailor", "kind": "node"},
                     "id": "refine"},
         "kind": "fold"}
      ], "schema_version": 1 }
    """
    assert wire_json(parse_document(source)) == wire_of_nodes(
        '{"kind":"tool","payload":{"id":"publish","tool":"http_post"}}',
        '{"kind":"fold","payload":{"id":"refine","body":{"kind":"node","value":"tailor"},'
        '"max_iterations":3,"stop_when":"score >= 0.85",'
        '"join":{"kind":"best_by","value":"score"}}}',
    )


@pytest.mark.parametrize("kind", KINDS)
def test_every_payload_field_is_written_in_the_table_order(kind: str) -> None:
    wire = wire_json(parse_document(text(document(node(kind)))))
    assert wire == wire_of_nodes(FULL_WIRE[kind])
    assert list(json.loads(wire)["nodes"][0]["payload"]) == ORDER[kind]


def test_the_document_keys_are_written_schema_version_nodes_edges() -> None:
    wire = wire_json(parse_document('{"edges":[],"nodes":[],"schema_version":1}'))
    assert wire == '{"schema_version":1,"nodes":[],"edges":[]}'


def test_an_edge_is_written_from_to_label() -> None:
    source = document(edges=[{"label": "yes", "to": "b", "from": "a"}, {"to": "d", "from": "c"}])
    assert wire_json(parse_document(text(source))) == (
        '{"schema_version":1,"nodes":[],"edges":'
        '[{"from":"a","to":"b","label":"yes"},{"from":"c","to":"d"}]}'
    )


def test_free_json_values_are_written_with_sorted_keys_and_arrays_in_order() -> None:
    schema = {"z": {"d": [3, {"q": 1, "p": 2}], "c": None}, "a": [2, 1], "é": 1, "Z": 0}
    source = document(node("agent", input_schema=schema, output_schema=None, name=None))
    wire = wire_json(parse_document(text(source)))
    assert '"input_schema":{"Z":0,"a":[2,1],"z":{"c":null,"d":[3,{"p":2,"q":1}]},"é":1}' in wire


def test_an_embedded_subgraph_is_written_recursively_in_wire_order() -> None:
    inner = {
        "edges": [{"to": "y", "from": "x", "label": None}],
        "nodes": [{"payload": {"tool": "echo", "id": "x", "input": {}}, "kind": "tool"}],
        "schema_version": 1,
    }
    source = document(node("map", body={"value": inner, "kind": "subgraph"}, output_schema=None))
    wire = wire_json(parse_document(text(source)))
    assert wire == wire_of_nodes(
        '{"kind":"map","payload":{"id":"m","name":"Each","over":"items","concurrency":4,'
        '"body":{"kind":"subgraph","value":{"schema_version":1,'
        '"nodes":[{"kind":"tool","payload":{"id":"x","tool":"echo"}}],'
        '"edges":[{"from":"x","to":"y"}]}}}}'
    )


def test_absent_edges_are_written_as_an_empty_list_at_every_level() -> None:
    inner = {"schema_version": 1, "nodes": []}
    source = {
        "schema_version": 1,
        "nodes": [
            {
                "kind": "fold",
                "payload": {
                    "id": "f",
                    "body": {"kind": "subgraph", "value": inner},
                    "max_iterations": 1,
                    "stop_when": "x",
                    "join": {"kind": "all"},
                },
            }
        ],
    }
    wire = wire_json(parse_document(text(source)))
    assert wire == wire_of_nodes(
        '{"kind":"fold","payload":{"id":"f","body":{"kind":"subgraph","value":'
        '{"schema_version":1,"nodes":[],"edges":[]}},"max_iterations":1,"stop_when":"x",'
        '"join":{"kind":"all"}}}'
    )


def test_an_empty_tool_input_is_omitted() -> None:
    source = document({"kind": "tool", "payload": {"id": "t", "tool": "echo", "input": {}}})
    assert wire_json(parse_document(text(source))) == wire_of_nodes(
        '{"kind":"tool","payload":{"id":"t","tool":"echo"}}'
    )


def test_strings_in_the_wire_form_are_escaped_like_the_canonical_form() -> None:
    name = 'a"b\\c\n\x01/é😀\x7f'
    source = document({"kind": "tool", "payload": {"id": "t", "tool": "echo", "name": name}})
    wire = wire_json(parse_document(text(source)))
    assert '"name":"a\\"b\\\\c\\n\\u0001/é😀\x7f"' in wire


def test_minus_zero_in_a_schema_is_written_back_as_minus_zero_point_zero() -> None:
    source = (
        '{"schema_version":1,"nodes":[{"kind":"gate","payload":{"id":"g",'
        '"approval_schema":{"minimum":-0,"maximum":1e-6,"big":18446744073709551616}}}]}'
    )
    graph = parse_document(source)
    assert '"approval_schema":{"big":1.8446744073709552e+19,"maximum":1e-6,"minimum":-0.0}' in (
        wire_json(graph)
    )
    assert b'"minimum":-0.0' in canonical_graph(graph)


def test_the_wire_form_is_the_same_whether_or_not_a_string_forces_the_slow_path() -> None:
    # Without "e-" anywhere the writer takes its fast path; a name with "e-" forces the slow one.
    schema = '{"b":[1e16,-0,1.5,0.0001,18446744073709551615,1E2],"a":"x"}'
    written = '"input_schema":{"a":"x","b":[1e+16,-0.0,1.5,0.0001,18446744073709551615,100.0]}'
    for name in ("plain", "has e- inside"):
        source = (
            '{"schema_version":1,"nodes":[{"kind":"agent","payload":{"id":"a",'
            f'"agent_hash":"h","name":"{name}","input_schema":{schema}}}}}]}}'
        )
        wire = wire_json(parse_document(source))
        assert wire == wire_of_nodes(
            f'{{"kind":"agent","payload":{{"id":"a","agent_hash":"h","name":"{name}",{written}}}}}'
        )


# --- explicit nulls -----------------------------------------------------------------------------


OPTIONAL_CASES = [(kind, name) for kind, names in OPTIONAL.items() for name in names]


@pytest.mark.parametrize(
    ("kind", "field"), OPTIONAL_CASES, ids=[f"{k}.{f}" for k, f in OPTIONAL_CASES]
)
def test_an_explicit_null_for_an_optional_field_parses_and_is_dropped(
    kind: str, field: str
) -> None:
    with_null = parse_document(text(document(node(kind, **{field: None}))))
    without = node(kind)
    del without["payload"][field]
    absent = parse_document(text(document(without)))
    assert wire_json(with_null) == wire_json(absent)
    assert field not in json.loads(wire_json(with_null))["nodes"][0]["payload"]
    assert graph_hash(with_null) == graph_hash(absent)
    assert getattr(with_null.nodes[0], field) is None


def test_an_explicit_null_edge_label_parses_and_is_dropped() -> None:
    graph = parse_document(text(document(edges=[{"from": "a", "to": "b", "label": None}])))
    assert wire_json(graph) == '{"schema_version":1,"nodes":[],"edges":[{"from":"a","to":"b"}]}'
    assert graph.edges[0].label is None


def test_approval_schema_null_parses_and_is_kept() -> None:
    graph = parse_document(text(document(node("gate", approval_schema=None))))
    assert '"approval_schema":null' in wire_json(graph)
    assert graph.nodes[0].approval_schema is None


def test_a_missing_approval_schema_is_an_error() -> None:
    gate = node("gate")
    del gate["payload"]["approval_schema"]
    assert "`approval_schema`" in refused(document(gate))


NULL_REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("edges", document(edges=None), "edges"),
    ("nodes", {"schema_version": 1, "nodes": None}, "nodes"),
    ("schema_version", {"schema_version": None, "nodes": []}, "schema_version"),
    ("tool input", document(node("tool", input=None)), "input"),
    ("tool input value", document(node("tool", input={"a": None})), "input"),
    (
        "case name",
        document(node("branch", cases=[{"name": None, "when": {"kind": "model_decision"}}])),
        "name",
    ),
    ("case when", document(node("branch", cases=[{"name": "c", "when": None}])), "when"),
    ("case list", document(node("branch", cases=None)), "cases"),
    (
        "expression value",
        document(
            node("branch", cases=[{"name": "c", "when": {"kind": "expression", "value": None}}])
        ),
        "value",
    ),
    (
        "condition kind",
        document(node("branch", cases=[{"name": "c", "when": {"kind": None}}])),
        "kind",
    ),
    ("node body value", document(node("map", body={"kind": "node", "value": None})), "value"),
    (
        "subgraph body value",
        document(node("map", body={"kind": "subgraph", "value": None})),
        "value",
    ),
    ("body kind", document(node("map", body={"kind": None, "value": "a"})), "kind"),
    ("best_by value", document(node("fold", join={"kind": "best_by", "value": None})), "value"),
    ("join kind", document(node("fold", join={"kind": None})), "kind"),
    ("edge from", document(edges=[{"from": None, "to": "b"}]), "from"),
    ("edge to", document(edges=[{"from": "a", "to": None}]), "to"),
    ("node kind", document({"kind": None, "payload": {}}), "kind"),
    ("node payload", document({"kind": "gate", "payload": None}), "payload"),
] + [
    (f"{kind}.{field}", document(node(kind, **{field: None})), field)
    for kind in KINDS
    for field in REQUIRED[kind]
    if field != "approval_schema"
]


@pytest.mark.parametrize(
    ("value", "field"), [case[1:] for case in NULL_REFUSED], ids=[c[0] for c in NULL_REFUSED]
)
def test_null_where_a_value_is_required_is_an_error(value: dict[str, Any], field: str) -> None:
    refused(value)


@pytest.mark.parametrize(
    ("kind", "field"),
    [(kind, field) for kind in KINDS for field in REQUIRED[kind]],
    ids=[f"{kind}.{field}" for kind in KINDS for field in REQUIRED[kind]],
)
def test_a_missing_required_field_is_an_error_naming_it(kind: str, field: str) -> None:
    value = node(kind)
    del value["payload"][field]
    message = refused(document(value))
    assert f"`{field}`" in message
    assert "nodes[0].payload" in message


@pytest.mark.parametrize("field", ["schema_version", "nodes"])
def test_a_missing_document_field_is_an_error_naming_it(field: str) -> None:
    value = document()
    del value[field]
    assert f"`{field}`" in refused(value)


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("node kind", document({"payload": {}})),
        ("node payload", document({"kind": "gate"})),
        ("case name", document(node("branch", cases=[{"when": {"kind": "model_decision"}}]))),
        ("case when", document(node("branch", cases=[{"name": "c"}]))),
        ("condition kind", document(node("branch", cases=[{"name": "c", "when": {}}]))),
        (
            "expression value",
            document(node("branch", cases=[{"name": "c", "when": {"kind": "expression"}}])),
        ),
        ("body kind", document(node("map", body={"value": "a"}))),
        ("node body value", document(node("map", body={"kind": "node"}))),
        ("subgraph body value", document(node("fold", body={"kind": "subgraph"}))),
        ("join kind", document(node("fold", join={"value": "score"}))),
        ("best_by value", document(node("fold", join={"kind": "best_by"}))),
        ("edge from", document(edges=[{"to": "b"}])),
        ("edge to", document(edges=[{"from": "a"}])),
    ],
)
def test_a_missing_required_key_in_a_sub_object_is_an_error(
    where: str, value: dict[str, Any]
) -> None:
    refused(value)


# --- unit variants ------------------------------------------------------------------------------


def _with_unit(variant: str, tagged: dict[str, Any]) -> dict[str, Any]:
    if variant == "model_decision":
        return document(node("branch", cases=[{"name": "c", "when": tagged}]))
    return document(node("fold", join=tagged))


@pytest.mark.parametrize("variant", sorted(UNIT_VARIANTS))
def test_a_unit_variant_with_value_null_parses_and_is_written_without_it(variant: str) -> None:
    graph = parse_document(text(_with_unit(variant, {"kind": variant, "value": None})))
    plain = parse_document(text(_with_unit(variant, {"kind": variant})))
    assert f'{{"kind":"{variant}"}}' in wire_json(graph)
    assert wire_json(graph) == wire_json(plain)
    assert graph_hash(graph) == graph_hash(plain)


@pytest.mark.parametrize("variant", sorted(UNIT_VARIANTS))
@pytest.mark.parametrize("payload", [1, 0, False, "", "x", [], {}], ids=repr)
def test_a_unit_variant_with_a_value_is_refused(variant: str, payload: Any) -> None:
    refused(_with_unit(variant, {"kind": variant, "value": payload}))


@pytest.mark.parametrize(
    "value",
    [
        document(node("branch", cases=[{"name": "c", "when": {"kind": "maybe"}}])),
        document(node("map", body={"kind": "graph", "value": "a"})),
        document(node("fold", join={"kind": "first"})),
        document(node("fold", join={"kind": "Last"})),
        document(node("fold", join={"kind": 1})),
    ],
    ids=["condition", "body", "join", "join case-sensitive", "join not a string"],
)
def test_an_unknown_variant_is_refused(value: dict[str, Any]) -> None:
    refused(value)


# --- u32 fields ---------------------------------------------------------------------------------

U32_REFUSED = [
    "true",
    "false",
    "1.0",
    '"3"',
    "-1",
    "-0",
    "-0.0",
    "4294967296",
    "18446744073709551616",
    "1e0",
    "0.5",
    "[]",
    "{}",
    "[1]",
]
U32_ACCEPTED = ["0", "1", "4294967295"]


def _u32_document(field: str, raw: str) -> str:
    if field == "schema_version":
        return '{"schema_version":' + raw + ',"nodes":[]}'
    kind = "map" if field == "concurrency" else "fold"
    return text(document(node(kind, **{field: "@RAW@"}))).replace('"@RAW@"', raw)


@pytest.mark.parametrize("field", ["schema_version", "concurrency", "max_iterations"])
@pytest.mark.parametrize("raw", U32_REFUSED)
def test_a_u32_field_refuses_everything_but_an_integer_in_range(field: str, raw: str) -> None:
    assert f"`{field}`" in refused(_u32_document(field, raw))


@pytest.mark.parametrize("field", ["schema_version", "concurrency", "max_iterations"])
@pytest.mark.parametrize("raw", U32_ACCEPTED)
def test_a_u32_field_accepts_0_to_4294967295(field: str, raw: str) -> None:
    graph = parse_document(_u32_document(field, raw))
    assert f'"{field}":{raw}' in wire_json(graph)


# --- strings are strings ------------------------------------------------------------------------

STRING_FIELDS = [
    (kind, field) for kind in KINDS for field in ORDER[kind] if isinstance(FULL[kind][field], str)
]


@pytest.mark.parametrize("wrong", [5, 1.5, True, [], {}, ["a"]], ids=repr)
@pytest.mark.parametrize(
    ("kind", "field"), STRING_FIELDS, ids=[f"{k}.{f}" for k, f in STRING_FIELDS]
)
def test_a_string_field_refuses_other_types(kind: str, field: str, wrong: Any) -> None:
    message = refused(document(node(kind, **{field: wrong})))
    assert f"`{field}`" in message


@pytest.mark.parametrize("wrong", [5, True, [], {}], ids=repr)
@pytest.mark.parametrize(
    "build",
    [
        lambda w: document(node("branch", cases=[{"name": w, "when": {"kind": "model_decision"}}])),
        lambda w: document(
            node("branch", cases=[{"name": "c", "when": {"kind": "expression", "value": w}}])
        ),
        lambda w: document(node("map", body={"kind": "node", "value": w})),
        lambda w: document(node("fold", join={"kind": "best_by", "value": w})),
        lambda w: document(node("tool", input={"a": w})),
        lambda w: document(edges=[{"from": w, "to": "b"}]),
        lambda w: document(edges=[{"from": "a", "to": w}]),
        lambda w: document(edges=[{"from": "a", "to": "b", "label": w}]),
        lambda w: document({"kind": w, "payload": {}}),
    ],
    ids=[
        "case name",
        "expression",
        "node body",
        "best_by",
        "tool input value",
        "edge from",
        "edge to",
        "edge label",
        "node kind",
    ],
)
def test_strings_inside_sub_objects_are_strings_too(build: Any, wrong: Any) -> None:
    refused(build(wrong))


def test_an_id_that_is_a_number_is_refused() -> None:
    message = refused(
        '{"schema_version":1,"nodes":[{"kind":"tool","payload":{"id":5,"tool":"x"}}]}'
    )
    assert "`id`" in message


WRONG_CONTAINERS: list[tuple[str, dict[str, Any]]] = [
    ("nodes is an object", {"schema_version": 1, "nodes": {}}),
    ("nodes is a string", {"schema_version": 1, "nodes": "gate"}),
    ("edges is an object", document(edges={})),
    ("edges is a number", document(edges=1)),
    ("a node is an array", document(["gate", {}])),
    ("a node is a string", document("gate")),
    ("a payload is an array", document({"kind": "gate", "payload": []})),
    ("tool input is an array", document(node("tool", input=["a"]))),
    ("tool input is a string", document(node("tool", input="a"))),
    ("cases is an object", document(node("branch", cases={"name": "c"}))),
    ("a case is a string", document(node("branch", cases=["c"]))),
    ("a condition is a string", document(node("branch", cases=[{"name": "c", "when": "x"}]))),
    ("a body is a string", document(node("map", body="a"))),
    ("a subgraph is an array", document(node("map", body={"kind": "subgraph", "value": []}))),
    ("a join is a string", document(node("fold", join="last"))),
    ("an edge is an array", document(edges=[["a", "b"]])),
]


@pytest.mark.parametrize(
    "value", [case[1] for case in WRONG_CONTAINERS], ids=[case[0] for case in WRONG_CONTAINERS]
)
def test_wrongly_typed_containers_are_refused(value: dict[str, Any]) -> None:
    refused(value)


@pytest.mark.parametrize("top", ["[]", "1", '"x"', "null", "true"])
def test_a_document_that_is_not_an_object_is_refused(top: str) -> None:
    refused(top)


# --- unknown keys and kinds at every level -------------------------------------------------------


def _subgraph() -> dict[str, Any]:
    inner = document(
        {"kind": "tool", "payload": {"id": "x", "tool": "echo"}},
        edges=[{"from": "x", "to": "y"}],
    )
    return document(node("fold", body={"kind": "subgraph", "value": inner}))


def _add(value: dict[str, Any], path: str, key: str) -> dict[str, Any]:
    target: Any = value
    for step in path.split("/") if path else []:
        target = target[int(step) if step.isdigit() else step]
    target[key] = 1
    return value


SUB = "nodes[0].payload.body.value"
#: (level, document with a stray key, the key, where the message must say it is)
UNKNOWN_KEY_CASES: list[tuple[str, dict[str, Any], str, str]] = [
    ("document", _add(document(), "", "surprise"), "surprise", ""),
    ("node envelope", _add(document(node("gate")), "nodes/0", "extra"), "extra", "nodes[0]"),
    *[
        (
            f"{kind} payload",
            _add(document(node("gate"), node(kind)), "nodes/1/payload", "oops"),
            "oops",
            "nodes[1].payload",
        )
        for kind in KINDS
    ],
    (
        "case",
        _add(document(node("branch")), "nodes/0/payload/cases/1", "zz"),
        "zz",
        "nodes[0].payload.cases[1]",
    ),
    (
        "map body",
        _add(document(node("map")), "nodes/0/payload/body", "zz"),
        "zz",
        "nodes[0].payload.body",
    ),
    (
        "fold body",
        _add(document(node("fold")), "nodes/0/payload/body", "zz"),
        "zz",
        "nodes[0].payload.body",
    ),
    (
        "subgraph body",
        _add(
            document(node("map", body={"kind": "subgraph", "value": document()})),
            "nodes/0/payload/body",
            "zz",
        ),
        "zz",
        "nodes[0].payload.body",
    ),
    (
        "best_by join",
        _add(document(node("fold")), "nodes/0/payload/join", "zz"),
        "zz",
        "nodes[0].payload.join",
    ),
    (
        "unit join",
        _add(document(node("fold", join={"kind": "last"})), "nodes/0/payload/join", "zz"),
        "zz",
        "nodes[0].payload.join",
    ),
    (
        "edge",
        _add(document(edges=[{"from": "a", "to": "b"}]), "edges/0", "weight"),
        "weight",
        "edges[0]",
    ),
    (
        "subgraph document",
        _add(_subgraph(), "nodes/0/payload/body/value", "surprise"),
        "surprise",
        SUB,
    ),
    (
        "subgraph node envelope",
        _add(_subgraph(), "nodes/0/payload/body/value/nodes/0", "extra"),
        "extra",
        SUB + ".nodes[0]",
    ),
    (
        "subgraph payload",
        _add(_subgraph(), "nodes/0/payload/body/value/nodes/0/payload", "oops"),
        "oops",
        SUB + ".nodes[0].payload",
    ),
    (
        "subgraph edge",
        _add(_subgraph(), "nodes/0/payload/body/value/edges/0", "weight"),
        "weight",
        SUB + ".edges[0]",
    ),
]
DEEPER = (".payload", ".cases", ".when", ".body", ".value", ".join", ".nodes", ".edges")


@pytest.mark.parametrize(
    ("value", "key", "where"),
    [case[1:] for case in UNKNOWN_KEY_CASES],
    ids=[case[0] for case in UNKNOWN_KEY_CASES],
)
def test_an_unknown_key_is_refused_at_every_level_naming_the_key_and_where(
    value: dict[str, Any], key: str, where: str
) -> None:
    message = refused(value)
    assert f"`{key}`" in message
    if not where:
        assert "nodes[" not in message and "edges[" not in message, message
        return
    assert where in message
    assert not any(where + deeper in message for deeper in DEEPER), message


def test_unknown_keys_are_refused_even_with_a_null_value() -> None:
    assert "`zz`" in refused(document(node("gate", zz=None)))
    assert "`zz`" in refused(document(edges=[{"from": "a", "to": "b", "zz": None}]))


def test_an_unknown_node_kind_is_refused_naming_it() -> None:
    message = refused(document({"kind": "widget", "payload": {"id": "w"}}))
    assert "`widget`" in message
    assert "nodes[0]" in message


def test_node_kinds_are_case_sensitive() -> None:
    assert "`Gate`" in refused(document({"kind": "Gate", "payload": FULL["gate"]}))


def test_a_key_of_another_kind_is_unknown_in_this_kind() -> None:
    assert "`tool`" in refused(document(node("agent", tool="echo")))
    assert "`approval_schema`" in refused(document(node("tool", approval_schema={})))


@pytest.mark.parametrize(
    ("source", "key"),
    [
        (
            '{"schema_version":1,"nodes":[{"kind":"gate","payload":{"id":"g","id":"h","approval_schema":{}}}]}',
            "id",
        ),
        ('{"schema_version":1,"schema_version":1,"nodes":[]}', "schema_version"),
        (
            '{"schema_version":1,"nodes":[{"kind":"gate","kind":"gate","payload":{"id":"g","approval_schema":{}}}]}',
            "kind",
        ),
        (
            '{"schema_version":1,"nodes":[{"kind":"tool","payload":{"id":"t","tool":"x","input":{"a":"1","a":"2"}}}]}',
            "a",
        ),
        (
            '{"schema_version":1,"nodes":[{"kind":"gate","payload":{"id":"g","approval_schema":{"x":{"y":1,"y":1}}}}]}',
            "y",
        ),
        ('{"schema_version":1,"nodes":[],"edges":[{"from":"a","to":"b","to":"c"}]}', "to"),
    ],
    ids=["payload field", "document field", "envelope field", "tool input", "schema", "edge field"],
)
def test_a_duplicated_key_is_refused_naming_it(source: str, key: str) -> None:
    assert f"`{key}`" in refused(source)


# --- strict JSON through parse_document ----------------------------------------------------------


def test_parse_document_accepts_bytes_and_str_alike() -> None:
    source = text(document(node("gate")))
    assert wire_json(parse_document(source)) == wire_json(parse_document(source.encode()))
    assert wire_json(parse_document(bytearray(source.encode()))) == wire_json(
        parse_document(source)
    )


def test_concurrency_minus_zero_is_malformed() -> None:
    assert "`concurrency`" in refused(_u32_document("concurrency", "-0"))


def test_parse_graph_reads_a_value_already_read_as_json() -> None:
    value = read_json(text(document(node("map"), edges=[{"from": "m", "to": "a"}])))
    graph = parse_graph(value)
    assert wire_json(graph) == wire_json(parse_document(text(value)))


def test_parse_graph_refuses_a_value_nested_too_deeply_for_python_cleanly() -> None:
    value: Any = document()
    inner = value
    for _ in range(3000):
        child = document()
        inner["nodes"] = [node("map", body={"kind": "subgraph", "value": child})]
        inner = child
    with pytest.raises(MalformedDocument):
        parse_graph(value)


# --- generated documents ------------------------------------------------------------------------

NAMES = st.text(max_size=6)
FREE_JSON = json_values(max_text=6, max_leaves=6, max_items=3)
U32 = st.integers(min_value=0, max_value=2**32 - 1)
CONDITIONS = st.one_of(
    st.builds(lambda value: {"kind": "expression", "value": value}, NAMES),
    st.just({"kind": "model_decision"}),
)
JOINS = st.one_of(
    st.builds(lambda value: {"kind": "best_by", "value": value}, NAMES),
    st.just({"kind": "last"}),
    st.just({"kind": "all"}),
)
EDGES = st.fixed_dictionaries({"from": NAMES, "to": NAMES}, optional={"label": NAMES})


def _bodies(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    node_body = st.builds(lambda value: {"kind": "node", "value": value}, NAMES)
    if depth == 0:
        return node_body
    return st.one_of(
        node_body,
        st.builds(lambda value: {"kind": "subgraph", "value": value}, documents(depth - 1)),
    )


def _nodes(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    def tagged(kind: str, payload: st.SearchStrategy[dict[str, Any]]) -> Any:
        return st.builds(lambda value: {"kind": kind, "payload": value}, payload)

    return st.one_of(
        tagged(
            "agent",
            st.fixed_dictionaries(
                {"id": NAMES, "agent_hash": NAMES},
                optional={"name": NAMES, "input_schema": FREE_JSON, "output_schema": FREE_JSON},
            ),
        ),
        tagged(
            "tool",
            st.fixed_dictionaries(
                {"id": NAMES, "tool": NAMES},
                optional={
                    "name": NAMES,
                    "input": st.dictionaries(NAMES, NAMES, max_size=3),
                    "input_schema": FREE_JSON,
                    "output_schema": FREE_JSON,
                },
            ),
        ),
        tagged(
            "gate",
            st.fixed_dictionaries(
                {"id": NAMES, "approval_schema": FREE_JSON},
                optional={"name": NAMES, "prompt": NAMES},
            ),
        ),
        tagged(
            "branch",
            st.fixed_dictionaries(
                {
                    "id": NAMES,
                    "cases": st.lists(
                        st.fixed_dictionaries({"name": NAMES, "when": CONDITIONS}), max_size=3
                    ),
                },
                optional={"name": NAMES, "on": NAMES, "agent_hash": NAMES},
            ),
        ),
        tagged(
            "map",
            st.fixed_dictionaries(
                {"id": NAMES, "over": NAMES, "concurrency": U32, "body": _bodies(depth)},
                optional={"name": NAMES, "output_schema": FREE_JSON},
            ),
        ),
        tagged(
            "fold",
            st.fixed_dictionaries(
                {
                    "id": NAMES,
                    "body": _bodies(depth),
                    "max_iterations": U32,
                    "stop_when": NAMES,
                    "join": JOINS,
                },
                optional={"name": NAMES, "accumulator_schema": FREE_JSON},
            ),
        ),
    )


def documents(depth: int = 2) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"schema_version": U32, "nodes": st.lists(_nodes(depth), max_size=4 if depth else 2)},
        optional={"edges": st.lists(EDGES, max_size=3)},
    )


DOCUMENTS = documents()
NODES = _nodes(1)


def expected_wire(value: dict[str, Any]) -> str:
    """An independent writer of spec 01's wire form, to check ``wire_json`` against."""
    nodes = ",".join(_expected_node(item) for item in value["nodes"])
    edges = ",".join(_expected_edge(item) for item in value.get("edges") or [])
    return f'{{"schema_version":{value["schema_version"]},"nodes":[{nodes}],"edges":[{edges}]}}'


def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _expected_node(item: dict[str, Any]) -> str:
    kind, payload = item["kind"], item["payload"]
    parts = []
    for field in ORDER[kind]:
        if field not in payload:
            continue
        value = payload[field]
        if (value is None and field != "approval_schema") or (field == "input" and not value):
            continue
        parts.append(f"{_string(field)}:{_expected_value(field, value)}")
    return f'{{"kind":{_string(kind)},"payload":{{{",".join(parts)}}}}}'


def _expected_value(field: str, value: Any) -> str:
    if field in FREE:
        return canonical_text(value)
    if field == "cases":
        return (
            "["
            + ",".join(
                f'{{"name":{_string(case["name"])},"when":{_expected_tagged(case["when"])}}}'
                for case in value
            )
            + "]"
        )
    if field in ("body", "join"):
        return _expected_tagged(value)
    return _string(value) if isinstance(value, str) else str(value)


def _expected_tagged(value: dict[str, Any]) -> str:
    kind = value["kind"]
    if kind in UNIT_VARIANTS:
        return f'{{"kind":"{kind}"}}'
    inner = expected_wire(value["value"]) if kind == "subgraph" else _string(value["value"])
    return f'{{"kind":"{kind}","value":{inner}}}'


def _expected_edge(edge: dict[str, Any]) -> str:
    parts = [f'"from":{_string(edge["from"])}', f'"to":{_string(edge["to"])}']
    if edge.get("label") is not None:
        parts.append(f'"label":{_string(edge["label"])}')
    return "{" + ",".join(parts) + "}"


WHITESPACE = ["", "", " ", "\t", "\n", "\r\n", " \t "]


def scramble(value: Any, rnd: random.Random) -> str:
    """JSON text of ``value`` with keys shuffled, random whitespace, escaped or raw strings."""

    def space() -> str:
        return rnd.choice(WHITESPACE)

    if isinstance(value, dict):
        keys = list(value)
        rnd.shuffle(keys)
        members = (
            f"{space()}{_scalar(key, rnd)}{space()}:{space()}{scramble(value[key], rnd)}{space()}"
            for key in keys
        )
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(space() + scramble(item, rnd) + space() for item in value) + "]"
    return _scalar(value, rnd)


def _scalar(value: Any, rnd: random.Random) -> str:
    return json.dumps(value, ensure_ascii=rnd.random() < 0.5)


def with_nulls(value: dict[str, Any]) -> dict[str, Any]:
    """The same document with every unset optional spelled out as null (or an empty input)."""
    result = copy.deepcopy(value)
    for item in result["nodes"]:
        payload = item["payload"]
        for field in OPTIONAL[item["kind"]]:
            payload.setdefault(field, None)
        if item["kind"] == "tool":
            payload.setdefault("input", {})
        for tagged in (payload.get("body"), payload.get("join")):
            if tagged and tagged["kind"] in UNIT_VARIANTS:
                tagged["value"] = None
            if tagged and tagged["kind"] == "subgraph":
                tagged["value"] = with_nulls(tagged["value"])
        for case in payload.get("cases", []):
            if case["when"]["kind"] == "model_decision":
                case["when"]["value"] = None
    if result.get("edges"):
        for edge in result["edges"]:
            edge.setdefault("label", None)
    else:
        result.pop("edges", None)
    return result


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(DOCUMENTS)
def test_a_generated_document_is_written_exactly_as_the_spec_says(value: dict[str, Any]) -> None:
    graph = parse_document(text(value))
    assert wire_json(graph) == expected_wire(value)


@PROPERTY
@given(DOCUMENTS)
def test_wire_then_parse_then_wire_is_a_fixed_point(value: dict[str, Any]) -> None:
    graph = parse_document(text(value))
    wire = wire_json(graph)
    again = parse_document(wire)
    assert wire_json(again) == wire
    assert again == graph
    assert graph_hash(again) == graph_hash(graph)
    assert canonical_graph(graph) == canonical_json(read_json(wire))


@PROPERTY
@given(DOCUMENTS, st.randoms(use_true_random=False))
def test_the_hash_ignores_key_order_whitespace_and_explicit_nulls(
    value: dict[str, Any], rnd: random.Random
) -> None:
    plain = parse_document(text(value))
    spelled = parse_document(scramble(with_nulls(value), rnd))
    assert graph_hash(spelled) == graph_hash(plain)
    assert wire_json(spelled) == wire_json(plain)
    assert canonical_graph(spelled) == canonical_graph(plain)


@PROPERTY
@given(DOCUMENTS, st.randoms(use_true_random=False))
def test_the_hash_ignores_an_absent_edges_list(value: dict[str, Any], rnd: random.Random) -> None:
    without = {key: item for key, item in value.items() if key != "edges"}
    with_empty = {**without, "edges": []}
    assert graph_hash(parse_document(scramble(without, rnd))) == graph_hash(
        parse_document(text(with_empty))
    )


@PROPERTY
@given(DOCUMENTS, NODES, NAMES)
def test_renaming_a_node_changes_the_hash(
    value: dict[str, Any], first: dict[str, Any], new_name: str
) -> None:
    value = {**value, "nodes": [first, *value["nodes"]]}
    before = parse_document(text(value))
    renamed = copy.deepcopy(value)
    payload = renamed["nodes"][0]["payload"]
    if payload.get("name") == new_name:
        new_name += "!"
    payload["name"] = new_name
    after = parse_document(text(renamed))
    assert graph_hash(after) != graph_hash(before)


# --- nothing but MalformedDocument ----------------------------------------------------------------


def _parses_or_is_malformed(data: str | bytes) -> None:
    try:
        result = parse_document(data)
    except MalformedDocument as error:
        assert str(error)
    else:
        assert isinstance(result, Graph)


@settings(max_examples=150, deadline=None)
@given(FREE_JSON)
def test_any_json_value_parses_or_is_one_malformed_document(value: Any) -> None:
    _parses_or_is_malformed(text(value))


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=40), st.text(max_size=40)))
def test_any_bytes_or_text_parse_or_are_one_malformed_document(data: str | bytes) -> None:
    _parses_or_is_malformed(data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS, st.randoms(use_true_random=False), FREE_JSON | U32 | NAMES)
def test_a_mutated_document_parses_or_is_one_malformed_document(
    value: dict[str, Any], rnd: random.Random, replacement: Any
) -> None:
    mutated = copy.deepcopy(value)
    spots: list[tuple[Any, Any]] = []

    def walk(item: Any) -> None:
        if isinstance(item, dict):
            for key in list(item):
                spots.append((item, key))
                walk(item[key])
        elif isinstance(item, list):
            for index, element in enumerate(item):
                spots.append((item, index))
                walk(element)

    walk(mutated)
    container, key = rnd.choice(spots)
    action = rnd.randrange(3)
    if action == 0:
        container[key] = replacement
    elif action == 1:
        del container[key]
    elif isinstance(container, dict):
        container[rnd.choice(["zz", "value", "kind", "label", "input", "name"])] = replacement
    else:
        container.insert(key, replacement)
    _parses_or_is_malformed(text(mutated))


def test_a_malformed_document_carries_the_place_of_the_value_as_data() -> None:
    with pytest.raises(MalformedDocument) as caught:
        parse_graph({"schema_version": 1, "nodes": [{"kind": "delay", "payload": {"id": "w"}}]})

    assert caught.value.location == "nodes[0].payload"
    assert caught.value.reason == "missing field `seconds`"
    assert str(caught.value) == "missing field `seconds` at nodes[0].payload"
    assert caught.value.at is None
