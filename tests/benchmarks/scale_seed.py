"""The installation of a team after a year, for the scale benchmark (``scale.py``).

Written through the ORM in bulk, in one process, on whichever database Django is set up on:

* 10,000 documents whose drafts have 20 to 500 nodes (one in twenty does not validate), a third
  of them with 1 to 20 frozen versions;
* 100,000 runs of those versions, in every state, started by five people over a year, most of
  them labelled; about 1,000,000 events; 2,000 items waiting in the inbox (gates, budgets and
  lost writes); 50,000 decisions;
* one run with 5,000 events (a map over items) and 500 agent definitions.

The runs are not invented: one run of each kind is driven for real by the worker's own task
(or recorded through the services, as a person does), and its log is copied onto the others
with their own ids, times, graphs and labels. Every seeded graph holds the nodes those logs
name (``write → check → review → publish → notify``) followed by a chain of ``step-n`` nodes.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import connection, models
from django.utils import timezone

RNG_SEED = 15
CORE = ("write", "check", "review", "publish", "notify")
APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "note": {"type": "string"}},
    "required": ["approved"],
}
TEAMS = ("payments", "search", "growth", "support", "platform", "data", "mobile", "legal")
WORDS = (
    "release", "notes", "review", "invoice", "triage", "summary", "digest", "onboarding",
    "refund", "incident", "contract", "translation", "newsletter", "audit", "forecast",
    "pricing", "survey", "roadmap", "changelog", "report",
)  # fmt: skip
OPERATORS = tuple(f"operator-{n}" for n in range(1, 6))
PARKED = ("suspended", "budget_exceeded", "needs_reconciliation")
APPROVERS = tuple(f"approver-{n}" for n in range(1, 4))


@dataclass(frozen=True)
class Scale:
    """How much to seed; ``fraction`` shrinks every count (a quick trial of the script)."""

    fraction: float = 1.0
    documents: int = 10_000
    runs: int = 100_000
    pending: int = 2_000
    decisions: int = 50_000
    big_run_events: int = 5_000
    agents: int = 500

    def of(self, count: int) -> int:
        return max(1, round(count * self.fraction))

    def states(self) -> dict[str, int]:
        """Runs per state: the pending ones (gates, budgets, lost writes), the decisions (a
        completed run passed its gate once), the rest spread over the other states."""
        pending, decided = self.of(self.pending), self.of(self.decisions)
        rest = self.of(self.runs) - pending - decided
        budget = max(1, pending // 40)
        return {
            "completed": decided,
            "suspended": pending - 2 * budget,
            "budget_exceeded": budget,
            "needs_reconciliation": budget,
            "failed": rest * 28 // 100,
            "abandoned": rest * 28 // 100,
            "running": rest * 22 // 100,
            "queued": rest - 2 * (rest * 28 // 100) - rest * 22 // 100,
        }


@dataclass
class Seeded:
    """What the measurements need to find again."""

    documents: int = 0
    versions: int = 0
    runs: int = 0
    events: int = 0
    decisions: int = 0
    pending: int = 0
    seconds: float = 0.0
    #: A document with 20 versions, one of about 200 nodes (opened in the editor).
    many_versions: str = ""
    editor_document: str = ""
    #: A document and a graph with many runs, the run with 5,000 events.
    busy_document: str = ""
    busy_graph: str = ""
    big_run: str = ""
    search: str = ""
    steps: dict[str, float] = field(default_factory=dict)


@contextlib.contextmanager
def explicit_times(*fields: models.DateTimeField) -> Iterator[None]:
    """Let bulk_create keep the times it is given (no ``auto_now``/``auto_now_add``)."""
    saved = [(item, item.auto_now, item.auto_now_add) for item in fields]
    for item, _now, _add in saved:
        item.auto_now = item.auto_now_add = False
    try:
        yield
    finally:
        for item, now, add in saved:
            item.auto_now, item.auto_now_add = now, add


def core_nodes(prompt: str) -> list[dict[str, Any]]:
    gate = {"id": "review", "prompt": prompt, "approval_schema": APPROVAL_SCHEMA}
    return [
        {"kind": "tool", "payload": {"id": "write", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "check", "tool": "echo"}},
        {"kind": "gate", "payload": gate},
        {"kind": "tool", "payload": {"id": "publish", "tool": "echo"}},
        {"kind": "tool", "payload": {"id": "notify", "tool": "echo"}},
    ]


def graph_value(nodes: int, prompt: str = "Publish this?") -> dict[str, Any]:
    """``write → check → review (gate) → publish → notify → step-1 → … → step-k``."""
    ids = [*CORE, *(f"step-{n}" for n in range(1, nodes - len(CORE) + 1))]
    steps = [{"kind": "tool", "payload": {"id": node, "tool": "echo"}} for node in ids[5:]]
    edges = [{"from": a, "to": b} for a, b in itertools.pairwise(ids)]
    return {"schema_version": 1, "nodes": [*core_nodes(prompt), *steps], "edges": edges}


def _users() -> dict[str, User]:
    people: dict[str, User] = {}
    for name, group in (
        ("author", "authors"),
        *((name, "operators") for name in OPERATORS),
        *((name, "approvers") for name in APPROVERS),
    ):
        person = User.objects.create_user(name, password="benchmark-password-1")
        person.groups.add(Group.objects.get(name=group))
        people[name] = person
    return people


def _agents(count: int, author: User) -> None:
    from editor.graph import agent_def_hash, parse_agent_definition
    from editor.models import AgentDefinition

    rows = []
    for n in range(count):
        definition = {"model": "echo", "prompt": f"You are assistant number {n}."}
        parsed = parse_agent_definition(definition)
        rows.append(
            AgentDefinition(
                hash=agent_def_hash(parsed),
                name=f"agent-{n:04d}",
                definition=definition,
                created_by=author,
            )
        )
    AgentDefinition.objects.bulk_create(rows, batch_size=500)


@dataclass
class Lineage:
    document_id: int
    slug: str
    nodes: int
    graphs: list[str]


def _versions(document: str, size: int, count: int) -> Iterator[tuple[int, bytes, dict[str, Any]]]:
    """``count`` versions of a graph of ``size`` nodes: (number, canonical bytes, summary).

    The versions differ by their gate's prompt only, so the graph is parsed once and each
    version's canonical bytes are the first's with the prompt replaced; the first document's
    are checked against the parser's own."""
    from editor.graph import canonical_graph, graph_hash, parse_document, summarize

    if not count:
        return
    marker = f"Publish {document}? (v@@)"
    graph = parse_document(json.dumps(graph_value(size, marker)))
    canonical, summary = canonical_graph(graph), summarize(graph)
    for number in range(1, count + 1):
        prompt = f"Publish {document}? (v{number})"
        made = canonical.replace(marker.encode(), prompt.encode())
        if not _checked:
            again = parse_document(json.dumps(graph_value(size, prompt)))
            assert canonical_graph(again) == made and graph_hash(again).endswith(
                hashlib.sha256(made).hexdigest()
            )
            _checked.append(True)
        yield number, made, summary


_checked: list[bool] = []


def _documents(scale: Scale, people: dict[str, User], rng: random.Random) -> list[Lineage]:
    """The documents, drafts, frozen graphs and versions; the lineages that have versions."""
    from editor.graph.edits import format_draft
    from editor.models import Document, Draft, FrozenGraph, Version
    from editor.services.documents.drafts import verdict_of

    author = people["author"]
    now = timezone.now()
    count = scale.of(scale.documents)
    lineages: list[Lineage] = []
    batch = 500
    with explicit_times(
        Document._meta.get_field("created_at"),
        Document._meta.get_field("updated_at"),
        Draft._meta.get_field("updated_at"),
        FrozenGraph._meta.get_field("created_at"),
        Version._meta.get_field("frozen_at"),
    ):
        for start in range(0, count, batch):
            docs, drafts, graphs, versions = [], [], {}, []
            plans = []
            for n in range(start, min(count, start + batch)):
                size = rng.randint(20, 500)
                title = f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} {n:05d}"
                changed = now - timedelta(minutes=rng.randint(0, 365 * 24 * 60))
                slug = f"{title.lower().replace(' ', '-')}"
                docs.append(
                    Document(
                        slug=slug,
                        title=title,
                        created_at=changed - timedelta(days=1),
                        updated_at=changed,
                        created_by=author,
                    )
                )
                frozen = rng.randint(1, 20) if n % 3 == 0 else 0
                plans.append((slug, size, frozen, changed))
            Document.objects.bulk_create(docs)
            ids = dict(
                Document.objects.filter(slug__in=[p[0] for p in plans]).values_list("slug", "id")
            )
            for slug, size, frozen, changed in plans:
                hashes = []
                for number, canonical, summary in _versions(slug, size, frozen):
                    digest = "sha256:" + hashlib.sha256(canonical).hexdigest()
                    at = changed - timedelta(hours=frozen - number + 1)
                    graphs[digest] = FrozenGraph(
                        hash=digest,
                        canonical=canonical,
                        summary=summary,
                        created_at=at,
                        created_by=author,
                    )
                    versions.append(
                        Version(
                            document_id=ids[slug],
                            graph_id=digest,
                            number=number,
                            frozen_by=author,
                            frozen_at=at,
                        )
                    )
                    hashes.append(digest)
                value = graph_value(size, f"Publish {slug}? (v{frozen + 1})")
                if rng.random() < 0.05:  # an edit in progress: an edge to a node not there yet
                    value["edges"].append({"from": "notify", "to": "not-yet"})
                text = format_draft(value)
                verdict = verdict_of(text, ())  # stored with the text, as every save does
                drafts.append(
                    Draft(
                        document_id=ids[slug],
                        text=text,
                        valid=verdict.valid,
                        error_count=verdict.error_count,
                        size=verdict.size,
                        revision=frozen * 3 + 1,
                        updated_at=changed,
                        updated_by=author,
                    )
                )
                if hashes:
                    lineages.append(Lineage(ids[slug], slug, size, hashes))
            Draft.objects.bulk_create(drafts)
            FrozenGraph.objects.bulk_create(graphs.values(), batch_size=100)
            Version.objects.bulk_create(versions, batch_size=1000)
    return lineages


def seed(scale: Scale, log: Any = print) -> Seeded:
    from scale_runs import big_run, copied_runs, template_runs  # this folder

    from editor.models import Document, Draft, Run, RunEvent, Version

    rng = random.Random(RNG_SEED)
    seeded = Seeded()
    began = time.perf_counter()

    def step(name: str, since: float) -> float:
        now = time.perf_counter()
        seeded.steps[name] = now - since
        log(f"  seeded {name} in {now - since:.1f} s")
        return now

    people = _users()
    mark = time.perf_counter()
    _agents(scale.of(scale.agents), people["author"])
    mark = step("agents", mark)
    lineages = _documents(scale, people, rng)
    mark = step("documents, drafts and versions", mark)
    states = scale.states()
    templates = template_runs(people, states)
    events = copied_runs(people, lineages, templates, states, rng)
    mark = step("runs and events", mark)
    # The inbox lists cards, which the store writes with each append: as it would have.
    from editor.waiting import rebuild_cards

    parked = [
        str(pk) for pk in Run.objects.filter(parked_at__isnull=False).values_list("pk", flat=True)
    ]
    rebuild_cards(parked)
    mark = step("the parked runs' cards", mark)
    seeded.big_run = big_run(people, scale.of(scale.big_run_events))
    mark = step("the run with 5,000 events", mark)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # statistics, as a live database's autovacuum keeps
            cursor.execute("VACUUM ANALYZE")
    else:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    step("statistics", mark)
    seeded.seconds = time.perf_counter() - began
    seeded.documents = Document.objects.count()
    seeded.versions = Version.objects.count()
    seeded.runs = Run.objects.count()
    seeded.events = events + Run.objects.get(id=seeded.big_run).event_count
    seeded.decisions = RunEvent.objects.filter(kind="Resumed").count()
    seeded.pending = sum(states[state] for state in PARKED)
    many = max(lineages, key=lambda lineage: (len(lineage.graphs), lineage.nodes))
    seeded.many_versions = many.slug
    seeded.editor_document = min(
        Draft.objects.select_related("document").only("document__slug", "text")[:200],
        key=lambda draft: abs(draft.text.count('"kind"') - 200),
    ).document.slug
    busy = lineages[0]
    seeded.busy_document = busy.slug
    seeded.busy_graph = busy.graphs[-1]
    seeded.search = "invoice"
    return seeded
