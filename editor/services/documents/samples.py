"""Named sample inputs of a document, for its test runs ("small refund", "large refund").

Several per document, edited as JSON in the editor's test panel (and
``PUT /v1/documents/{slug}/samples``), each checked against the input schema of the draft's
entry nodes (those no edge leads to) when they have one. The sample a person last tested a
document with is remembered for them (``LastSample``, written by ``test_runs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from editor.engine.schemas import first_violation
from editor.graph import Graph
from editor.graph.model import NodeBody
from editor.models import LastSample, SampleInput
from editor.services.access import ActingUser, author_of
from editor.services.documents.drafts import parsed_draft
from editor.services.documents.rows import document_row, require_author
from editor.services.errors import InvalidRequest
from editor.services.storable import check_storable, nul_path

__all__ = ["MAX_SAMPLES", "Sample", "SampleSet", "list_samples", "put_samples"]

#: Sample inputs a document keeps, and the length of a sample's name.
MAX_SAMPLES = 20
MAX_NAME = 100


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    input: Any


@dataclass(frozen=True, slots=True)
class SampleSet:
    """A document's samples in their order, and the one this person last tested with."""

    samples: list[Sample]
    last: str | None


def list_samples(user: ActingUser, slug: str) -> SampleSet:
    """``GET /v1/documents/{slug}/samples``."""
    document = document_row(slug)
    samples = [Sample(row.name, row.input) for row in SampleInput.objects.filter(document=document)]
    last = None
    person = author_of(user)
    if person is not None:
        last = (
            LastSample.objects.filter(document=document, user=person)
            .values_list("name", flat=True)
            .first()
        )
    if last is not None and last not in {sample.name for sample in samples}:
        last = None
    return SampleSet(samples, last)


def put_samples(user: ActingUser, slug: str, samples: Any) -> SampleSet:
    """``PUT /v1/documents/{slug}/samples``: the document's samples become exactly
    ``samples`` (``[{"name", "input"}]``, in order), each checked; nothing changes when one is
    refused (:class:`InvalidRequest` naming it)."""
    require_author(user)
    document = document_row(slug)
    checked = _checked(samples, parsed_draft(document))
    with transaction.atomic():
        SampleInput.objects.filter(document=document).delete()
        SampleInput.objects.bulk_create(
            SampleInput(document=document, name=sample.name, input=sample.input, position=index)
            for index, sample in enumerate(checked)
        )
    return list_samples(user, slug)


def _checked(samples: Any, graph: Graph | None) -> list[Sample]:
    if not isinstance(samples, list):
        raise InvalidRequest("`samples` must be a list of {name, input}", "samples")
    if len(samples) > MAX_SAMPLES:
        raise InvalidRequest(f"a document keeps at most {MAX_SAMPLES} sample inputs", "samples")
    schemas = entry_schemas(graph) if graph is not None else []
    seen: set[str] = set()
    checked = []
    for index, entry in enumerate(samples):
        where = f"samples[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise InvalidRequest(f"`{where}` must be an object with a `name`", where)
        name = entry["name"].strip()
        if not name or len(name) > MAX_NAME or nul_path(name) is not None:
            raise InvalidRequest(
                f"`{where}.name` must be 1 to {MAX_NAME} characters, without NUL", where
            )
        if name in seen:
            raise InvalidRequest(f"two samples are named `{name}`", where)
        seen.add(name)
        value = entry.get("input")
        check_storable(value)
        for node, schema in schemas:
            violation = first_violation(schema, value)
            if violation is not None:
                raise InvalidRequest(
                    f"the sample `{name}` does not fit the input schema of `{node}`: {violation}",
                    where,
                )
        checked.append(Sample(name, value))
    return checked


def entry_schemas(graph: Graph) -> list[tuple[str, Any]]:
    """The input schemas of the nodes a run's input reaches first (no edge leads to them)."""
    targets = {edge.target for edge in graph.edges}
    # A map's or fold's body node is run by its owner, on an item: not an entry.
    targets |= {
        body.node
        for node in graph.nodes
        if isinstance(body := getattr(node, "body", None), NodeBody)
    }
    return [
        (node.id, schema)
        for node in graph.nodes
        if node.id not in targets and (schema := getattr(node, "input_schema", None)) is not None
    ]
