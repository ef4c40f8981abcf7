"""Fuzzing the document parser and the expression language (spec 07: no crash, no hang).

Random bytes, random JSON, and mutations — of the bytes and of the structure — of real
documents (the templates, every case of ``cases/validation.json``) go to the document parser;
token soups and grammatical text, with random JSON values, go to expressions and references.
Each input is held to its target's promise (``tests/unit/fuzzing.py``); inputs are bounded in
size, so nothing can hang.

In ``make test`` each property runs a capped, repeatable set of examples. ``make fuzz`` runs
thousands, keeps Hypothesis' example database under ``var/fuzz/`` and writes the inputs it
found interesting into the corpus (``cases/fuzz/``), which ``test_fuzz_corpus.py`` replays.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from editor.graph import wire_value
from editor.graph.templates import approval_gate, parallel, rounds
from tests.unit.fuzzing import Recorder, fuzz_settings
from tests.unit.strategies import json_values

AGENT = "sha256:" + "ab" * 32


def _real_documents() -> list[Any]:
    cases = json.loads((Path(__file__).parent / "cases" / "validation.json").read_text())
    templates = [
        approval_gate(AGENT),
        parallel(AGENT, AGENT, ("a", "b")),
        rounds(AGENT, AGENT, ("a", "b"), 2),
    ]
    return [wire_value(graph) for graph in templates] + [
        case["document"] for case in cases["cases"]
    ]


REAL = _real_documents()
JSON = json_values(max_text=8, max_leaves=15, int64=False)
#: Fragments that matter to a JSON reader and to the document's own fields.
FRAGMENTS = [
    "{", "}", "[", "]", ",", ":", '"', "\\", "\\u", "\\ud800", "null", "true", "1e400", "-0",
    "0.1", "01", "18446744073709551616", '"kind"', '"payload"', '"id"', '"nodes"', '"edges"',
    '"from"', '"to"', '"schema_version"', '"subgraph"', '"body"', '"when"', '"expression"',
    " ", "\n", "\u2028", "\x00", "é", "\U0001f600",
]  # fmt: skip


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """Checks inputs; in ``make fuzz``, writes the interesting ones to the corpus at the end."""
    recording = Recorder()
    try:
        yield recording
    finally:
        recording.save()


# --- Documents ---------------------------------------------------------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(item, (*prefix, index)))
    return found


@st.composite
def structural_mutations(draw: st.DrawFn) -> str:
    """A real document with one to four values replaced, deleted, added or duplicated."""
    document = copy.deepcopy(draw(st.sampled_from(REAL)))
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(_paths(document)))
        if not path:
            continue
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        operation = draw(st.sampled_from(["replace", "delete", "add", "duplicate"]))
        if operation == "replace":
            parent[last] = draw(JSON)
        elif operation == "delete":
            del parent[last]
        elif operation == "duplicate" and isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = draw(JSON)
        else:
            parent.append(draw(JSON))
    return json.dumps(document, ensure_ascii=draw(st.booleans()))


@st.composite
def textual_mutations(draw: st.DrawFn) -> str | bytes:
    """A real document's text with slices deleted, repeated or replaced by fragments; some as
    bytes with a few of them changed."""
    text = json.dumps(draw(st.sampled_from(REAL)), indent=draw(st.sampled_from([None, 1])))
    for _ in range(draw(st.integers(1, 5))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 40)))
        operation = draw(st.sampled_from(["delete", "repeat", "insert", "truncate"]))
        if operation == "delete":
            text = text[:start] + text[end:]
        elif operation == "repeat":
            text = text[:end] + text[start:end] + text[end:]
        elif operation == "insert":
            text = text[:start] + draw(st.sampled_from(FRAGMENTS)) + text[end:]
        else:
            text = text[:start]
    if not draw(st.booleans()):
        return text
    data = bytearray(text.encode("utf-8", "surrogatepass"))
    for _ in range(draw(st.integers(0, 3))):
        if data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return bytes(data)


DOCUMENTS = (
    st.binary(max_size=400)
    | st.text(max_size=400)
    | JSON.map(json.dumps)
    | structural_mutations()
    | textual_mutations()
)


@fuzz_settings()
@given(data=DOCUMENTS)
def test_the_document_parser_answers_any_input_with_a_verdict(
    recorder: Recorder, data: bytes | str
) -> None:
    recorder.check("document", data)


# --- Expressions and references ----------------------------------------------------------------

PIECES = [
    "a", "b", "x", "items", "_", "0", "1", "-1", "0.5", "01", "1e5", "18446744073709551616", ".",
    "(", ")", "!", "!=", "==", "=", "<", "<=", ">", ">=", "&&", "&", "||", "|", '"', '"s"', "\\",
    "\\n", '\\"', "\\u00e9", "\\ud800", "true", "false", "null", " ", "\t", "\u3000", "\u0085",
    "\u200b", "é", "-", "'", "\U0001f600", "((((", "))))", "!!!!",
]  # fmt: skip
SOUP = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)
TEXT = SOUP | st.text(max_size=200) | st.text(alphabet='ab01._-"\\ ()!=<>&|', max_size=200)
KEYS = st.sampled_from(["a", "b", "x", "items", "0", "1", "", "é"])
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=20,
)


@fuzz_settings()
@given(text=TEXT, value=VALUES)
def test_any_text_is_an_expression_that_evaluates_to_a_boolean_or_an_expression_error(
    recorder: Recorder, text: str, value: Any
) -> None:
    recorder.check("expression", text, value)


SEGMENTS = st.lists(
    st.sampled_from(["a", "b", "items", "0", "1", "01", "-1", "é", "_x", '"a"', "1.5", "true"]),
    max_size=12,
)
REFERENCES = (
    SEGMENTS.flatmap(
        lambda segments: st.sampled_from([".", " . ", ". ", "..", "\t.\t"]).map(
            lambda dot: dot.join(segments)
        )
    )
    | SOUP
    | st.text(max_size=100)
)


@fuzz_settings()
@given(text=REFERENCES, value=VALUES)
def test_any_text_is_a_reference_that_resolves_or_an_expression_error(
    recorder: Recorder, text: str, value: Any
) -> None:
    recorder.check("reference", text, value)
