"""Schemas of the test-run operations (``editor.api.test_runs``): test runs of a draft, its
sample inputs and pinned outputs, and the comparison of two runs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Schema

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
