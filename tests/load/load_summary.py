"""The load test's figures, as plain functions: percentiles, a process's memory growth, the
targets of issue 20's measurement and the tables they are printed in. No I/O."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

#: The targets of the long run (issue 20, *Measure*).
HEALTH_P99_MS = 200.0
MEMORY_GROWTH = 1.5
#: The memory a process holds in its first minute is its baseline; a shorter run takes the
#: first quarter of its measured phase instead (a 60 s run, its first 15 s).
BASELINE_SECONDS = 60.0


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of sorted samples (``nan`` when there are none)."""
    if not ordered:
        return float("nan")
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[int(rank) - 1]


@dataclass(frozen=True)
class Latency:
    count: int
    p50: float
    p95: float
    p99: float
    max: float


def latency(samples: Iterable[float]) -> Latency:
    ordered = sorted(samples)
    return Latency(
        len(ordered),
        percentile(ordered, 0.50),
        percentile(ordered, 0.95),
        percentile(ordered, 0.99),
        ordered[-1] if ordered else float("nan"),
    )


def baseline_window(duration: float) -> float:
    """Seconds from the start whose samples make a process's baseline."""
    return min(BASELINE_SECONDS, duration / 4)


@dataclass(frozen=True)
class Growth:
    baseline: float  # the median of the samples in the baseline window
    peak: float
    last: float

    @property
    def ratio(self) -> float:
        return self.peak / self.baseline if self.baseline > 0 else float("inf")


def growth(series: Sequence[tuple[float, float]], window: float) -> Growth | None:
    """``series``: (seconds since the start, bytes) of one process; ``None`` without samples.
    A process first seen after the window (a worker started afresh) takes its first sample."""
    if not series:
        return None
    early = [value for at, value in series if at < window] or [series[0][1]]
    return Growth(statistics.median(early), max(value for _, value in series), series[-1][1])


def is_server_error(outcome: str) -> bool:
    """Whether an answer counted as ``outcome`` (a status code, or a word) is a 5xx."""
    return outcome.isdigit() and 500 <= int(outcome) <= 599


def server_errors(counts: Mapping[str, Counter[str]]) -> int:
    return sum(n for answers in counts.values() for o, n in answers.items() if is_server_error(o))


@dataclass(frozen=True)
class Target:
    what: str
    goal: str
    measured: str
    met: bool


def health_target(samples_ms: Sequence[float], failed: int) -> Target:
    """``/healthz`` p99 within the target, and no sample failed (a timeout counts as one)."""
    found = latency(samples_ms)
    measured = (
        f"p50 {found.p50:.1f}, p95 {found.p95:.1f}, p99 {found.p99:.1f}, max {found.max:.1f} ms"
        f" ({found.count} samples, {failed} failed)"
    )
    met = found.count > 0 and found.p99 <= HEALTH_P99_MS and failed == 0
    return Target("/healthz every second", f"p99 <= {HEALTH_P99_MS:.0f} ms", measured, met)


def memory_targets(
    series: Mapping[str, Sequence[tuple[float, float]]], window: float
) -> list[Target]:
    targets = []
    for name in sorted(series):
        found = growth(series[name], window)
        if found is None:
            continue
        mib = 1024 * 1024
        targets.append(
            Target(
                f"RSS {name}",
                f"peak <= {MEMORY_GROWTH}x first minute",
                f"{found.baseline / mib:.0f} -> peak {found.peak / mib:.0f} MiB "
                f"({found.ratio:.2f}x), last {found.last / mib:.0f} MiB",
                found.ratio <= MEMORY_GROWTH,
            )
        )
    return targets


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Left-aligned columns, two spaces apart, indented by two."""
    rows = [list(map(str, row)) for row in rows]
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]
    lines = [list(headers), ["-" * width for width in widths], *rows]
    padded = (
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        for line in lines
    )
    return "\n".join("  " + line.rstrip() for line in padded)


def targets_table(targets: Sequence[Target]) -> str:
    return table(
        ["target", "goal", "measured", "verdict"],
        ([t.what, t.goal, t.measured, "met" if t.met else "MISSED"] for t in targets),
    )


def answers_table(counts: Mapping[str, Counter[str]]) -> str:
    """One row per attack (or stream kind): how many answers of each status or outcome."""

    def order(outcome: str) -> tuple[int, str]:
        return (0, outcome) if outcome.isdigit() else (1, outcome)

    rows = []
    for name in sorted(counts):
        answers = counts[name]
        shown = ", ".join(f"{o}: {answers[o]}" for o in sorted(answers, key=order))
        rows.append([name, str(sum(answers.values())), shown or "-"])
    return table(["attack", "answers", "by status or outcome"], rows)
