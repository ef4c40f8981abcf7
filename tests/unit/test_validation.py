"""Conformance tests for graph-document validation (spec 02).

The exact, data-driven cases live in ``cases/validation.json``: each holds a
document and either the exact error list (codes, messages, extra keys, and the
order of everything, keys included) or the summary of a valid document. The
tests below run every case through both public paths, ``validate_document`` and
``validate(parse_document(...))``, then cover what reads better as code: E6
(whose text is jsonschema's, not exact), the E8 nesting cap, E0, the byte cap,
the suggestion rule, and robustness against hostile input.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editor.graph import graph_hash, parse_document, summarize, validate, validate_document
from editor.graph.suggest import Suggester, nearest
from tests.unit.strategies import json_values

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "cases" / "validation.json").read_text(encoding="utf-8")
)["cases"]
VALID_CASES = [case for case in CASES if "summary" in case]
INVALID_CASES = [case for case in CASES if "errors" in case]

HASH = "sha256:" + "0123456789abcdef" * 4
GRAPH_HASH = re.compile(r"sha256:[0-9a-f]{64}")
LITERAL = "a reference must be a path into the routed value, not a literal"


def ordered(value: Any) -> Any:
    """``value`` with every object turned into its (key, value) pairs, so key order counts."""
    if isinstance(value, dict):
        return [(key, ordered(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [ordered(item) for item in value]
    return value


def assert_exactly(actual: Any, expected: Any) -> None:
    assert actual == expected
    assert ordered(actual) == ordered(expected)


def check(document: dict[str, Any], **limits: int) -> dict[str, Any]:
    return validate_document(json.dumps(document), **limits)


def errors_of(document: dict[str, Any], **limits: int) -> list[dict[str, Any]]:
    body = check(document, **limits)
    assert body["valid"] is False, body
    return body["errors"]


def doc(nodes: list[Any], edges: list[Any] | None = None, version: int = 1) -> dict[str, Any]:
    return {"schema_version": version, "nodes": nodes, "edges": edges or []}


def agent(node_id: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "agent", "payload": {"id": node_id, "agent_hash": HASH, **fields}}


def tool(node_id: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "tool", "payload": {"id": node_id, "tool": "http_post", **fields}}


def gate(node_id: str, approval_schema: Any = None) -> dict[str, Any]:
    schema = {"type": "object"} if approval_schema is None else approval_schema
    return {"kind": "gate", "payload": {"id": node_id, "approval_schema": schema}}


def map_node(node_id: str, body: dict[str, Any], **fields: Any) -> dict[str, Any]:
    payload = {"id": node_id, "over": "items", "concurrency": 2, "body": body, **fields}
    return {"kind": "map", "payload": payload}


def fold_node(node_id: str, body: dict[str, Any], **fields: Any) -> dict[str, Any]:
    payload = {
        "id": node_id,
        "body": body,
        "max_iterations": 3,
        "stop_when": "done",
        "join": {"kind": "last"},
        **fields,
    }
    return {"kind": "fold", "payload": payload}


def subgraph(document: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "subgraph", "value": document}


def edge(source: str, target: str) -> dict[str, str]:
    return {"from": source, "to": target}


def duplicate(node_id: str) -> dict[str, Any]:
    return {
        "code": "duplicate_node_id",
        "message": f"duplicate node id `{node_id}`",
        "node": node_id,
    }


def in_subgraph(error: dict[str, Any], *owners: str) -> dict[str, Any]:
    prefix = "".join(f"in the subgraph of `{owner}`: " for owner in owners)
    return {**error, "message": prefix + error["message"], "subgraph": list(owners)}


# --- the data-driven cases ----------------------------------------------------


def test_the_case_file_has_unique_names_and_one_expectation_each() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names))
    for case in CASES:
        assert ("errors" in case) != ("summary" in case), case["name"]
        assert set(case) <= {"name", "document", "errors", "summary"}, case["name"]


@pytest.mark.parametrize("case", INVALID_CASES, ids=[case["name"] for case in INVALID_CASES])
def test_an_invalid_case_gives_exactly_its_errors_in_order(case: dict[str, Any]) -> None:
    body = validate_document(json.dumps(case["document"]))
    assert_exactly(body, {"valid": False, "errors": case["errors"]})


@pytest.mark.parametrize("case", INVALID_CASES, ids=[case["name"] for case in INVALID_CASES])
def test_validate_of_the_parsed_graph_gives_the_same_errors(case: dict[str, Any]) -> None:
    text = json.dumps(case["document"], ensure_ascii=False).encode("utf-8")
    assert_exactly(validate(parse_document(text)), case["errors"])


@pytest.mark.parametrize("case", VALID_CASES, ids=[case["name"] for case in VALID_CASES])
def test_a_valid_case_gives_its_hash_and_summary(case: dict[str, Any]) -> None:
    text = json.dumps(case["document"])
    graph = parse_document(text)
    assert validate(graph) == []
    assert_exactly(summarize(graph), case["summary"])
    assert_exactly(
        validate_document(text),
        {"valid": True, "graph": graph_hash(graph), "summary": case["summary"]},
    )


@pytest.mark.parametrize("case", INVALID_CASES, ids=[case["name"] for case in INVALID_CASES])
def test_no_expected_message_begins_or_ends_with_a_space(case: dict[str, Any]) -> None:
    for error in case["errors"]:
        assert list(error)[:2] == ["code", "message"]
        assert error["message"] == error["message"].strip(" ")
        if "subgraph" in error:
            assert list(error)[-1] == "subgraph"


def test_the_cases_cover_every_exact_code() -> None:
    covered = {error["code"] for case in INVALID_CASES for error in case["errors"]}
    assert covered == {
        "unsupported_schema_version",
        "duplicate_node_id",
        "dangling_edge",
        "dangling_map_body",
        "dangling_fold_body",
        "malformed_agent_hash",
        "non_positive_concurrency",
        "approval_schema_not_object",
        "non_positive_max_iterations",
        "blank_node_name",
        "node_name_too_long",
        "invalid_branch_expression",
        "model_decision_without_agent",
        "invalid_fold_stop_expression",
        "invalid_fold_join_reference",
        "cycle",
        "edge_type_mismatch",
        "branch_edge_without_label",
        "branch_edge_without_case",
        "branch_case_without_edge",
        "branch_without_cases",
        "duplicate_branch_case",
        "invalid_reference",
        "body_node_has_edges",
        "unsupported_body_kind",
        "unsupported_in_subgraph",
    }


# --- E6: invalid JSON Schemas (the message tail is jsonschema's) ---------------


def assert_schema_errors(errors: list[dict[str, Any]], expected: list[tuple[str, ...]]) -> None:
    """``expected`` holds (kind, node, field, *owners) per ``invalid_json_schema`` error."""
    assert len(errors) == len(expected)
    for error, (kind, node, field, *owners) in zip(errors, expected, strict=True):
        keys = ["code", "message", "node", "field", "error"] + (["subgraph"] if owners else [])
        assert list(error) == keys
        assert error["code"] == "invalid_json_schema"
        assert (error["node"], error["field"]) == (node, field)
        assert isinstance(error["error"], str)
        assert error["error"].strip()
        prefix = "".join(f"in the subgraph of `{owner}`: " for owner in owners)
        assert error["message"] == (
            f"{prefix}{kind} node `{node}`: `{field}` is not a valid JSON Schema: {error['error']}"
        )
        if owners:
            assert error["subgraph"] == owners


def test_every_schema_field_must_be_a_valid_json_schema_in_node_then_wire_order() -> None:
    document = doc(
        [
            agent("a", input_schema={"type": 5}, output_schema={"minimum": "x"}),
            gate("g", {"type": "nonsense"}),
            tool("t", input_schema={"required": "x"}, output_schema={"type": 5}),
            map_node("m", {"kind": "node", "value": "w"}, output_schema={"properties": []}),
            agent("w"),
            fold_node("f", {"kind": "node", "value": "w2"}, accumulator_schema={"type": 5}),
            agent("w2"),
            agent("fine", input_schema=True, output_schema={"type": ["string", "null"]}),
            gate("fine_gate", {}),
        ]
    )
    assert_schema_errors(
        errors_of(document),
        [
            ("agent", "a", "input_schema"),
            ("agent", "a", "output_schema"),
            ("gate", "g", "approval_schema"),
            ("tool", "t", "input_schema"),
            ("tool", "t", "output_schema"),
            ("map", "m", "output_schema"),
            ("fold", "f", "accumulator_schema"),
        ],
    )


def test_a_schema_that_is_not_an_object_or_boolean_is_invalid() -> None:
    document = doc([agent("a", input_schema=5), agent("b", output_schema=[]), agent("c")])
    assert_schema_errors(
        errors_of(document), [("agent", "a", "input_schema"), ("agent", "b", "output_schema")]
    )


def test_an_approval_schema_reported_by_check_4c_is_not_reported_again() -> None:
    errors = errors_of(doc([gate("g", []), gate("h", "object")]))
    assert [error["code"] for error in errors] == ["approval_schema_not_object"] * 2


def test_the_same_invalid_schema_on_many_nodes_is_reported_on_each() -> None:
    schema = {"type": 5}
    document = doc([agent(f"a{i}", input_schema=schema) for i in range(3)])
    assert_schema_errors(
        errors_of(document), [("agent", f"a{i}", "input_schema") for i in range(3)]
    )


def test_an_invalid_schema_inside_a_subgraph_carries_the_owner_chain() -> None:
    inner = doc([agent("x", output_schema={"type": 5})])
    document = doc([map_node("m", subgraph(inner))])
    assert_schema_errors(errors_of(document), [("agent", "x", "output_schema", "m")])


def test_the_extensions_run_after_the_reference_checks_in_their_order() -> None:
    branch = {
        "kind": "branch",
        "payload": {
            "id": "b",
            "on": "1",
            "cases": [{"name": "c", "when": {"kind": "model_decision"}}],
        },
    }
    inner = doc(
        [
            branch,
            tool("t", input={"k": "x."}, input_schema={"type": 5}),
            map_node("m", {"kind": "node", "value": "w"}),
            agent("w"),
            gate("g"),
        ],
        [edge("b", "t"), edge("w", "t")],
    )
    top = doc([fold_node("outer", subgraph(inner)), *inner["nodes"]], inner["edges"])
    codes = [
        "model_decision_without_agent",
        "branch_case_without_edge",  # check 7 at 0.10: 7a, then 7c, before every extension
        "branch_edge_without_label",
        "invalid_reference",
        "invalid_reference",
        "invalid_json_schema",
        "body_node_has_edges",
    ]
    errors = errors_of(top)
    assert [error["code"] for error in errors] == [
        *codes,
        *codes,
        "unsupported_in_subgraph",
    ]
    assert [error["field"] for error in errors if error["code"] == "invalid_reference"] == [
        "on",
        "input.k",
    ] * 2
    assert all("subgraph" not in error for error in errors[: len(codes)])
    assert all(error["subgraph"] == ["outer"] for error in errors[len(codes) :])


# --- E8: subgraphs and the nesting cap ----------------------------------------


def chain(levels: int, deepest: list[Any]) -> dict[str, Any]:
    """A document ``levels`` deep: level k holds map ``m{k+1}`` whose subgraph is level k + 1."""
    document = doc(deepest)
    for level in range(levels, 1, -1):
        document = doc([map_node(f"m{level}", subgraph(document))])
    return document


def test_a_subgraph_at_the_eighth_level_is_allowed_and_checked() -> None:
    assert check(chain(8, [agent("leaf")]))["valid"] is True
    owners = [f"m{level}" for level in range(2, 9)]
    errors = errors_of(chain(8, [agent("leaf"), agent("leaf")]))
    assert_exactly(errors, [in_subgraph(duplicate("leaf"), *owners)])


@pytest.mark.parametrize("levels", [9, 10, 20])
def test_a_subgraph_that_would_be_level_nine_gives_one_error_and_is_not_descended(
    levels: int,
) -> None:
    document = chain(levels, [agent("leaf"), agent("leaf")])
    owners = [f"m{level}" for level in range(2, 9)]
    error = {
        "code": "nesting_too_deep",
        "message": "node `m9`: subgraphs nest deeper than 8 levels",
        "node": "m9",
        "max": 8,
    }
    assert_exactly(errors_of(document), [in_subgraph(error, *owners)])


def test_the_nesting_error_follows_the_errors_of_the_eighth_level_document() -> None:
    document = chain(9, [agent("leaf")])
    level8 = document
    for _ in range(6):
        level8 = level8["nodes"][0]["payload"]["body"]["value"]
    assert level8["nodes"][0]["payload"]["id"] == "m8"
    level8 = level8["nodes"][0]["payload"]["body"]["value"]
    too_deep = copy.deepcopy(level8["nodes"][0])
    too_deep["payload"]["id"] = "m9b"
    level8["nodes"].extend([agent("x"), agent("x"), too_deep])
    owners = [f"m{level}" for level in range(2, 9)]

    def nested(node: str) -> dict[str, Any]:
        error = {
            "code": "nesting_too_deep",
            "message": f"node `{node}`: subgraphs nest deeper than 8 levels",
            "node": node,
            "max": 8,
        }
        return in_subgraph(error, *owners)

    assert_exactly(
        errors_of(document),
        [in_subgraph(duplicate("x"), *owners), nested("m9"), nested("m9b")],
    )


def test_a_nesting_error_at_the_top_level_is_impossible_but_a_fold_owner_counts_too() -> None:
    document = chain(8, [fold_node("f", subgraph(doc([agent("a"), agent("a")])))])
    owners = [f"m{level}" for level in range(2, 9)]
    error = {
        "code": "nesting_too_deep",
        "message": "node `f`: subgraphs nest deeper than 8 levels",
        "node": "f",
        "max": 8,
    }
    assert_exactly(errors_of(document), [in_subgraph(error, *owners)])


def test_sibling_subgraphs_are_visited_in_document_order_depth_first() -> None:
    def broken(*extra: Any) -> dict[str, Any]:
        return doc([agent("d"), agent("d"), *extra])

    document = doc(
        [
            map_node("a", subgraph(broken(fold_node("a1", subgraph(broken()))))),
            agent("d"),
            agent("d"),
            fold_node("b", subgraph(broken())),
        ]
    )
    assert_exactly(
        errors_of(document),
        [
            duplicate("d"),
            in_subgraph(duplicate("d"), "a"),
            in_subgraph(duplicate("d"), "a", "a1"),
            in_subgraph(duplicate("d"), "b"),
        ],
    )


# --- E0: the node and edge caps ----------------------------------------------


def too_large(nodes: int, edges: int, max_nodes: int, max_edges: int) -> dict[str, Any]:
    return {
        "code": "document_too_large",
        "message": (
            f"the document has {nodes} nodes and {edges} edges; "
            f"the limits are {max_nodes} and {max_edges}"
        ),
        "nodes": nodes,
        "edges": edges,
        "max_nodes": max_nodes,
        "max_edges": max_edges,
    }


def test_a_document_at_the_caps_is_allowed() -> None:
    document = doc([agent("a"), agent("b"), agent("c")], [edge("a", "b"), edge("b", "c")])
    assert check(document, max_nodes=3, max_edges=2)["valid"] is True


def test_a_document_over_the_node_cap_gets_that_single_error_and_nothing_else() -> None:
    document = doc(
        [agent("a"), agent("a"), agent("b", agent_hash="x"), agent("c")], [edge("a", "z")]
    )
    assert_exactly(errors_of(document, max_nodes=3), [too_large(4, 1, 3, 50000)])
    assert_exactly(
        validate(parse_document(json.dumps(document)), max_nodes=3), [too_large(4, 1, 3, 50000)]
    )


def test_a_document_over_the_edge_cap_gets_that_single_error() -> None:
    document = doc([agent("a")], [edge("a", "a")] * 3)
    assert_exactly(errors_of(document, max_edges=2), [too_large(1, 3, 10000, 2)])


def test_the_caps_count_subgraph_contents_even_past_the_nesting_cap() -> None:
    document = chain(10, [agent("x"), agent("y")])
    document["nodes"][0]["payload"]["body"]["value"]["edges"] = [edge("m3", "m3")]
    assert_exactly(errors_of(document, max_nodes=10), [too_large(11, 1, 10, 50000)])
    assert_exactly(errors_of(document, max_edges=0), [too_large(11, 1, 10000, 0)])
    assert [e["code"] for e in errors_of(document, max_nodes=11)] == ["cycle", "nesting_too_deep"]


def test_the_default_node_cap_is_ten_thousand() -> None:
    document = doc([agent(f"n{i}") for i in range(10_001)])
    assert_exactly(errors_of(document), [too_large(10_001, 0, 10_000, 50_000)])


# --- the byte cap and unparsable documents -------------------------------------


def test_a_body_over_the_byte_cap_is_refused_before_parsing() -> None:
    expected = {
        "valid": False,
        "errors": [
            {"code": "payload_too_large", "message": "the document is 11 bytes; the limit is 10"}
        ],
    }
    assert_exactly(validate_document(b"not json!!!", max_bytes=10), expected)
    assert_exactly(validate_document("not json!!!", max_bytes=10), expected)


def test_a_text_body_is_measured_in_utf8_bytes() -> None:
    body = validate_document("é" * 6, max_bytes=11)
    assert body["errors"][0]["message"] == "the document is 12 bytes; the limit is 11"


def test_a_body_exactly_at_the_byte_cap_is_parsed() -> None:
    text = json.dumps(doc([]), separators=(",", ":"))
    assert validate_document(text, max_bytes=len(text))["valid"] is True
    assert validate_document(text, max_bytes=len(text) - 1)["errors"][0]["code"] == (
        "payload_too_large"
    )


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"schema_version": 2, "nodes": [], "surprise": 1}', "surprise"),
        (
            '{"schema_version": 1, "nodes": [{"kind": "agent", "payload": {"id": "a"}}]}',
            "agent_hash",
        ),
        ('{"schema_version": 1, "nodes": [], "nodes": []}', "nodes"),
        ("{", ""),
        ("", ""),
    ],
)
def test_a_document_that_does_not_parse_gets_one_malformed_document_error(
    text: str, named: str
) -> None:
    body = validate_document(text)
    assert list(body) == ["valid", "errors"]
    assert body["valid"] is False
    [error] = body["errors"]
    assert list(error) == ["code", "message"]
    assert error["code"] == "malformed_document"
    assert error["message"]
    assert f"`{named}`" in error["message"] or not named


# --- the suggestion rule --------------------------------------------------------


def levenshtein(left: bytes, right: bytes) -> int:
    previous = list(range(len(right) + 1))
    for i, a in enumerate(left, 1):
        current = [i]
        for j, b in enumerate(right, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1]


def reference_nearest(missing: str, candidates: list[str]) -> str | None:
    """Spec 02's rule, written out plainly."""
    wanted = missing.encode()
    best: tuple[int, bytes] | None = None
    for candidate in sorted({c.encode() for c in candidates}):
        distance = levenshtein(wanted, candidate)
        if best is None or distance < best[0]:
            best = (distance, candidate)
    if best is None:
        return None
    distance, candidate = best
    if distance <= max(max(len(wanted), len(candidate)) // 3, 1):
        return candidate.decode()
    return None


@pytest.mark.parametrize(
    ("missing", "candidates", "expected"),
    [
        ("aprove", ["research", "approve"], "approve"),
        ("abcdefghijkl", ["abcdefg", "abcdefghijklmnopqr"], None),
        ("abcdefghijkl", ["abcdefghijklmnopqr"], "abcdefghijklmnopqr"),
        ("bx", ["bc", "bb", "ba"], "ba"),
        ("ab", ["abcd"], None),
        ("a", ["b"], "b"),
        ("", ["a"], "a"),
        ("", ["ab"], None),
        ("x", [], None),
        ("é", ["e"], None),
        ("cafè", ["café"], "café"),
        ("ü", ["u", "v"], None),
        ("Approve", ["approve", "APPROVE"], "approve"),
    ],
)
def test_the_suggestion_is_the_nearest_candidate_within_its_threshold(
    missing: str, candidates: list[str], expected: str | None
) -> None:
    assert nearest(missing, candidates) == expected
    assert reference_nearest(missing, candidates) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="abcé😀", max_size=7),
    st.lists(st.text(alphabet="abcé😀", max_size=7), max_size=6),
)
def test_the_suggester_agrees_with_the_plain_rule(missing: str, candidates: list[str]) -> None:
    assert nearest(missing, candidates) == reference_nearest(missing, candidates)


def test_a_suggester_answers_repeated_lookups_the_same() -> None:
    suggester = Suggester(["approve", "research"])
    assert [suggester("aprove"), suggester("aprove"), suggester("zzzzzz")] == [
        "approve",
        "approve",
        None,
    ]


# --- robustness: validate_document never raises ---------------------------------


def assert_body_shape(body: Any) -> None:
    assert type(body) is dict
    json.dumps(body)
    if body["valid"] is True:
        assert list(body) == ["valid", "graph", "summary"]
        assert GRAPH_HASH.fullmatch(body["graph"])
        assert list(body["summary"]) == [
            "node_count",
            "edge_count",
            "entry_nodes",
            "terminal_nodes",
        ]
    else:
        assert body["valid"] is False
        assert list(body) == ["valid", "errors"]
        assert body["errors"]
        for error in body["errors"]:
            assert list(error)[:2] == ["code", "message"]
            assert isinstance(error["code"], str)
            assert isinstance(error["message"], str)


JSON_VALUES = json_values(max_text=10, max_leaves=20, int64=False)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(data: bytes) -> None:
    assert_body_shape(validate_document(data))


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES)
def test_random_json_values_never_raise(value: Any) -> None:
    assert_body_shape(validate_document(json.dumps(value)))


def rich_document() -> dict[str, Any]:
    return doc(
        [
            agent("research", name="Research", output_schema={"type": "object"}),
            {
                "kind": "branch",
                "payload": {
                    "id": "route",
                    "on": "result",
                    "agent_hash": HASH,
                    "cases": [
                        {"name": "good", "when": {"kind": "expression", "value": "score > 1"}},
                        {"name": "ask", "when": {"kind": "model_decision"}},
                    ],
                },
            },
            gate("approve", {"type": "object"}),
            tool("publish", input={"url": "a.b"}, input_schema={"type": "object"}),
            map_node("each", {"kind": "node", "value": "worker"}, output_schema={}),
            agent("worker"),
            fold_node(
                "refine",
                subgraph(doc([agent("inner"), tool("t")], [edge("inner", "t")])),
                join={"kind": "best_by", "value": "score"},
                accumulator_schema={"type": "number"},
            ),
        ],
        [
            edge("research", "route"),
            {"from": "route", "to": "approve", "label": "good"},
            {"from": "route", "to": "refine", "label": "ask"},
            edge("approve", "publish"),
            edge("refine", "each"),
        ],
    )


def test_the_rich_document_used_for_mutations_is_valid() -> None:
    assert check(rich_document())["valid"] is True


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(paths(item, (*prefix, index)))
    return found


def mutate(document: Any, path: tuple[Any, ...], operation: str, value: Any, key: str) -> Any:
    if not path:
        return value
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if operation == "replace":
        parent[last] = value
    elif operation == "delete":
        del parent[last]
    else:
        target = parent[last]
        if isinstance(target, dict):
            target[key] = value
        elif isinstance(target, list):
            target.append(value)
        else:
            parent[last] = value
    return document


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutations_of_a_valid_document_never_raise(data: st.DataObject) -> None:
    document = rich_document()
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths(document)))
        operation = data.draw(st.sampled_from(["replace", "delete", "extra"]))
        value = data.draw(JSON_VALUES)
        key = data.draw(st.text(max_size=6))
        document = mutate(document, path, operation, value, key)
    text = json.dumps(document)
    body = validate_document(text)
    assert_body_shape(body)
    try:
        graph = parse_document(text)
    except ValueError:
        assert [error["code"] for error in body["errors"]] == ["malformed_document"]
    else:
        errors = validate(graph)
        if errors:
            assert body == {"valid": False, "errors": errors}
        else:
            assert body == {"valid": True, "graph": graph_hash(graph), "summary": summarize(graph)}


@pytest.mark.parametrize(
    "data",
    [
        "[" * 10_000,
        "[" * 10_000 + "]" * 10_000,
        '{"a":' * 10_000 + "1" + "}" * 10_000,
        '{"schema_version": 1, "nodes": [' + "[" * 10_000 + "]" * 10_000 + "]}",
        json.dumps(doc([agent("a")]))[:-1] + ', "x": ' + "[" * 126 + "]" * 126 + "}",
        b"\xff\xfe\x00",
        b"\xef\xbb\xbf" + json.dumps(doc([])).encode(),
        b'{"schema_version": 1, "nodes": [], "edges": [], "\xed\xa0\x80": 1}',
        b'{"schema_version": 1, "nodes": [{"kind": "agent", "payload": {"id": "\xc3"}}]}',
        '{"schema_version": 1, "nodes": [], "x": "\ud800"}',
        '{"schema_version": 1, "nodes": [], "x": "\\ud800"}',
        '{"schema_version": 1e400, "nodes": []}',
        '{"schema_version": NaN, "nodes": []}',
        "\x00",
    ],
    ids=lambda value: repr(value)[:40],
)
def test_hostile_json_text_never_raises(data: str | bytes) -> None:
    assert_body_shape(validate_document(data))


def nested_schema(steps: int, keyword: str, leaf: dict[str, Any]) -> dict[str, Any]:
    schema = leaf
    for _ in range(steps):
        schema = {keyword: [schema]} if keyword == "allOf" else {keyword: schema}
    return schema


def called_from_deep_stack(frames: int, body: Callable[[], Any]) -> Any:
    return body() if frames == 0 else called_from_deep_stack(frames - 1, body)


@pytest.mark.parametrize(("steps", "keyword"), [(60, "not"), (122, "not"), (61, "allOf")], ids=str)
@pytest.mark.parametrize("frames", [0, 600])
def test_schemas_nested_up_to_the_reader_cap_are_checked_under_a_deep_caller(
    steps: int, keyword: str, frames: int
) -> None:
    document = doc(
        [
            agent("a", input_schema=nested_schema(steps, keyword, {})),
            agent("b", output_schema=nested_schema(steps, keyword, {"type": 5})),
        ]
    )
    text = json.dumps(document)
    body = called_from_deep_stack(frames, lambda: validate_document(text))
    assert_body_shape(body)
    assert_schema_errors(body["errors"], [("agent", "b", "output_schema")])
    assert "too deeply" not in body["errors"][0]["error"]


def test_a_large_document_with_many_dangling_edges_returns() -> None:
    nodes = [agent(f"node{i}") for i in range(10_000)]
    edges = [edge(f"node{i % 10_000}", f"missing{i}") for i in range(20_000)]
    body = check(doc(nodes, edges))
    assert body["valid"] is False
    assert len(body["errors"]) == 20_000
    assert {error["code"] for error in body["errors"]} == {"dangling_edge"}
