"""The JSON Schema is generated from the parser's model and checked in as a golden file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from editor.graph import MalformedDocument, parse_document, templates, wire_value
from editor.graph.schema import graph_json_schema, graph_json_schema_text

GOLDEN = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "graph.schema.json"
VALIDATOR = Draft202012Validator(graph_json_schema())


def test_the_golden_schema_file_matches_the_model():
    generated = graph_json_schema_text()
    if os.environ.get("GATEHOUSE_UPDATE_SCHEMA") == "1":
        GOLDEN.write_text(generated, encoding="utf-8")
    assert GOLDEN.read_text(encoding="utf-8") == generated, (
        "docs/schemas/graph.schema.json is stale: run `GATEHOUSE_UPDATE_SCHEMA=1 make test`"
    )


def test_the_schema_is_a_valid_draft_2020_12_schema():
    Draft202012Validator.check_schema(graph_json_schema())


def test_the_schema_refuses_unknown_keys_and_out_of_range_integers():
    document = {"schema_version": 1, "nodes": [], "surprise": True}
    assert not VALIDATOR.is_valid(document)
    gate = {"kind": "gate", "payload": {"id": "g", "approval_schema": {}, "oops": 1}}
    assert not VALIDATOR.is_valid({"schema_version": 1, "nodes": [gate]})
    assert not VALIDATOR.is_valid({"schema_version": 4294967296, "nodes": []})
    assert VALIDATOR.is_valid({"schema_version": 4294967295, "nodes": []})


@pytest.mark.parametrize(
    "graph",
    [
        templates.blank(),
        templates.approval_gate("sha256:" + "a" * 64),
        templates.parallel("sha256:" + "a" * 64, "sha256:" + "b" * 64, ["x", "y"]),
        templates.rounds("sha256:" + "a" * 64, "sha256:" + "b" * 64, ["x", "y", "z"], 3),
    ],
    ids=["blank", "approval_gate", "parallel", "rounds"],
)
def test_every_template_validates_against_the_schema(graph):
    assert VALIDATOR.is_valid(wire_value(graph))


_ids = st.sampled_from(["a", "b", "c", "write", "review", "é"])
_optional_text = st.one_of(st.none(), st.text(max_size=8))
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
_u32 = st.integers(0, 4294967295)
_node_body = st.fixed_dictionaries({"kind": st.just("node"), "value": _ids})
_join = st.one_of(
    st.fixed_dictionaries({"kind": st.just("best_by"), "value": st.text(max_size=6)}),
    st.fixed_dictionaries({"kind": st.sampled_from(["last", "all"])}),
    st.fixed_dictionaries({"kind": st.sampled_from(["last", "all"]), "value": st.none()}),
)
_condition = st.one_of(
    st.fixed_dictionaries({"kind": st.just("expression"), "value": st.text(max_size=8)}),
    st.fixed_dictionaries({"kind": st.just("model_decision")}),
)
_payloads = {
    "agent": st.fixed_dictionaries(
        {"id": _ids, "agent_hash": st.text(max_size=8)},
        optional={"name": _optional_text, "input_schema": _json, "output_schema": _json},
    ),
    "tool": st.fixed_dictionaries(
        {"id": _ids, "tool": st.text(max_size=6)},
        optional={
            "name": _optional_text,
            "input": st.dictionaries(st.text(max_size=3), st.text(max_size=4), max_size=2),
            "output_schema": _json,
        },
    ),
    "gate": st.fixed_dictionaries(
        {"id": _ids, "approval_schema": _json},
        optional={"name": _optional_text, "prompt": _optional_text},
    ),
    "branch": st.fixed_dictionaries(
        {
            "id": _ids,
            "cases": st.lists(
                st.fixed_dictionaries({"name": st.text(max_size=4), "when": _condition}),
                max_size=3,
            ),
        },
        optional={"on": _optional_text, "agent_hash": _optional_text},
    ),
    "map": st.fixed_dictionaries(
        {"id": _ids, "over": st.text(max_size=6), "concurrency": _u32, "body": _node_body},
        optional={"output_schema": _json},
    ),
    "fold": st.fixed_dictionaries(
        {
            "id": _ids,
            "body": _node_body,
            "max_iterations": _u32,
            "stop_when": st.text(max_size=8),
            "join": _join,
        },
        optional={"accumulator_schema": _json},
    ),
}
_nodes = st.one_of(
    *(
        st.fixed_dictionaries({"kind": st.just(kind), "payload": payload})
        for kind, payload in _payloads.items()
    )
)
_edges = st.fixed_dictionaries(
    {"from": _ids, "to": _ids}, optional={"label": st.one_of(st.none(), st.text(max_size=4))}
)
documents = st.fixed_dictionaries(
    {"schema_version": _u32, "nodes": st.lists(_nodes, max_size=5)},
    optional={"edges": st.lists(_edges, max_size=5)},
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(documents)
def test_every_document_the_parser_accepts_validates_against_the_schema(document):
    try:
        graph = parse_document(json.dumps(document))
    except MalformedDocument:
        return
    assert VALIDATOR.is_valid(document)
    assert VALIDATOR.is_valid(wire_value(graph))
