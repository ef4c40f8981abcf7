"""Named sample inputs of a document, for its test runs ("small refund", "large refund").

Several per document, each checked against the input schema of the draft's entry nodes (those
no edge leads to) when they have one. The sample a person last tested a document with is
remembered for them (``LastSample``, written by ``test_runs``).

The editor's Test panel edits them one at a time as a form generated from that schema, by the
inbox card's rules (:mod:`editor.presentation.approval_forms`, without the decision buttons: every
boolean a checkbox), or all at once as JSON (as ``PUT /v1/documents/{slug}/samples`` does). A
schema without properties, or entry nodes that disagree on theirs, leave the JSON alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction

from editor.engine.schemas import first_violation, violations
from editor.graph import Graph
from editor.graph.jsonio import pretty_json
from editor.graph.model import NodeBody
from editor.models import LastSample, SampleInput
from editor.presentation.approval_forms import (
    FALLBACK,
    ApprovalForm,
    approval_form,
    field_errors,
    read_approval,
    with_errors,
    with_post,
)
from editor.presentation.typed import read_typed_json
from editor.services.access import ActingUser, author_of
from editor.services.documents.drafts import parsed_draft
from editor.services.documents.rows import document_row, require_author
from editor.services.errors import InvalidRequest
from editor.services.storable import check_storable, nul_path

__all__ = [
    "FROM_JSON",
    "MAX_SAMPLES",
    "InputForm",
    "InvalidInput",
    "InvalidSample",
    "Sample",
    "SampleForm",
    "SampleForms",
    "SampleSet",
    "delete_sample",
    "input_form",
    "list_samples",
    "put_samples",
    "read_draft_input",
    "read_input",
    "sample_forms",
    "sample_input",
    "save_sample",
    "with_form",
]

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


# --- One sample as a form ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SampleForm:
    """One sample's form (``name`` empty: the form that adds one); ``prefix`` keeps its
    fields' ids apart from the other samples'."""

    name: str
    prefix: str
    form: ApprovalForm
    #: The name as typed, and what is wrong with it.
    typed_name: str = ""
    name_errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SampleForms:
    """Every sample's form and the one that adds a sample; ``schema_of``: the entry nodes
    whose input schema the fields come from (``None``: JSON only)."""

    schema_of: tuple[str, ...] | None
    forms: list[SampleForm]
    new: SampleForm


class InvalidSample(InvalidRequest):
    """A sample's form that cannot be saved: the form again, with what was typed and the
    errors beside their fields."""

    def __init__(self, message: str, form: SampleForm) -> None:
        super().__init__(message, "samples")
        self.form = form


def form_schema(graph: Graph | None) -> tuple[Any, tuple[str, ...] | None]:
    """The schema a sample's form is generated from: the entry nodes' input schema, when they
    have one and agree on it (``None``, ``None`` otherwise: JSON only)."""
    schemas = entry_schemas(graph) if graph is not None else []
    if not schemas or any(schema != schemas[0][1] for _node, schema in schemas):
        return None, None
    return schemas[0][1], tuple(node for node, _schema in schemas)


def _form(schema: Any, value: Any, has_value: bool) -> ApprovalForm:
    if schema is None:
        return ApprovalForm(None, json_text=pretty_json(value) if has_value else "")
    form = approval_form(schema, value if has_value else {}, decision=False)
    if form.fields is None:
        return replace(form, json_text=pretty_json(value)) if has_value else form
    # A sample's own values are no run's: only a schema's default says where it came from.
    fields = tuple(
        replace(item, source="") if item.source == "run" else item for item in form.fields
    )
    return replace(form, fields=fields)


def sample_forms(slug: str, samples: list[Sample]) -> SampleForms:
    """The forms of the document's samples, and one to add a sample."""
    schema, nodes = form_schema(parsed_draft(document_row(slug)))
    forms = [
        SampleForm(sample.name, f"sample-{index}", _form(schema, sample.input, True))
        for index, sample in enumerate(samples, start=1)
    ]
    return SampleForms(nodes, forms, SampleForm("", "sample-new", _form(schema, None, False)))


def with_form(forms: SampleForms, edited: SampleForm) -> SampleForms:
    """``forms`` with ``edited`` (a refused form, with what was typed) in its place."""
    if edited.prefix == forms.new.prefix:
        return replace(forms, new=edited)
    shown = [edited if form.prefix == edited.prefix else form for form in forms.forms]
    return replace(forms, forms=shown)


def save_sample(
    user: Any, slug: str, original: str, name: str, post: Mapping[str, str]
) -> SampleSet:
    """Save one sample from its form: the one named ``original`` (empty: a new one, added
    last) becomes ``name`` with the value the form means, checked against the schema; the
    others stay. :class:`InvalidSample` carries the form again with its errors."""
    require_author(user)
    document = document_row(slug)
    graph = parsed_draft(document)
    schema, _nodes = form_schema(graph)
    kept = list_samples(user, slug).samples
    index = next((i for i, sample in enumerate(kept) if sample.name == original), None)
    prefix = f"sample-{index + 1}" if index is not None else "sample-new"
    base = _form(schema, None, False)
    typed = name.strip()

    def refused(message: str, form: ApprovalForm, name_errors: tuple[str, ...] = ()) -> Any:
        shown = SampleForm(original, prefix, form, typed_name=name, name_errors=name_errors)
        return InvalidSample(message, shown)

    value, errors, general = _read(schema, post)
    posted = with_post(base, schema, post)
    if errors or general:
        raise refused("the sample has errors", with_errors(posted, errors, general))
    if not typed:
        raise refused("a sample needs a name", posted, ("Give the sample a name.",))
    if any(sample.name == typed for i, sample in enumerate(kept) if i != index):
        raise refused(f"another sample is named `{typed}`", posted, ("That name is taken.",))
    changed = Sample(typed, value)
    samples = list(kept)
    if index is None:
        samples.append(changed)
    else:
        samples[index] = changed
    try:
        return put_samples(user, slug, [{"name": s.name, "input": s.input} for s in samples])
    except InvalidSample:
        raise
    except InvalidRequest as error:
        raise refused(str(error), posted) from None


def _read(schema: Any, post: Mapping[str, str]) -> tuple[Any, dict[str, list[str]], list[str]]:
    """The value a sample's form means, the errors by field, and the general ones."""
    if schema is None or _form(schema, None, False).fields is None:
        text = str(post.get(FALLBACK, "")).strip()
        if not text:
            return None, {FALLBACK: ["Enter the input as JSON."]}, []
        value, typed_problem = read_typed_json(text, storable=True)
        if typed_problem is not None:
            return None, {FALLBACK: [typed_problem.sentence()]}, []
    else:
        value, problem = read_approval(schema, post, decision=False)
        if problem:
            return None, problem.errors, problem.general
    found = violations(schema, value) if schema is not None else []
    if found:
        by_field, general = field_errors(schema, found)
        return None, by_field, general
    return value, {}, []


# --- A run's input as a form: Start run and the Test panel -------------------------------


@dataclass(frozen=True, slots=True)
class InputForm:
    """A run's input as a form, generated like a sample's from the entry nodes' input schema
    (``form``; ``None`` when the schema makes no fields: JSON only), with the JSON text beside
    it; ``prefix`` keeps its fields' ids apart."""

    prefix: str
    schema_of: tuple[str, ...] | None
    form: ApprovalForm | None
    json_text: str = "null"


class InvalidInput(InvalidRequest):
    """An input form that cannot be read or does not fit the schema: the form again, with what
    was typed and the errors beside their fields."""

    def __init__(self, message: str, form: InputForm) -> None:
        super().__init__(message, "input")
        self.form = form


#: Posted by the button that starts a run with the JSON text rather than the fields.
FROM_JSON = "json"


def input_form(graph: Graph | None, *, prefix: str, json_text: str = "null") -> InputForm:
    """The input form of a run of ``graph`` (a frozen graph, or a draft's)."""
    schema, nodes = form_schema(graph)
    form = _form(schema, None, False) if schema is not None else None
    if form is not None and form.fields is None:
        form = None
    return InputForm(prefix, nodes if form is not None else None, form, json_text)


def read_input(graph: Graph | None, post: Mapping[str, str], *, prefix: str) -> Any:
    """The input the fields of :func:`input_form` mean, checked against the schema; raises
    :class:`InvalidInput` with the form again when it cannot be read or does not fit."""
    schema, _nodes = form_schema(graph)
    base = input_form(graph, prefix=prefix, json_text=str(post.get("input", "null")))
    if base.form is None:
        raise InvalidRequest("this graph's input has no fields: give it as JSON", "input")
    value, errors, general = _read(schema, post)
    if errors or general:
        shown = with_errors(with_post(base.form, schema, post), errors, general)
        raise InvalidInput("the input has errors", replace(base, form=shown))
    return value


def read_draft_input(slug: str, post: Mapping[str, str], *, prefix: str) -> Any:
    """:func:`read_input` for a test run of the document's draft."""
    return read_input(parsed_draft(document_row(slug)), post, prefix=prefix)


def sample_input(user: ActingUser, slug: str, name: str) -> Any:
    """The input of the sample named ``name`` (:class:`InvalidRequest` when there is none)."""
    for sample in list_samples(user, slug).samples:
        if sample.name == name:
            return sample.input
    raise InvalidRequest(f"there is no sample named `{name}`", "sample")


def delete_sample(user: Any, slug: str, name: str) -> SampleSet:
    """Remove the sample named ``name`` (nothing when there is none)."""
    require_author(user)
    kept = [s for s in list_samples(user, slug).samples if s.name != name]
    return put_samples(user, slug, [{"name": s.name, "input": s.input} for s in kept])
