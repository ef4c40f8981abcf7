"""Benchmark of closed-world schemas (issue 11): a catastrophic pattern, and the cost of the
closed-world compile against jsonschema's own.

1. ``^(a+)+$`` checked against ``"a" * 30 + "!"`` through the engine's check (the path of a
   node schema, an accumulator or a resume input): RE2's time, cold (compiling the schema) and
   warm, against the 10 ms target; Python's ``re`` (what jsonschema uses) on shorter inputs,
   doubling with each character, and where that leads at 30.
2. Compiling a schema as validation does for each schema it has not seen (E6's meta-schema
   check, plus E10's closed-world reading now) against the meta-schema check alone (what it
   was), over schemas like the ones documents carry; target at most 1.2×.
3. For information: building the evaluator at run time (the reading, the registry, RE2
   patterns) against ``Draft202012Validator(schema)``, and checking a value (warm).

Run it with ``make bench``; figures go in docs/benchmarks.md.
"""

from __future__ import annotations

import gc
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from jsonschema import Draft202012Validator

from editor.engine.schemas import violations
from editor.graph.closed_schemas import (
    CompiledSchema,
    analyse,
    compile_schema,
    may_have_findings,
    meta_schema_problem,
)
from editor.graph.jsonio import canonical_json

CATASTROPHIC = "^(a+)+$"
TARGET_MS = 10.0
COMPILE_TARGET = 1.2

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]},
    {
        "type": "object",
        "properties": {
            "draft": {"type": "string", "maxLength": 20000, "title": "Draft"},
            "approved": {"type": "boolean", "title": "Approve"},
            "comment": {"type": "string"},
        },
        "required": ["draft", "approved"],
    },
    {
        "type": "object",
        "properties": {"choice": {"enum": ["a", "b", "c"]}, "n": {"type": "integer"}},
    },
    {
        "type": "object",
        "properties": {
            "email": {"type": "string", "pattern": "^[^@ ]+@[^@ ]+$"},
            "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z-]{1,32}$"}},
            "meta": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}},
        },
    },
    {
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                "required": ["city"],
            }
        },
        "type": "object",
        "properties": {"home": {"$ref": "#/$defs/address"}, "work": {"$ref": "#/$defs/address"}},
    },
]


def median_seconds(work: Callable[[], object], repeat: int, number: int = 1) -> float:
    times = []
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                work()
            times.append((time.perf_counter() - start) / number)
    finally:
        gc.enable()
    return statistics.median(times)


def catastrophic_pattern() -> None:
    text = "a" * 30 + "!"
    schema = {"type": "string", "pattern": CATASTROPHIC}
    start = time.perf_counter()
    found = violations(schema, text)
    cold = (time.perf_counter() - start) * 1000
    assert found and found[0]["path"] == "$", found
    warm = median_seconds(lambda: violations(schema, text), repeat=200) * 1000
    verdict = "within" if max(cold, warm) < TARGET_MS else "OVER"
    print(f"`{CATASTROPHIC}` against 'a' * 30 + '!', through the engine's check")
    print(f"  RE2, first check (compiles the schema): {cold:8.3f} ms")
    print(f"  RE2, median of 200 checks:              {warm:8.3f} ms  ({verdict} {TARGET_MS} ms)")
    print("  Python's re (jsonschema's engine), same pattern, shorter inputs:")
    last = 0.0
    last_n = 0
    for n in (16, 18, 20, 22):
        probe = "a" * n + "!"
        start = time.perf_counter()
        re.search(CATASTROPHIC, probe)
        last = time.perf_counter() - start
        last_n = n
        print(f"    {n} characters: {last * 1000:9.1f} ms")
    projected = last * 2 ** (30 - last_n)
    print(f"    30 characters, doubling per character: about {projected:,.0f} s")


def paired(
    today: Callable[[], object], closed: Callable[[], object], number: int, repeat: int = 40
) -> tuple[float, float, float]:
    """Median seconds of ``today`` and ``closed`` and the median of their per-round ratios,
    the two timed in turn in each round, so that a busy machine slows both alike."""
    befores, afters, ratios = [], [], []
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                today()
            before = (time.perf_counter() - start) / number
            start = time.perf_counter()
            for _ in range(number):
                closed()
            after = (time.perf_counter() - start) / number
            befores.append(before)
            afters.append(after)
            ratios.append(after / before)
    finally:
        gc.enable()
    return statistics.median(befores), statistics.median(afters), statistics.median(ratios)


def per_schema(
    label: str, today: Callable[[Any], object], closed: Callable[[Any], object], number: int
) -> float:
    """Time per schema of ``today`` and ``closed`` over every schema; the ratio."""
    before, after, ratio = paired(
        lambda: [today(s) for s in SCHEMAS], lambda: [closed(s) for s in SCHEMAS], number
    )
    before, after = before / len(SCHEMAS), after / len(SCHEMAS)
    print(f"  {label:<44} {before * 1e6:8.1f} µs {after * 1e6:8.1f} µs  {ratio:6.3f}x")
    return ratio


def today_validation(schema: Any) -> None:
    canonical_json(schema)  # the memo key
    Draft202012Validator.check_schema(schema)


def closed_validation(schema: Any) -> None:
    key = canonical_json(schema)
    assert meta_schema_problem(schema) is None
    assert not may_have_findings(key) or analyse(json.loads(key)) == ()


def today_evaluator(schema: Any) -> None:
    Draft202012Validator(json.loads(canonical_json(schema).decode()))


def closed_evaluator(schema: Any) -> None:
    key = canonical_json(schema)
    assert CompiledSchema(json.loads(key), read=may_have_findings(key)).problem is None


def compile_costs() -> None:
    print(f"compiling a schema the first time, per schema ({len(SCHEMAS)} kinds), medians")
    print(f"  {'':<44} {'today':>11} {'closed':>11}  ratio")
    ratio = per_schema(
        "at validation: E6 (+ E10 now)", today_validation, closed_validation, number=5
    )
    verdict = "within" if ratio <= COMPILE_TARGET else "OVER"
    print(f"  validation compile ratio {ratio:.3f}x ({verdict} {COMPILE_TARGET}x)")
    print("  run-time evaluator, once per schema and process:")
    for n, schema in enumerate(SCHEMAS):
        per_one(f"    schema {n + 1}", schema)
    value = {"email": "ada@example.org", "tags": ["math", "engines"], "meta": {"x-a": "b"}}
    stock = Draft202012Validator(SCHEMAS[3])
    closed = compile_schema(SCHEMAS[3])
    before, after, ratio = paired(
        lambda: list(stock.iter_errors(value)), lambda: closed.errors(value), number=200
    )
    print("checking a value against schema 4 (three patterns), warm")
    print(
        f"  jsonschema on re {before * 1e6:.1f} µs, closed world on RE2 {after * 1e6:.1f} µs,"
        f" {ratio:.2f}x"
    )


def per_one(label: str, schema: Any) -> None:
    before, after, ratio = paired(
        lambda: today_evaluator(schema), lambda: closed_evaluator(schema), number=100
    )
    read = "read" if may_have_findings(canonical_json(schema)) else "skipped"
    print(f"  {label:<30} ({read:>7}) {before * 1e6:8.1f} µs {after * 1e6:8.1f} µs  {ratio:6.2f}x")


if __name__ == "__main__":
    catastrophic_pattern()
    print()
    compile_costs()
