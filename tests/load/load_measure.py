"""Issue 20's measurement beside the load test's traffic: open streams, the attacker, and the
samplers of ``/healthz`` and of memory; at the end one table of targets and the answers each
attack and stream got. Started and stopped by ``run_load.py`` (``--streams``, ``--attack``)."""

from __future__ import annotations

import argparse
import random
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from load_attacks import Attacker, Identities
from load_samplers import HealthSampler, MemorySampler
from load_streams import StreamStats, Viewer, start_streams
from load_summary import (
    Target,
    answers_table,
    baseline_window,
    health_target,
    is_server_error,
    memory_targets,
    server_errors,
    targets_table,
)

#: An answer the traffic's tally recorded as an error, by its status (``"503 …"``).
SERVER_ERROR = re.compile(r"5\d\d ")


@dataclass
class RunCounts:
    started: int = 0
    completed: int = 0
    lost: int = 0  # started, and not held by the server
    stuck: int = 0  # held, and not ended within the drain time


@dataclass
class Measurement:
    args: argparse.Namespace
    port: int
    data: dict[str, Any]
    stop: threading.Event
    recent_run: Callable[[], str | None]
    pids: dict[str, Any]  # "gunicorn", "db_workers", "postgres"
    health: HealthSampler = field(init=False)
    memory: MemorySampler = field(init=False)
    streams: StreamStats | None = None
    stream_threads: list[threading.Thread] = field(default_factory=list)
    attacker: Attacker | None = None

    def start(self) -> None:
        self.health = HealthSampler(self.port, self.stop)
        self.memory = MemorySampler(
            self.stop, self.pids["gunicorn"], self.pids["db_workers"], self.pids["postgres"]
        )
        self.health.start()
        self.memory.start()
        if self.args.attack:
            self.attacker = Attacker(
                self.port,
                Identities.from_data(self.data["attacker"]),
                self.stop,
                rate=self.args.attack_rate,
                toml_depth=self.args.toml_depth,
                flood=self.args.flood,
            )
            self.attacker.start()
        if self.args.streams:
            viewers = [Viewer(v["session"], v["token"]) for v in self.data["viewers"]]
            self.streams, self.stream_threads = start_streams(
                self.port, viewers, self.args.streams, self.recent_run, self.stop
            )

    def join(self) -> None:
        """After ``stop``: every thread ends within its own bound."""
        for thread in self.stream_threads:
            thread.join(timeout=40)
        if self.attacker is not None:
            self.attacker.join()
        self.health.join()
        self.memory.join()

    def answers(self) -> dict[str, Counter[str]]:
        counts: dict[str, Counter[str]] = {}
        if self.attacker is not None:
            counts |= self.attacker.tally.counts
        if self.streams is not None:
            counts |= self.streams.opens
        return counts

    def report(
        self,
        duration: float,
        traffic_errors: list[Any],
        runs: RunCounts,
        logs: list[Path],
    ) -> bool:
        """Prints the summary; ``True`` when a target was missed."""
        answers = self.answers()
        traffic_5xx = sum(1 for s in traffic_errors if SERVER_ERROR.match(s.detail))
        health_5xx = sum(1 for _, what in self.health.failures if is_server_error(what))
        total_5xx = traffic_5xx + server_errors(answers) + health_5xx
        targets = [
            Target(
                "5xx answers",
                "0",
                f"{total_5xx} (traffic {traffic_5xx}, attacks and streams "
                f"{server_errors(answers)}, /healthz {health_5xx})",
                total_5xx == 0,
            ),
            health_target([ms for _, ms in self.health.samples], len(self.health.failures)),
            *memory_targets(self.memory.series, baseline_window(duration)),
            Target(
                "web workers that exited",
                "0",
                ", ".join(f"{name} at +{at:.0f} s" for name, at in self.memory.gone.items())
                or "none",
                not self.memory.gone,
            ),
            Target(
                "runs lost or stuck",
                "0",
                f"{runs.started} started, {runs.completed} completed, {runs.lost} lost, "
                f"{runs.stuck} stuck",
                runs.lost == 0 and runs.stuck == 0,
            ),
        ]
        if self.attacker is not None:
            token = self.attacker.who.author_token
            leaked = [
                log.name
                for log in logs
                if log.exists() and token in log.read_text("utf-8", "replace")
            ]
            targets.append(
                Target(
                    "a ?token= in a server log",
                    "none",
                    ", ".join(leaked) or "none",
                    not leaked,
                )
            )
        print()
        print(
            f"issue 20 measurement: {duration:.0f} s, {self.args.streams} streams, "
            f"attacker {'on' if self.attacker else 'off'}"
        )
        if self.attacker is not None:
            info = self.data["attacker"]
            print(
                f"  large run: {info['large_run_events']} events, "
                f"{info['large_run_bytes'] / 1e6:.1f} MB; TOML key depth {self.args.toml_depth}"
            )
        if self.streams is not None:
            print(
                f"  streams: at most {self.streams.most_open} open at once; frames received: "
                + ", ".join(f"{k} {v}" for k, v in sorted(self.streams.frames.items()))
            )
        slow = sorted(self.health.samples, key=lambda sample: sample[1], reverse=True)[:5]
        print(
            "  slowest /healthz: "
            + (", ".join(f"{ms:.0f} ms at +{at:.0f} s" for at, ms in slow) or "none")
        )
        if self.health.failures:
            failures = Counter(what for _, what in self.health.failures)
            print("  /healthz failures: " + ", ".join(f"{w}: {n}" for w, n in failures.items()))
        logged = logged_errors(logs)
        if logged:
            print("  server logs, errors by kind:")
            for line, count in logged.most_common(12):
                print(f"    {count:>5}  {line}")
        print(targets_table(targets))
        print()
        print(answers_table(answers))
        return not all(target.met for target in targets)


def recent_runs(runs: list[tuple[str, bool]], lock: threading.Lock) -> Callable[[], str | None]:
    """One of the 5 runs started last, most likely still going (``None`` before the first)."""
    chance = random.Random(20)

    def pick() -> str | None:
        with lock:
            latest = runs[-5:]
        return chance.choice(latest)[0] if latest else None

    return pick


def logged_errors(logs: list[Path]) -> Counter[str]:
    """The ERROR lines of the servers' logs, counted by message (the time and pid left out)."""
    found: Counter[str] = Counter()
    for log in logs:
        if not log.exists():
            continue
        for line in log.read_text("utf-8", "replace").splitlines():
            if " ERROR " in line:
                message = re.sub(r"^.* ERROR (\S+) \[\d+\] ", r"\1: ", line)
                found[re.sub(r"[0-9a-f-]{36}", "<id>", message)[:140]] += 1
    return found
