"""Persistence only: what Gatehouse stores, and the rules the database itself keeps.

Frozen graphs and versions are immutable: the app refuses to update or delete
them (``save`` of an existing row, ``delete``, and the queryset's bulk ``update``
and ``delete`` all raise :class:`ImmutableRecord`).
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from django.conf import settings
from django.db import models

from editor.graph.jsonio import ReferenceJsonDecoder

__all__ = [
    "AgentDefinition",
    "ApiToken",
    "CanvasCacheEntry",
    "Document",
    "DocumentAlias",
    "Draft",
    "DraftRevision",
    "FrozenGraph",
    "GatePolicy",
    "ImmutableRecord",
    "InboxCard",
    "InboxCardName",
    "InboxNote",
    "RateCounter",
    "Role",
    "Run",
    "RunEvent",
    "UserUsage",
    "Version",
]

HASH_LENGTH = len("sha256:") + 64
#: The events that record a person's decision (spec 04: ``Resumed``, ``BudgetRaised``,
#: ``Reconciled``), sorted: the decision log's partial index and its query spell them alike.
RESOLUTION_KINDS = ("BudgetRaised", "Reconciled", "Resumed")
#: The events of the decision log: the resolutions, the votes of gates that need several
#: approvals (``ApprovalVoted``) and the escalations of gates past their due time
#: (``GateEscalated``), sorted, as its partial index and its query spell them.
DECISION_KINDS = tuple(sorted((*RESOLUTION_KINDS, "ApprovalVoted", "GateEscalated")))


class ImmutableRecord(Exception):
    """Raised on an attempt to change or remove a frozen record."""


class ImmutableQuerySet(models.QuerySet):
    def update(self, **kwargs: Any) -> int:
        raise ImmutableRecord(f"{self.model.__name__} rows are never updated")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise ImmutableRecord(f"{self.model.__name__} rows are never deleted")


class ImmutableModel(models.Model):
    """A row that is written once and then only read."""

    objects = ImmutableQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ImmutableRecord(f"{type(self).__name__} rows are never updated")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ImmutableRecord(f"{type(self).__name__} rows are never deleted")


class Role(models.Model):
    """Holds the role permissions of spec 06; no table, only the permissions.

    The groups *authors*, *operators* and *approvers* are created with these
    permissions by a data migration. A superuser holds every permission.
    """

    class Meta:
        managed = False
        default_permissions = ()
        # Django's Meta convention (a list, as the migrations record it); django-stubs types it.
        permissions = [  # noqa: RUF012
            ("author", "Create and edit documents, freeze, import, post graphs and agents"),
            ("operate", "Start and abandon runs, raise budgets, reconcile writes"),
            ("approve", "Resolve gates"),
        ]

    def __str__(self) -> str:
        return "role permissions"


class Document(models.Model):
    """A named lineage that people edit: one draft and its frozen versions."""

    slug = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    #: Hidden from the graphs list until restored.
    archived_at = models.DateTimeField(null=True, blank=True)
    #: Set when a document with frozen versions is deleted: its draft and history are gone, the
    #: row stays (under a slug no person can type) because its versions are kept.
    deleted_at = models.DateTimeField(null=True, blank=True)
    #: Four eyes for the gates its approval policy leaves out: on for documents created since
    #: policies exist, off for those created before (migration 0021; docs/inbox.md).
    four_eyes_default = models.BooleanField(default=True)

    class Meta:
        ordering = ("-updated_at",)
        indexes: ClassVar[list[models.Index]] = [
            # The graphs list's order (and its cursor's range): a page reads its rows and stops.
            models.Index(fields=("-updated_at", "-id"), name="document_updated"),
        ]

    def __str__(self) -> str:
        return self.title


class DocumentAlias(models.Model):
    """A slug a document was renamed from: its pages and API paths lead to the new one."""

    slug = models.SlugField(max_length=64, unique=True)
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="aliases")
    #: Who renamed the document away from this slug: the alias counts against their quota.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"{self.slug} → {self.document.slug}"


class GatePolicy(models.Model):
    """Who may decide one gate of a document, and how (``editor.engine.approvals``): a gate
    the document names by id. A gate with no row keeps the defaults. Runs record the policy in
    force when they start, so editing a row changes future runs only."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="gate_policies")
    #: The gate's node id (a renamed or removed gate keeps its row, flagged, until removed).
    gate = models.CharField(max_length=200)
    #: Names of groups and users (``approvers`` stands for the role).
    decider_groups = models.JSONField(default=list, blank=True)
    decider_users = models.JSONField(default=list, blank=True)
    four_eyes = models.BooleanField(default=True)
    quorum = models.PositiveSmallIntegerField(default=1)
    #: Seconds, or ``None`` for no due time.
    due_seconds = models.PositiveIntegerField(null=True, blank=True)
    #: A percentage of the due time, or ``None``.
    remind_percent = models.PositiveSmallIntegerField(null=True, blank=True)
    #: ``""`` (nothing), ``escalate`` (to ``escalate_groups``/``escalate_users``) or
    #: ``resolve`` (with ``resolve_with``).
    on_expiry = models.CharField(max_length=16, blank=True, default="")
    escalate_groups = models.JSONField(default=list, blank=True)
    escalate_users = models.JSONField(default=list, blank=True)
    resolve_with = models.JSONField(null=True, blank=True, decoder=ReferenceJsonDecoder)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ("document", "gate")
        constraints: ClassVar[list[models.BaseConstraint]] = [
            models.UniqueConstraint(fields=("document", "gate"), name="one_policy_per_gate"),
            models.CheckConstraint(
                condition=models.Q(quorum__gte=1, quorum__lte=5), name="policy_quorum_1_to_5"
            ),
            models.CheckConstraint(
                condition=models.Q(on_expiry__in=("", "escalate", "resolve")),
                name="policy_expiry_action",
            ),
        ]

    def __str__(self) -> str:
        return f"policy of {self.gate!r} in document {self.document_id}"


class Draft(models.Model):
    """A document's mutable text: any text, even invalid JSON; never thrown away."""

    document = models.OneToOneField(Document, on_delete=models.CASCADE, related_name="draft")
    text = models.TextField(blank=True)
    #: Incremented by every save; writers send the revision they read (``If-Match``).
    revision = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    #: Fields the editor could not take (text that is not JSON, a refused value), kept with
    #: what was typed: ``[{"level", "node", "field", "text", "message"}]``. They count as
    #: errors and block freezing until fixed or discarded.
    held = models.JSONField(default=list, blank=True)
    #: The verdict of the text as saved (validation errors plus held fields), and its size.
    valid = models.BooleanField(default=False)
    error_count = models.PositiveIntegerField(default=0)
    size = models.PositiveIntegerField(default=0)
    #: The canvas's last full layout (editor.services.layout), reused while the structure stays.
    layout = models.JSONField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.document.slug} r{self.revision}"


class DraftRevision(models.Model):
    """One saved state of a draft: its text, who saved it and when, and what changed.

    ``number`` is the draft's revision after that save. Undo and redo walk the *edit states*:
    an edit or a restore is one (``base`` is its own number, ``parent`` the state it was made
    on); an undo or a redo is a new revision whose text is an earlier state's (``base``) and
    whose ``redo`` stack says what Redo brings back.
    """

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    text = models.TextField(blank=True)
    held = models.JSONField(default=list, blank=True)
    #: One line for people: "renamed `review` → `approve`".
    summary = models.CharField(max_length=300)
    #: ``edit``, ``undo``, ``redo`` or ``restore``.
    kind = models.CharField(max_length=16, default="edit")
    base = models.PositiveIntegerField()
    parent = models.PositiveIntegerField(null=True, blank=True)
    redo = models.JSONField(default=list, blank=True)
    #: What consecutive saves of one change share (a field typed into), to keep one revision.
    coalesce = models.CharField(max_length=300, blank=True)
    valid = models.BooleanField(default=False)
    error_count = models.PositiveIntegerField(default=0)
    size = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ("document", "-number")
        constraints: ClassVar[list[models.BaseConstraint]] = [
            models.UniqueConstraint(fields=("document", "number"), name="one_row_per_revision")
        ]
        indexes: ClassVar[list[models.Index]] = [
            # The revisions past GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS, a batch at a time.
            models.Index(fields=("created_at",), name="revision_created"),
        ]

    def __str__(self) -> str:
        return f"{self.document.slug} r{self.number}"


class FrozenGraph(ImmutableModel):
    """A graph stored by its hash, holding its canonical bytes."""

    hash = models.CharField(primary_key=True, max_length=HASH_LENGTH)
    canonical = models.BinaryField()
    #: The summary of spec 02 (counts, entry and terminal nodes), kept for listings.
    summary = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ("hash",)

    def __str__(self) -> str:
        return self.hash


class Version(ImmutableModel):
    """A graph frozen from a document's draft: (document, number, graph)."""

    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="versions")
    graph = models.ForeignKey(FrozenGraph, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    frozen_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    frozen_at = models.DateTimeField(auto_now_add=True)
    note = models.TextField(blank=True)
    #: The draft revision frozen (its ``DraftRevision`` is kept by every pruning); for versions
    #: frozen before this was recorded, the revision saved last before ``frozen_at``, if any.
    revision = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ("document", "-number")
        constraints: ClassVar[list[models.BaseConstraint]] = [
            models.UniqueConstraint(fields=("document", "number"), name="one_number_per_version")
        ]

    def __str__(self) -> str:
        return f"{self.document.slug} v{self.number}"


class AgentDefinition(models.Model):
    """An agent definition stored by ``agent_def_hash``; the name is kept apart from it."""

    hash = models.CharField(primary_key=True, max_length=HASH_LENGTH)
    name = models.CharField(max_length=64, blank=True)
    #: The definition without its name (what the hash is computed over).
    definition = models.JSONField()
    #: How it was first posted: ``json``, or ``toml`` (the reference's agent file, kept as
    #: ``source``).
    format = models.CharField(max_length=8, default="json")
    source = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ("name", "hash")

    def __str__(self) -> str:
        return self.name or self.hash


class ApiToken(models.Model):
    """A bearer token for the API: only its SHA-256 digest is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    #: The first characters of the token, shown so a person can tell tokens apart.
    prefix = models.CharField(max_length=12)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Run(models.Model):
    """One run of a frozen graph. Its history is its events; ``state`` and ``status`` are the
    fold of that log (``editor.engine.run_status``), written in the same transaction as each
    append so lists and the inbox can query them."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # The foreign keys' own indexes are the runs list's (Meta.indexes), which lead with them.
    graph = models.ForeignKey(
        FrozenGraph, on_delete=models.PROTECT, related_name="runs", db_index=False
    )
    #: The document the run was started from, when it was started from one (for the inbox).
    document = models.ForeignKey(
        Document,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="runs",
        db_index=False,
    )
    #: Values of the run read back under the reference's integer rule, as its events are.
    input = models.JSONField(null=True, blank=True, decoder=ReferenceJsonDecoder)
    #: Filtered by the runs list; on PostgreSQL through a GIN index (migration 0008).
    labels = models.JSONField(default=dict, blank=True)
    #: One of ``editor.engine.RunState``.
    state = models.CharField(max_length=32, default="queued")
    #: The status object of spec 05: ``{"state": …, …state fields}``.
    status = models.JSONField(default=dict, decoder=ReferenceJsonDecoder)
    event_count = models.PositiveIntegerField(default=0)
    #: When the run last parked (suspended, budget_exceeded, needs_reconciliation): the inbox
    #: orders by it. Cleared when it runs again.
    parked_at = models.DateTimeField(null=True, blank=True, db_index=True)
    #: A sleeping run's recorded ``wake_at`` (spec 08), derived from its log: the sweep wakes
    #: the runs whose time has come by it. ``None`` unless the run sleeps.
    wake_at = models.DateTimeField(null=True, blank=True, db_index=True)
    #: The worker driving the run, and until when its claim holds (spec 04, Durability).
    lease_owner = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    #: Drives begun since the run last parked or ended, or since a drive last let it go
    #: cleanly: each claim counts one, so a run whose drives keep crashing or being cut off
    #: fails after GATEHOUSE_RUN_MAX_ATTEMPTS of them (editor.tasks).
    drive_attempts = models.PositiveSmallIntegerField(default=0)
    #: Why the last of those drives stopped, when its worker could tell (a lost database);
    #: named in the run's failure when the attempts run out.
    drive_error = models.CharField(max_length=200, blank=True)
    #: The id of the last queue task handed out to drive the run (``editor.tasks``): the
    #: lease sweep asks the queue whether it still waits there before handing out another.
    queue_task = models.CharField(max_length=64, blank=True)
    #: Running totals of the log, kept by each append (``editor.engine.summary``) so that a
    #: list of runs reads them from the row: when its first and last events were recorded,
    #: how many model calls it asked for, and the tokens their completions reported.
    first_recorded_at = models.CharField(max_length=32, blank=True)
    last_recorded_at = models.CharField(max_length=32, blank=True)
    step_count = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)
    #: For a fork (spec 05), the run it was forked from and the ``forked_from`` its first
    #: event records, kept on the row so the origin's forks are one indexed query away.
    origin = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="forks",
        db_index=False,  # indexed by ``run_forks``, over the forks alone
    )
    forked_from = models.JSONField(null=True, blank=True)
    #: For a test run of a document's draft, the draft revision it ran (``document`` is the
    #: draft's document); ``None`` for every other run. Test runs stay out of the inbox and the
    #: default runs list (editor.services.runs.test_runs).
    test_revision = models.PositiveIntegerField(null=True, blank=True)
    #: A test run's pinned outputs, node id → output, copied from the document's pins when it
    #: started: the drive uses them instead of running those nodes. Never a frozen run's.
    test_pins = models.JSONField(default=dict, blank=True, decoder=ReferenceJsonDecoder)
    #: For a test run of one node alone (**Execute this node**), that node's id; empty for a
    #: test run of the whole draft and for every other run.
    test_node = models.TextField(blank=True, default="")
    #: For an agent run (``POST /v1/runs``), the hash of the agent its one-node graph runs;
    #: empty for every other run. A fork of an agent run is one of the same agent.
    agent = models.CharField(max_length=HASH_LENGTH, blank=True, default="")
    #: The approval policy in force when the run started, as its first event records it
    #: (``GraphRunStarted.approval_policy``), kept on the row so the inbox reads it with the
    #: run; ``None`` when none applies (the rule of spec 06 alone).
    approval_policy = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )

    class Meta:
        ordering = ("-created_at",)
        indexes: ClassVar[list[models.Index]] = [
            models.Index(fields=("state", "parked_at"), name="run_state_parked"),
            # The runs list, newest first, paged on (created_at, id): one index per filter,
            # each in the list's order, so a page reads its rows and stops
            # (editor.services.runs.filters; the label filter has a GIN index on PostgreSQL).
            models.Index(fields=("-created_at", "-id"), name="run_created"),
            models.Index(fields=("state", "-created_at", "-id"), name="run_state_created"),
            models.Index(fields=("graph", "-created_at", "-id"), name="run_graph_created"),
            models.Index(fields=("document", "-created_at", "-id"), name="run_document_created"),
            models.Index(fields=("created_by", "-created_at", "-id"), name="run_starter_created"),
            # The inbox: parked runs oldest first, their graphs, their count (parked_at is set
            # exactly while a run is parked).
            models.Index(
                fields=("parked_at", "id"),
                name="run_parked_order",
                condition=models.Q(parked_at__isnull=False),
            ),
            models.Index(
                fields=("graph", "parked_at"),
                name="run_parked_graph",
                condition=models.Q(parked_at__isnull=False),
            ),
            # A run's forks, oldest first (its page lists them). Over the forks alone: with
            # every run in a plain index under one key (NULL), SQLite's planner took a lookup
            # by origin for a scan of every run (127 ms at 100,000 runs).
            models.Index(
                fields=("origin", "created_at", "id"),
                name="run_forks",
                condition=models.Q(origin__isnull=False),
            ),
            # A document's test runs, newest first (the editor's panel, the Test runs filter).
            models.Index(
                fields=("document", "-created_at", "-id"),
                name="run_test_runs",
                condition=models.Q(test_revision__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.id} ({self.state})"


class RunEvent(models.Model):
    """One envelope of a run's log. ``(run, seq)`` is unique: the database itself refuses a
    second event at a position, which is what makes a resolution happen exactly once."""

    # Found by run through the unique (run, seq) index, which leads with it.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events", db_index=False)
    seq = models.PositiveIntegerField()
    schema_version = models.PositiveSmallIntegerField(default=1)
    recorded_at = models.CharField(max_length=32)
    kind = models.CharField(max_length=64, db_index=True)
    #: Read back under the reference's integer rule (``ReferenceJsonDecoder``).
    payload = models.JSONField(decoder=ReferenceJsonDecoder)

    class Meta:
        ordering = ("run", "seq")
        constraints: ClassVar[list[models.BaseConstraint]] = [
            models.UniqueConstraint(fields=("run", "seq"), name="one_event_per_seq")
        ]
        indexes: ClassVar[list[models.Index]] = [
            # The decision log, newest first: only the resolutions and votes, in id order. A
            # query uses it with this condition written as SQL (editor.services.inbox.log):
            # SQLite takes a partial index only for a condition of literals, never of bound
            # parameters.
            models.Index(
                fields=("-id",),
                name="event_decisions",
                condition=models.Q(kind__in=DECISION_KINDS),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.seq} {self.kind}"


class CallCommitment(models.Model):
    """A tool call's declared identity (``tool``, its idempotency key ``<tool>:<value>``), held
    by the one run that executes it; once that run recorded the call, ``output`` is what every
    other run's equal call records instead of running it (docs/registries.md, *MCP servers*).
    Not tied to the run by a foreign key: pruning a run keeps the fact that the call was made."""

    tool = models.CharField(max_length=200)
    key = models.TextField()
    run_id = models.CharField(max_length=64)
    input = models.JSONField(decoder=ReferenceJsonDecoder)
    settled = models.BooleanField(default=False)
    output = models.JSONField(decoder=ReferenceJsonDecoder, null=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints: ClassVar[list[models.BaseConstraint]] = [
            models.UniqueConstraint(fields=("tool", "key"), name="one_commitment_per_call")
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.run_id})"


class CanvasCacheEntry(models.Model):
    """The canvas cache's table: Django's database cache (``CACHES["canvas"]``) keeps rendered
    SVG in it, by the SHA-256 of the DOT source (``editor.rendering``). It is the table
    ``createcachetable`` would make, created by a migration like every other table so that
    ``migrate`` is the only step; only the cache backend reads and writes it."""

    cache_key = models.CharField(max_length=255, primary_key=True)
    value = models.TextField()
    expires = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "gatehouse_canvas_cache"

    def __str__(self) -> str:
        return self.cache_key


class UserUsage(models.Model):
    """One user's stored bytes, kept as a running total, and the limits set for them alone.

    ``stored_bytes`` is changed in the same transaction as every write that stores (a draft
    revision, an agent definition, a frozen graph) and every pruning that removes one, so the
    quota check is one conditional ``UPDATE`` of this row (``editor.services.quotas``).
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="usage"
    )
    stored_bytes = models.BigIntegerField(default=0)
    #: Limits that replace the installation's for this user: ``{"stored_bytes": 5000000}``
    #: (the names of ``editor.services.quotas.QUOTAS``).
    limits = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name = "usage"
        verbose_name_plural = "usage"

    def __str__(self) -> str:
        return f"usage of user {self.user_id}"


class RateCounter(models.Model):
    """A fixed-window counter (write requests a minute, runs started an hour), shared by every
    web process: one upsert adds one and reads the count back (``editor.services.quotas``)."""

    #: What is counted, for whom: ``writes:user:7``, ``writes:address:192.0.2.1``, ``runs:user:7``.
    key = models.CharField(max_length=200, primary_key=True)
    #: When the counted window began, in seconds since the epoch (a multiple of its length).
    window_start = models.BigIntegerField()
    count = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.key} @{self.window_start}: {self.count}"


class SampleInput(models.Model):
    """A named input of a document kept for test runs ("small refund"), edited in the editor's
    test panel and checked against the entry node's input schema when it has one."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="samples")
    name = models.CharField(max_length=100)
    input = models.JSONField(null=True, blank=True, decoder=ReferenceJsonDecoder)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ("document", "position", "id")
        constraints: ClassVar[list[models.BaseConstraint]] = [
            models.UniqueConstraint(fields=("document", "name"), name="sample_unique_name"),
        ]

    def __str__(self) -> str:
        return f"sample {self.name!r} of document {self.document_id}"


class LastSample(models.Model):
    """The sample input a person last tested a document with (picked first next time)."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=100)

    class Meta:
        constraints: ClassVar[list[models.BaseConstraint]] = [
            models.UniqueConstraint(fields=("document", "user"), name="last_sample_unique"),
        ]

    def __str__(self) -> str:
        return f"last sample {self.name!r} of document {self.document_id}"


class PinnedOutput(models.Model):
    """A node's output pinned for the document's test runs: they use it instead of running
    the node. Kept with the document, never in the graph (so never in its hash)."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="pins")
    node = models.CharField(max_length=200)
    output = models.JSONField(null=True, blank=True, decoder=ReferenceJsonDecoder)
    #: The test run the output was taken from, when it was pinned from a result.
    from_run = models.UUIDField(null=True, blank=True)
    pinned_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("document", "node")
        constraints: ClassVar[list[models.BaseConstraint]] = [
            models.UniqueConstraint(fields=("document", "node"), name="pin_unique_node"),
        ]

    def __str__(self) -> str:
        return f"pin of {self.node!r} in document {self.document_id}"


# The inbox's own rows live in a module of their own (this one is long enough); Django finds
# models by this module, so they are imported here, after the models they point at.
from editor.card_models import InboxCard, InboxCardName, InboxNote  # noqa: E402
