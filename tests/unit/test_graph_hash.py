"""The graph hash, ``agent_def_hash`` and agent definitions (spec 01).

``graph_hash = "sha256:" + hex(sha256(canonical form of the parsed-and-rewritten document))``;
it must not depend on the process (dict order, hash seeds, locale). Agent definitions are parsed
strictly and hashed without their ``name``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from editor.graph.agents import agent_def_hash, parse_agent_definition
from editor.graph.errors import InvalidAgentDefinition
from editor.graph.jsonio import canonical_json, read_json
from editor.graph.model import AgentNode, Edge, GateNode, Graph
from editor.graph.parsing import parse_document
from editor.graph.wire import canonical_graph, graph_hash, wire_json

PROJECT_ROOT = Path(__file__).resolve().parents[2]
HASH_A = "sha256:" + "a" * 64
HASH_FORMAT = re.compile(r"sha256:[0-9a-f]{64}")

SMALL = (
    '{"schema_version": 1,\n'
    ' "nodes": [{"kind": "gate", "payload": {"id": "approve", "prompt": "Publish?",'
    ' "approval_schema": {"type": "object"}}},\n'
    '           {"kind": "agent", "payload": {"id": "research", "agent_hash": "'
    + HASH_A
    + '"}}],\n'
    ' "edges": [{"from": "research", "to": "approve"}]}'
)
SMALL_CANONICAL = (
    b'{"edges":[{"from":"research","to":"approve"}],"nodes":['
    b'{"kind":"gate","payload":{"approval_schema":{"type":"object"},"id":"approve",'
    b'"prompt":"Publish?"}},'
    b'{"kind":"agent","payload":{"agent_hash":"' + HASH_A.encode() + b'","id":"research"}}],'
    b'"schema_version":1}'
)


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# --- the graph hash ------------------------------------------------------------------------------


def test_the_canonical_bytes_of_a_document_are_its_wire_form_with_every_key_sorted() -> None:
    assert canonical_graph(parse_document(SMALL)) == SMALL_CANONICAL


def test_the_graph_hash_is_sha256_of_the_canonical_bytes_in_lowercase_hex() -> None:
    graph = parse_document(SMALL)
    assert graph_hash(graph) == _sha(SMALL_CANONICAL)
    assert HASH_FORMAT.fullmatch(graph_hash(graph))


def test_the_canonical_bytes_are_the_canonical_json_of_the_wire_form() -> None:
    graph = parse_document(SMALL)
    assert canonical_graph(graph) == canonical_json(read_json(wire_json(graph)))


def test_the_exported_canonical_bytes_hash_to_the_id_and_parse_back_to_it() -> None:
    graph = parse_document(SMALL)
    exported = canonical_graph(graph)
    assert _sha(exported) == graph_hash(graph)
    assert graph_hash(parse_document(exported)) == graph_hash(graph)
    assert canonical_graph(parse_document(exported)) == exported


def test_a_graph_built_in_code_hashes_like_the_same_document_parsed() -> None:
    built = Graph(
        1,
        (
            GateNode(id="approve", prompt="Publish?", approval_schema={"type": "object"}),
            AgentNode(id="research", agent_hash=HASH_A),
        ),
        (Edge("research", "approve"),),
    )
    assert graph_hash(built) == graph_hash(parse_document(SMALL))
    assert canonical_graph(built) == SMALL_CANONICAL


def test_the_hash_ignores_spelling_but_not_content() -> None:
    same = (
        '{"edges":[{"to":"approve","label":null,"from":"research"}],"schema_version":1,'
        '"nodes":[{"payload":{"approval_schema":{"type":"object"},"name":null,"prompt":"Publish?",'
        '"id":"approve"},"kind":"gate"},{"kind":"agent","payload":{"output_schema":null,'
        '"agent_hash":"' + HASH_A + '","id":"research","input_schema":null}}]}'
    )
    assert graph_hash(parse_document(same)) == graph_hash(parse_document(SMALL))
    assert graph_hash(parse_document(same.encode())) == graph_hash(parse_document(SMALL))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"prompt": "Publish?"', '"prompt": "Publish?", "name": "Approve the draft"'),
        ('"prompt": "Publish?"', '"prompt": "Publish!"'),
        ('{"type": "object"}', '{"type": "object", "title": "x"}'),
        ('"to": "approve"}', '"to": "approve", "label": "x"}'),
        ('"schema_version": 1', '"schema_version": 2'),
        ('{"type": "object"}', '{"type": "object", "minimum": 1}'),
    ],
    ids=["a node name", "a prompt", "a schema", "an edge label", "the version", "a number"],
)
def test_any_change_of_content_changes_the_hash(old: str, new: str) -> None:
    assert old in SMALL
    assert graph_hash(parse_document(SMALL.replace(old, new))) != graph_hash(parse_document(SMALL))


def test_renaming_a_node_changes_the_hash_by_design() -> None:
    named = SMALL.replace('"id": "approve"', '"id": "approve", "name": "Approve"')
    renamed = SMALL.replace('"id": "approve"', '"id": "approve", "name": "Approve it"')
    hashes = {graph_hash(parse_document(text)) for text in (SMALL, named, renamed)}
    assert len(hashes) == 3


def test_an_integer_and_the_equal_float_hash_differently() -> None:
    one = SMALL.replace('{"type": "object"}', '{"minimum": 1}')
    one_point_zero = SMALL.replace('{"type": "object"}', '{"minimum": 1.0}')
    assert graph_hash(parse_document(one)) != graph_hash(parse_document(one_point_zero))


def test_the_order_of_nodes_and_edges_is_part_of_the_hash() -> None:
    value = json.loads(SMALL)
    value["nodes"].reverse()
    assert graph_hash(parse_document(json.dumps(value))) != graph_hash(parse_document(SMALL))


# --- across processes ----------------------------------------------------------------------------

# Many keys in many orders, non-ASCII text, floats that take the slow canonical path.
_WIDE_SCHEMA = {f"k{index:02d}-{chr(0x3B1 + index % 20)}": index for index in range(60)}
CROSS_PROCESS_GRAPHS = [
    SMALL,
    json.dumps(
        {
            "schema_version": 1,
            "nodes": [
                {
                    "kind": "tool",
                    "payload": {
                        "id": "t",
                        "tool": "echo",
                        "name": "Écrire 😀",
                        "input": {chr(0x61 + index): f"v{index}" for index in reversed(range(20))},
                        "input_schema": _WIDE_SCHEMA,
                        "output_schema": {"z": [1e-7, 0.00001, -0.0, 1e16, 2**64 - 1], "é": "e-"},
                    },
                },
                {
                    "kind": "fold",
                    "payload": {
                        "id": "f",
                        "body": {"kind": "subgraph", "value": {"schema_version": 1, "nodes": []}},
                        "max_iterations": 3,
                        "stop_when": "done == true",
                        "join": {"kind": "last", "value": None},
                    },
                },
            ],
            "edges": [{"from": "t", "to": "f", "label": "ok"}],
        }
    ),
]
CROSS_PROCESS_AGENTS = [
    '{"model": "echo", "prompt": "Say it back."}',
    json.dumps(
        {
            "name": "Critic",
            "model": "scripted",
            "prompt": "Critique: ∂",
            "tools": ["b", "a"],
            "budget": {"max_tokens": 1000, "max_steps": 3},
            "options": {"replies": ["one", "two 😀"]},
        }
    ),
]
_SCRIPT = """
import json, sys
from editor.graph.agents import agent_def_hash, parse_agent_definition
from editor.graph.parsing import parse_document
from editor.graph.wire import graph_hash
data = json.load(sys.stdin)
print(json.dumps({
    "graphs": [graph_hash(parse_document(text)) for text in data["graphs"]],
    "agents": [agent_def_hash(parse_agent_definition(text)) for text in data["agents"]],
}))
"""


def _hashes_in_a_fresh_interpreter(seed: str, locale: str) -> dict[str, list[str]]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "LC_ALL": locale, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        input=json.dumps({"graphs": CROSS_PROCESS_GRAPHS, "agents": CROSS_PROCESS_AGENTS}),
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=PROJECT_ROOT,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_graph_and_agent_hashes_are_the_same_in_freshly_spawned_interpreters() -> None:
    here = {
        "graphs": [graph_hash(parse_document(text)) for text in CROSS_PROCESS_GRAPHS],
        "agents": [agent_def_hash(parse_agent_definition(text)) for text in CROSS_PROCESS_AGENTS],
    }
    first = _hashes_in_a_fresh_interpreter("1", "C")
    second = _hashes_in_a_fresh_interpreter("4242", "C.UTF-8")
    assert first == here
    assert second == here


# --- agent_def_hash ------------------------------------------------------------------------------


def test_agent_def_hash_is_a_sha256_of_the_canonical_definition() -> None:
    value = agent_def_hash(parse_agent_definition('{"model":"echo","prompt":"p"}'))
    assert HASH_FORMAT.fullmatch(value)


def test_renaming_an_agent_keeps_its_hash() -> None:
    base = {"model": "echo", "prompt": "Say it back."}
    hashes = {
        agent_def_hash(parse_agent_definition(definition))
        for definition in (base, {**base, "name": "Echo"}, {**base, "name": "Parrot"})
    }
    assert len(hashes) == 1


def test_the_agent_hash_ignores_key_order_whitespace_and_input_form() -> None:
    text = '{"prompt": "p", "model": "echo", "tools": ["a"]}'
    spelled = ' {\n"tools":["a"] ,\t"model":"echo","prompt":"p"}\r\n'
    hashes = {
        agent_def_hash(parse_agent_definition(text)),
        agent_def_hash(parse_agent_definition(spelled)),
        agent_def_hash(parse_agent_definition(spelled.encode())),
        agent_def_hash(parse_agent_definition({"model": "echo", "prompt": "p", "tools": ["a"]})),
    }
    assert len(hashes) == 1


def test_explicit_defaults_do_not_change_the_agent_hash() -> None:
    """Our choice: defaults are written out before hashing, so spelling them is not a change."""
    plain = {"model": "echo", "prompt": "p"}
    spelled = {**plain, "tools": [], "options": {}, "budget": {}, "name": None}
    nulls = {**plain, "tools": None, "options": None, "budget": None}
    hashes = {agent_def_hash(parse_agent_definition(value)) for value in (plain, spelled, nulls)}
    assert len(hashes) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"prompt": "Say it twice."},
        {"prompt": ""},
        {"model": "openai:gpt-4o-mini"},
        {"tools": ["search"]},
        {"budget": {"max_steps": 5}},
        {"budget": {"max_tokens": 5}},
    ],
    ids=["prompt", "empty prompt", "model", "tools", "max_steps", "max_tokens"],
)
def test_changing_what_the_agent_does_changes_its_hash(change: dict[str, Any]) -> None:
    base = {"name": "Echo", "model": "echo", "prompt": "Say it back."}
    assert agent_def_hash(parse_agent_definition({**base, **change})) != agent_def_hash(
        parse_agent_definition(base)
    )


def test_the_order_of_tools_and_replies_is_part_of_the_agent_hash() -> None:
    one = {
        "model": "scripted",
        "prompt": "p",
        "tools": ["a", "b"],
        "options": {"replies": ["x", "y"]},
    }
    tools = {**one, "tools": ["b", "a"]}
    replies = {**one, "options": {"replies": ["y", "x"]}}
    hashes = {agent_def_hash(parse_agent_definition(value)) for value in (one, tools, replies)}
    assert len(hashes) == 3


# --- agent definition parsing --------------------------------------------------------------------


def _problems(definition: Any) -> list[dict[str, str]]:
    with pytest.raises(InvalidAgentDefinition) as caught:
        parse_agent_definition(definition)
    errors = caught.value.errors
    assert errors, "a refused definition lists at least one problem"
    for error in errors:
        assert set(error) == {"code", "message", "field"}
        assert isinstance(error["message"], str) and error["message"]
        assert isinstance(error["field"], str)
    return errors


def _only(definition: Any) -> dict[str, str]:
    errors = _problems(definition)
    assert len(errors) == 1, errors
    return errors[0]


@pytest.mark.parametrize(
    "definition",
    [
        {"model": "echo", "prompt": ""},
        {"model": "echo", "prompt": "p", "name": "x" * 64},
        {"model": "echo", "prompt": "p", "name": "😀" * 64},
        {"model": "scripted", "prompt": "p", "options": {"replies": []}},
        {"model": "scripted", "prompt": "p", "options": {"replies": ["a", "b"]}},
        {
            "name": "Researcher",
            "model": "openai:gpt-4o-mini",
            "prompt": "Find sources.",
            "tools": ["search", "fetch"],
            "budget": {"max_steps": 1, "max_tokens": 4294967295},
            "options": {},
        },
    ],
    ids=["echo", "64 characters", "64 emoji", "no replies", "replies", "openai with everything"],
)
def test_valid_definitions_parse(definition: dict[str, Any]) -> None:
    parsed = parse_agent_definition(json.dumps(definition))
    assert parsed.model == definition["model"]
    assert parsed.prompt == definition["prompt"]
    assert parsed.name == definition.get("name")


@pytest.mark.parametrize("name", ["", " ", "   ", "\t\n", "\u3000", "\u00a0", "\u2028 \u2003"])
def test_a_blank_name_is_blank_agent_name(name: str) -> None:
    error = _only({"name": name, "model": "echo", "prompt": "p"})
    assert (error["code"], error["field"]) == ("blank_agent_name", "name")


@pytest.mark.parametrize("name", ["x" * 65, "😀" * 65, "a" * 1000])
def test_a_name_over_64_characters_is_agent_name_too_long(name: str) -> None:
    error = _only({"name": name, "model": "echo", "prompt": "p"})
    assert (error["code"], error["field"]) == ("agent_name_too_long", "name")


@pytest.mark.parametrize(
    "model",
    [
        "gpt-4o",
        "openai",
        "openai:",
        "openai: ",
        "Echo",
        "ECHO",
        "",
        "scripted ",
        "anthropic:x",
        "claude-",
        "claude- ",
        "Claude-3",
    ],
)
def test_a_model_that_is_not_echo_scripted_or_openai_is_unknown_model(model: str) -> None:
    error = _only({"model": model, "prompt": "p"})
    assert (error["code"], error["field"]) == ("unknown_model", "model")


@pytest.mark.parametrize(
    "options", [None, {}, {"replies": None}], ids=["no options", "empty options", "null replies"]
)
def test_a_scripted_agent_without_replies_is_missing_replies(options: Any) -> None:
    definition: dict[str, Any] = {"model": "scripted", "prompt": "p"}
    if options is not None:
        definition["options"] = options
    error = _only(definition)
    assert (error["code"], error["field"]) == ("missing_replies", "options.replies")


@pytest.mark.parametrize(
    ("definition", "field"),
    [
        ("[]", ""),
        ('"echo"', ""),
        ("{", ""),
        ('{"model":"echo","prompt":"p","model":"echo"}', ""),
        (b'\xef\xbb\xbf{"model":"echo","prompt":"p"}', ""),
        ('{"prompt":"p"}', "model"),
        ('{"model":"echo"}', "prompt"),
        ('{"model":5,"prompt":"p"}', "model"),
        ('{"model":"echo","prompt":["p"]}', "prompt"),
        ('{"model":"echo","prompt":"p","name":5}', "name"),
        ('{"model":"echo","prompt":"p","tools":"search"}', "tools"),
        ('{"model":"echo","prompt":"p","tools":[1]}', "tools"),
        ('{"model":"echo","prompt":"p","budget":[]}', "budget"),
        ('{"model":"echo","prompt":"p","budget":{"max_steps":0}}', "budget.max_steps"),
        ('{"model":"echo","prompt":"p","budget":{"max_steps":true}}', "budget.max_steps"),
        ('{"model":"echo","prompt":"p","budget":{"max_steps":1.0}}', "budget.max_steps"),
        ('{"model":"echo","prompt":"p","budget":{"max_tokens":4294967296}}', "budget.max_tokens"),
        ('{"model":"echo","prompt":"p","budget":{"max_tokens":-1}}', "budget.max_tokens"),
        ('{"model":"echo","prompt":"p","options":[]}', "options"),
        ('{"model":"scripted","prompt":"p","options":{"replies":"hi"}}', "options.replies"),
        ('{"model":"scripted","prompt":"p","options":{"replies":[1]}}', "options.replies"),
    ],
)
def test_a_malformed_definition_names_the_field(definition: str | bytes, field: str) -> None:
    error = _only(definition)
    assert (error["code"], error["field"]) == ("malformed_definition", field)


@pytest.mark.parametrize(
    ("definition", "field"),
    [
        ({"model": "echo", "prompt": "p", "temperature": 0.2}, "temperature"),
        ({"model": "echo", "prompt": "p", "Name": "x"}, "Name"),
        ({"model": "echo", "prompt": "p", "budget": {"max_time": 5}}, "budget.max_time"),
        (
            {"model": "scripted", "prompt": "p", "options": {"replies": [], "seed": 1}},
            "options.seed",
        ),
        ({"model": "echo", "prompt": "p", "options": {"replies": ["x"]}}, "options.replies"),
        (
            {"model": "openai:gpt-4o", "prompt": "p", "options": {"temperature": 1}},
            "options.temperature",
        ),
    ],
)
def test_unknown_keys_in_a_definition_are_refused_naming_them(
    definition: dict[str, Any], field: str
) -> None:
    error = _only(definition)
    assert (error["code"], error["field"]) == ("malformed_definition", field)
    assert field.rsplit(".", 1)[-1] in error["message"]


def test_several_problems_are_reported_together() -> None:
    errors = _problems(
        {
            "name": "  ",
            "model": "gpt-4o",
            "prompt": 5,
            "tools": "all",
            "budget": {"max_steps": 0},
            "color": "red",
        }
    )
    found = {(error["code"], error["field"]) for error in errors}
    assert found == {
        ("blank_agent_name", "name"),
        ("unknown_model", "model"),
        ("malformed_definition", "prompt"),
        ("malformed_definition", "tools"),
        ("malformed_definition", "budget.max_steps"),
        ("malformed_definition", "color"),
    }


def test_a_too_long_name_and_missing_replies_are_reported_together() -> None:
    errors = _problems({"name": "x" * 65, "model": "scripted", "prompt": "p"})
    assert [(error["code"], error["field"]) for error in errors] == [
        ("agent_name_too_long", "name"),
        ("missing_replies", "options.replies"),
    ]


def test_invalid_agent_definition_says_every_problem_in_its_message() -> None:
    with pytest.raises(InvalidAgentDefinition) as caught:
        parse_agent_definition({"name": "", "model": "nope", "prompt": "p"})
    for error in caught.value.errors:
        assert error["message"] in str(caught.value)
