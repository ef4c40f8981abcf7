"""What the editor's **Test** panel shows: the sample inputs (the last used first picked), the
`write` tools a test run would call, the document's pins, and its latest test runs, newest
first, each with the nodes it gave an output for (to pin) and the gate it waits at, if any;
and the newest test run's marks for the canvas (:mod:`editor.services.runs.test_results`), with the
run the editor listens to while it moves."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from editor.graph.jsonio import pretty_json
from editor.models import RunEvent
from editor.services.access import ActingUser, can_author
from editor.services.documents.rows import document_row
from editor.services.documents.samples import (
    InputForm,
    Sample,
    SampleForms,
    input_form,
    list_samples,
    sample_forms,
)
from editor.services.errors import DraftInvalid
from editor.services.runs.rows import TERMINAL_STATES, RunInfo
from editor.services.runs.test_results import CanvasResults, canvas_results
from editor.services.runs.test_runs import (
    Pin,
    draft_graph,
    list_pins,
    recent_test_runs,
    stored_pins,
    write_tools,
)

__all__ = ["TestPanel", "TestRunRow", "test_panel"]


@dataclass(frozen=True, slots=True)
class TestRunRow:
    """A test run as the panel lists it."""

    __test__ = False

    run: RunInfo
    revision: int | None
    #: Top-level nodes with an output, in the order they gave it, and whether it was a pin.
    outputs: list[tuple[str, bool]]
    output_text: str | None
    error: str | None
    #: The gate it waits at (``{"node", "prompt"?}``), decided here by its author.
    gate: dict[str, Any] | None

    @property
    def at_rest(self) -> bool:
        return self.run.status.get("state") in TERMINAL_STATES or self.gate is not None


@dataclass(frozen=True, slots=True)
class TestPanel:
    __test__ = False

    slug: str
    can_test: bool
    draft_error: str | None
    samples: list[Sample]
    last: str | None
    #: The input the form starts with: the last used sample's, as JSON text.
    input_text: str
    writes: list[dict[str, Any]]
    pins: list[Pin]
    #: The draft's revision, which a result from another one is older than.
    revision: int = 0
    runs: list[TestRunRow] = field(default_factory=list)
    #: The newest test run drawn on the canvas.
    results: CanvasResults | None = None
    #: Each sample as a form generated from the entry node's input schema.
    sample_forms: SampleForms | None = None
    #: The typed input as a form of the same fields (``form`` ``None``: JSON only).
    input_form: InputForm | None = None

    @property
    def samples_text(self) -> str:
        return pretty_json([{"name": s.name, "input": s.input} for s in self.samples])

    @property
    def stream_run(self) -> str | None:
        """The run whose event stream the editor listens to: the newest test run, while it
        can still change (a run waiting for its author's decision too)."""
        if self.results is not None and self.results.live:
            return self.results.run.run
        return None

    @property
    def results_data(self) -> dict[str, Any] | None:
        return self.results.data(self.revision) if self.results is not None else None

    @property
    def results_older(self) -> bool:
        return self.results is not None and self.results.older_than(self.revision)


def test_panel(user: ActingUser, slug: str) -> TestPanel:
    document = document_row(slug)
    chosen = list_samples(user, slug)
    draft_error = None
    writes: list[dict[str, Any]] = []
    graph = None
    try:
        graph = draft_graph(document)
    except DraftInvalid as invalid:
        draft_error = str(invalid)
    else:
        writes = write_tools(graph, stored_pins(document, graph))
    picked = next((s for s in chosen.samples if s.name == chosen.last), None)
    if picked is None and chosen.samples:
        picked = chosen.samples[0]
    input_text = pretty_json(picked.input) if picked is not None else "null"
    return TestPanel(
        slug=document.slug,
        can_test=can_author(user),
        draft_error=draft_error,
        samples=chosen.samples,
        last=picked.name if picked is not None else None,
        input_text=input_text,
        writes=writes,
        pins=list_pins(slug),
        revision=document.draft.revision,
        runs=[_row(run) for run in recent_test_runs(slug)],
        results=canvas_results(slug),
        sample_forms=sample_forms(slug, chosen.samples),
        input_form=input_form(graph, prefix="test-input", json_text=input_text),
    )


test_panel.__test__ = False  # type: ignore[attr-defined]


def _row(run: RunInfo) -> TestRunRow:
    status = run.status
    outputs: list[tuple[str, bool]] = []
    for payload in RunEvent.objects.filter(run_id=run.run, kind="NodeExited").values_list(
        "payload", flat=True
    ):
        if isinstance(payload, dict) and not payload.get("scope"):
            outputs.append((str(payload.get("node")), bool(payload.get("pinned"))))
    gate = next((item for item in run.pending if item.get("kind") == "gate"), None)
    state = status.get("state")
    error = status.get("error") if state == "failed" else None
    return TestRunRow(
        run=run,
        revision=(run.test or {}).get("revision"),
        outputs=outputs,
        output_text=pretty_json(status.get("output")) if state == "completed" else None,
        error=error if isinstance(error, str) else (pretty_json(error) if error else None),
        gate={"node": gate.get("node"), "seq": gate.get("seq")} if gate else None,
    )
