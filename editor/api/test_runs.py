"""``/v1/documents/{slug}/test-runs``, ``…/samples``, ``…/pins`` and
``/v1/runs/{a}/compare/{b}``: trying a draft before freezing it (issue 24)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Status

from editor.api.auth import AuthenticatedRequest
from editor.api.schemas import ErrorOut, RunOut
from editor.api.test_run_schemas import (
    ClearedOut,
    ComparisonOut,
    PinIn,
    PinListOut,
    PinOut,
    PinsIn,
    SampleListOut,
    SamplesIn,
    TestForkIn,
    TestForkPreviewOut,
    TestRunIn,
    TestRunListOut,
)
from editor.graph import MISSING
from editor.services import runs
from editor.services.documents import samples
from editor.services.errors import InvalidRequest
from editor.services.runs import compare as run_compare
from editor.services.runs import test_nodes, test_runs

router = Router(tags=["test runs"])

_ERRORS: dict[int, Any] = {400: ErrorOut, 403: ErrorOut, 404: ErrorOut}


@router.post(
    "/documents/{slug}/test-runs",
    response={201: RunOut, **_ERRORS, 409: ErrorOut, 413: ErrorOut},
    summary="Test the draft",
)
def start_test_run(request: AuthenticatedRequest, slug: str, payload: TestRunIn) -> Status[Any]:
    """Run the draft as it is now, on a worker, marked as a test run of its revision. `409
    draft_invalid` names every error of a draft that does not validate; `409
    writes_unconfirmed` lists the `write` tools it would call that `confirm_writes` does not
    name (pin the nodes that call them, or confirm them); `400 invalid_pin` names a pin its
    node's output schema refuses.

    With `node` (**Execute this node**), only that top-level node runs, with `input`, or when
    `input` is left out the input it received in the latest test run that reached it; either
    is checked against its `input_schema` (`400` naming the node). The run's `test` says
    `"node"`. `409 draft_invalid` names the errors of the node on its own (the rest of the
    draft may be unfinished)."""
    if payload.node is not None:
        if payload.pins is not None or payload.sample is not None:
            raise InvalidRequest("`pins` and `sample` do not apply to one node run alone", "node")
        given = payload.input if "input" in payload.model_fields_set else MISSING
        run = test_nodes.execute_node(
            request.auth, slug, payload.node, given, confirm_writes=payload.confirm_writes
        )
        return Status(201, run)
    run = test_runs.start_test_run(
        request.auth,
        slug,
        payload.input,
        pins=payload.pins,
        confirm_writes=payload.confirm_writes,
        sample=payload.sample,
    )
    return Status(201, run)


@router.post(
    "/documents/{slug}/test-runs/fork",
    response={200: TestForkPreviewOut, 201: RunOut, **_ERRORS, 409: ErrorOut, 413: ErrorOut},
    summary="Test the draft from a node",
)
def test_from_here(request: AuthenticatedRequest, slug: str, payload: TestForkIn) -> Status[Any]:
    """**Test from here**: fork a run of this document (`from_run`; by default its latest test
    run that entered `from_node`) at `from_node` onto the draft as it is now. The fork opens
    with the origin's events before the node's entry, replayed, not run again; the draft runs
    from the node on, as a test run of its current revision with the document's pins. With
    `dry_run`, `200` and what it would hold and run again. The reference's fork refusals hold
    (`400 invalid_fork_node`, `409 write_replay_hazard` with `details.writes` to acknowledge
    by `seq`, `409 origin_needs_reconciliation`, `409 wrong_state`), and a test run's (`409
    draft_invalid`, `409 writes_unconfirmed`). Authors, not only operators."""
    made = test_nodes.test_from_here(
        request.auth,
        slug,
        payload.from_node,
        from_run=payload.from_run,
        acknowledged=payload.acknowledge_writes or [],
        confirm_writes=payload.confirm_writes,
        dry_run=payload.dry_run,
    )
    if isinstance(made, dict):
        return Status(200, made)
    return Status(201, runs.get_run(made.run))


@router.get(
    "/documents/{slug}/test-runs",
    response={200: TestRunListOut, 404: ErrorOut},
    summary="Test runs",
)
def list_test_runs(request: HttpRequest, slug: str) -> dict[str, Any]:
    """The document's latest test runs, newest first."""
    return {"runs": test_runs.recent_test_runs(slug)}


@router.get(
    "/documents/{slug}/samples", response={200: SampleListOut, 404: ErrorOut}, summary="Samples"
)
def get_samples(request: AuthenticatedRequest, slug: str) -> samples.SampleSet:
    """The document's named sample inputs, and the one you last tested it with."""
    return samples.list_samples(request.auth, slug)


@router.put(
    "/documents/{slug}/samples", response={200: SampleListOut, **_ERRORS}, summary="Set samples"
)
def put_samples(request: AuthenticatedRequest, slug: str, payload: SamplesIn) -> Any:
    """Replace the document's sample inputs (`[{"name", "input"}]`, in order); each input is
    checked against the input schema of the draft's entry nodes."""
    return samples.put_samples(request.auth, slug, payload.samples)


@router.get("/documents/{slug}/pins", response={200: PinListOut, 404: ErrorOut}, summary="Pins")
def list_pins(request: HttpRequest, slug: str) -> dict[str, Any]:
    """The document's pinned outputs: its test runs use them instead of running those nodes."""
    return {"pins": test_runs.list_pins(slug)}


@router.put(
    "/documents/{slug}/pins",
    response={200: PinListOut, **_ERRORS, 409: ErrorOut},
    summary="Set every pin",
)
def put_pins(request: AuthenticatedRequest, slug: str, payload: PinsIn) -> dict[str, Any]:
    """The document's pins become exactly `pins` (`{node: output}`); `400 invalid_pin` names
    the first node whose output schema refuses its pin, and nothing changes."""
    return {"pins": test_runs.put_pins(request.auth, slug, payload.pins)}


@router.delete(
    "/documents/{slug}/pins", response={200: ClearedOut, **_ERRORS}, summary="Clear every pin"
)
def clear_pins(request: AuthenticatedRequest, slug: str) -> dict[str, Any]:
    return {"cleared": test_runs.clear_pins(request.auth, slug)}


@router.get(
    "/documents/{slug}/pins/{node}", response={200: PinOut, 404: ErrorOut}, summary="One pin"
)
def get_pin(request: HttpRequest, slug: str, node: str) -> Any:
    return test_runs.pin_of(slug, node)


@router.put(
    "/documents/{slug}/pins/{node}",
    response={200: PinOut, **_ERRORS, 409: ErrorOut},
    summary="Pin a node",
)
def pin_node(request: AuthenticatedRequest, slug: str, node: str, payload: PinIn) -> Any:
    """Pin `output`, or the output the node gave in `from_run` (a run of this document);
    `400 invalid_pin` names the node when its output schema refuses it."""
    return test_runs.pin_node(
        request.auth, slug, node, output=payload.output, from_run=payload.from_run
    )


@router.delete(
    "/documents/{slug}/pins/{node}", response={200: ClearedOut, **_ERRORS}, summary="Unpin a node"
)
def clear_pin(request: AuthenticatedRequest, slug: str, node: str) -> dict[str, Any]:
    return {"cleared": int(test_runs.clear_pin(request.auth, slug, node))}


@router.get(
    "/runs/{a}/compare/{b}",
    response={200: ComparisonOut, 400: ErrorOut, 404: ErrorOut},
    summary="Compare two runs",
)
def compare(request: HttpRequest, a: str, b: str) -> run_compare.Comparison:
    """Two runs of the same document side by side, node by node: each side's state, input and
    output, their JSON differences, durations and tokens. `400 not_comparable` for runs of
    different documents."""
    return run_compare.compare_runs(a, b)
