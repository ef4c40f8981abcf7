"""Conformance cases for the reference's 0.10 format (spec 08): the ``delay`` node,
``fold.on_bound``, the malformed ``when``, and checks 7 and 9 at their 0.10 places.

The cases live in ``cases/format_0_10.json``. A parse case holds the document text and
either the wire form and hash it parses to, or the ``malformed_document`` message; a
validation case holds the exact error list (keys in order) or the summary.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from editor.graph import MalformedDocument, graph_hash, parse_document, validate_document, wire_json
from editor.graph.model import DelayNode, FoldNode
from tests.reference_examples import EXAMPLES, needs_examples
from tests.unit.test_validation import assert_exactly

CASES: dict[str, Any] = json.loads(
    (Path(__file__).parent / "cases" / "format_0_10.json").read_text(encoding="utf-8")
)
PARSED = [case for case in CASES["parse"] if "wire" in case]
MALFORMED = [case for case in CASES["parse"] if "malformed" in case]
#: The reference's ``examples/refine/refine-notice.json``, read where it is, never copied in.
REFINE = EXAMPLES / "refine" / "refine-notice.json"
#: The SHA-256 of its canonical form (sorted keys, compact): the reference's README gives the
#: agent's hash only, so the test also derives it with the standard library alone.
REFINE_HASH = "sha256:6dcf5883b2a812bd56b7b3a33afd39152e09b980510a97cbc92e942f6f57050a"


@pytest.mark.parametrize("case", PARSED, ids=[case["name"] for case in PARSED])
def test_a_0_10_document_parses_to_its_wire_form_and_hash(case: dict[str, Any]) -> None:
    graph = parse_document(case["text"])
    assert wire_json(graph) == case["wire"]
    assert graph_hash(graph) == case["hash"]
    assert wire_json(parse_document(case["wire"])) == case["wire"]  # a fixed point


@pytest.mark.parametrize("case", MALFORMED, ids=[case["name"] for case in MALFORMED])
def test_a_malformed_0_10_document_is_refused_with_its_message(case: dict[str, Any]) -> None:
    with pytest.raises(MalformedDocument) as refused:
        parse_document(case["text"])
    assert str(refused.value) == case["malformed"]
    body = validate_document(case["text"])
    assert body["errors"][0]["code"] == "malformed_document"


@pytest.mark.parametrize("case", CASES["validation"], ids=[c["name"] for c in CASES["validation"]])
def test_a_0_10_validation_case_gives_exactly_its_outcome(case: dict[str, Any]) -> None:
    text = json.dumps(case["document"])
    body = validate_document(text)
    if "summary" in case:
        graph = parse_document(text)
        assert_exactly(
            body, {"valid": True, "graph": graph_hash(graph), "summary": case["summary"]}
        )
    else:
        assert_exactly(body, {"valid": False, "errors": case["errors"]})


def test_a_fold_without_on_bound_hashes_as_before_and_an_explicit_join_does_not() -> None:
    by_name = {case["name"]: case for case in PARSED}
    before = by_name["a fold without on_bound keeps the bytes of a pre-0.10 fold"]
    assert json.loads(before["text"])["nodes"][0] == json.loads(before["wire"])["nodes"][0]
    unset = by_name["a null on_bound is unset and dropped"]
    explicit = by_name["an explicit on_bound join is written back"]
    assert unset["hash"] != explicit["hash"]
    assert '"on_bound"' not in unset["wire"]


def test_the_models_carry_the_new_fields() -> None:
    delay = parse_document(
        '{"schema_version":1,"nodes":[{"kind":"delay","payload":{"id":"d","seconds":90}}]}'
    ).nodes[0]
    assert isinstance(delay, DelayNode)
    assert (delay.id, delay.seconds, delay.name) == ("d", 90, None)
    by_name = {case["name"]: case for case in PARSED}
    pinned = by_name["on_bound fail is written after join (the reference's pinned wire)"]
    fold = parse_document(pinned["text"]).nodes[0]
    assert isinstance(fold, FoldNode)
    assert fold.on_bound == "fail"


@needs_examples(REFINE)
def test_the_reference_refine_notice_example_parses_validates_and_hashes() -> None:
    text = REFINE.read_bytes()
    body = validate_document(text)
    assert body["valid"] is True, body
    assert graph_hash(parse_document(text)) == REFINE_HASH
    canonical = json.dumps(
        json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()
    assert "sha256:" + hashlib.sha256(canonical).hexdigest() == REFINE_HASH
