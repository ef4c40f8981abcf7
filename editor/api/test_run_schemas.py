"""Schemas of the test-run operations (``editor.api.test_runs``): test runs of a draft, its
sample inputs and pinned outputs, and the comparison of two runs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Field, Schema

from editor.api.forks import MAX_ACKNOWLEDGED, ForkPreviewOut
from editor.api.schemas import RunOut

__all__ = [
    "ClearedOut",
    "ComparisonOut",
    "PinIn",
    "PinListOut",
    "PinOut",
    "PinsIn",
    "SampleListOut",
    "SamplesIn",
    "TestForkIn",
    "TestForkPreviewOut",
    "TestRunIn",
    "TestRunListOut",
]


class TestRunIn(Schema):
    __test__ = False  # not a pytest class

    #: Any JSON value; the draft's entry nodes receive it.
    input: Any = None
    #: ``{node: output}`` standing for the document's pins in this run (``{}``: none);
    #: absent: the document's pins.
    pins: dict[str, Any] | None = None
    #: The ``write`` tools this run may call for real, by name.
    confirm_writes: list[str] | None = None
    #: The sample input's name, remembered as the one this person last tested with.
    sample: str | None = None
    #: **Execute this node**: run only this top-level node of the draft, with ``input``, or
    #: when ``input`` is left out, the input it received in the latest test run that
    #: reached it. ``pins`` and ``sample`` do not apply.
    node: str | None = Field(None, min_length=1, max_length=1000)


class TestForkIn(Schema):
    __test__ = False

    #: The node to run the draft from: a top-level node the origin entered.
    from_node: str = Field(..., min_length=1, max_length=1000)
    #: A run of this document to fork; by default its latest test run that entered the node.
    from_run: str | None = None
    #: Only say what the fork would hold and run again; create nothing.
    dry_run: bool = False
    #: The ``seq`` of each recorded write the fork may run again.
    acknowledge_writes: list[int] | None = Field(None, max_length=MAX_ACKNOWLEDGED)
    #: The ``write`` tools the draft may call for real from the node on, by name.
    confirm_writes: list[str] | None = None


class TestForkPreviewOut(ForkPreviewOut):
    __test__ = False

    #: The graph the fork would run: the draft's, stored content-addressed when it starts.
    graph_hash: str
    #: The origin's graph.
    origin_graph_hash: str
    #: The draft revision the fork would test.
    revision: int
    #: The ``write`` tools the draft would call from the node on, not confirmed by name nor
    #: acknowledged through a recorded write (``{"tool", "nodes"}``).
    unconfirmed_tools: list[dict[str, Any]]


class TestRunListOut(Schema):
    __test__ = False

    runs: list[RunOut]


class SampleOut(Schema):
    name: str
    input: Any = None


class SamplesIn(Schema):
    samples: list[dict[str, Any]]


class SampleListOut(Schema):
    samples: list[SampleOut]
    #: The sample this person last tested the document with, if it is still kept.
    last: str | None = None


class PinOut(Schema):
    node: str
    output: Any = None
    from_run: str | None = None
    pinned_at: datetime


class PinIn(Schema):
    #: The output to pin; or give ``from_run``, a run of this document whose output is pinned.
    output: Any = None
    from_run: str | None = None


class PinsIn(Schema):
    pins: dict[str, Any]


class PinListOut(Schema):
    pins: list[PinOut]


class NodeSideOut(Schema):
    state: str
    input: Any = None
    output: Any = None
    duration_ms: int | None = None
    input_tokens: int
    output_tokens: int


class NodeComparisonOut(Schema):
    node: str
    a: NodeSideOut
    b: NodeSideOut
    same: bool
    input_diff: list[dict[str, Any]]
    output_diff: list[dict[str, Any]]


class ClearedOut(Schema):
    #: How many pins were cleared.
    cleared: int


class ComparisonOut(Schema):
    a: RunOut
    b: RunOut
    nodes: list[NodeComparisonOut]
