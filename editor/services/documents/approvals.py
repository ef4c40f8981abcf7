"""A document's approval policy (``docs/inbox.md``, *Approval policies*): per gate of its
draft, who may decide and how, read and written by the **Approvals** page and
``GET/PUT /v1/documents/{slug}/approvals``.

The policy names gates by id. A gate the document leaves out keeps the defaults (the approvers
role, one approval, no due time; four eyes as the document was created with:
``Document.four_eyes_default``). A gate the policy names that the draft no longer has
(renamed, removed) keeps its policy, flagged (:attr:`GateEntry.in_draft`), until it is put
back or removed by hand: never silently dropped. Saving checks everything first (the shape,
the groups and users named, a value to resolve with against the gate's approval schema) and
writes nothing on a refusal (:class:`InvalidPolicy`, every problem naming its gate and field).

Runs record the policy in force when they start
(:func:`editor.services.documents.run_policies.bound_policy`, read by ``runs.start_run``);
editing changes future runs only, and :attr:`GateEntry.keeping_old` says
how many waiting cards keep another policy. *Authors* and *operators* edit a policy; anyone
signed in reads it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import transaction

from editor.engine.approvals import (
    GatePolicy,
    Problem,
    default_gate,
    gate_nodes,
    read_gate,
)
from editor.graph import Graph
from editor.graph.model import GateNode
from editor.models import Document
from editor.models import GatePolicy as GatePolicyRow
from editor.services.access import can_author, can_operate
from editor.services.documents.rows import author_of, document_row
from editor.services.documents.run_policies import (
    draft_gates,
    keeping_old,
    policy_of,
    row_values,
    rows_of,
)
from editor.services.errors import InvalidPolicy, NotAllowed

__all__ = [
    "DocumentPolicy",
    "GateEntry",
    "may_edit",
    "policy_json",
    "read_policy",
    "remove_gate",
    "replace_policy",
    "save_gate",
    "stale_gates",
]

#: At most this many problems are reported for one save.
_MAX_PROBLEMS = 100


def may_edit(user: Any) -> bool:
    """Authors and operators edit a document's approval policy."""
    return can_author(user) or can_operate(user)


@dataclass(frozen=True, slots=True)
class GateEntry:
    """One gate as the Approvals page and the API show it."""

    gate: str
    policy: GatePolicy
    #: The document names this gate (else it keeps the defaults).
    stored: bool
    #: The draft has a gate with this id (else it was renamed or removed: flagged).
    in_draft: bool
    name: str | None = None
    #: The gate's approval schema in the draft (``None`` for a gate the draft lacks).
    schema: Any = None
    #: Waiting cards of this gate that keep the policy their run started with, another one.
    keeping_old: int = 0
    #: Names the policy gives that no group or user has (any more).
    missing_groups: tuple[str, ...] = ()
    missing_users: tuple[str, ...] = ()
    updated_by: str | None = None
    updated_at: datetime | None = None

    @property
    def display_name(self) -> str:
        return self.name or self.gate

    @property
    def dom_id(self) -> str:
        """The id of the gate's section on the page (a node id may hold any character)."""
        return "gate-" + hashlib.sha256(self.gate.encode("utf-8", "surrogatepass")).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class DocumentPolicy:
    """A document's whole policy: every gate of its draft, then every gate it names that the
    draft no longer has."""

    slug: str
    title: str
    four_eyes_default: bool
    entries: tuple[GateEntry, ...]
    #: The draft parses (else its gates cannot be listed; only the named ones are shown).
    draft_parses: bool
    can_edit: bool = False
    groups: tuple[str, ...] = field(default_factory=tuple)
    users: tuple[str, ...] = field(default_factory=tuple)

    @property
    def stale(self) -> tuple[GateEntry, ...]:
        return tuple(entry for entry in self.entries if not entry.in_draft)

    def entry(self, gate: str) -> GateEntry | None:
        return next((entry for entry in self.entries if entry.gate == gate), None)


# --- Rows -----------------------------------------------------------------------------------


def _names_in(policy: GatePolicy) -> tuple[set[str], set[str]]:
    groups, users = set(policy.groups), set(policy.users)
    if policy.on_expiry is not None:
        groups.update(policy.on_expiry.groups)
        users.update(policy.on_expiry.users)
    return groups, users


def _existing(groups: Iterable[str], users: Iterable[str]) -> tuple[set[str], set[str]]:
    """Which of these names a group or a user has: one query each."""
    wanted_groups, wanted_users = set(groups), set(users)
    found_groups = set(
        Group.objects.filter(name__in=wanted_groups).values_list("name", flat=True)
        if wanted_groups
        else ()
    )
    found_users = set(
        User.objects.filter(username__in=wanted_users).values_list("username", flat=True)
        if wanted_users
        else ()
    )
    return found_groups, found_users


# --- Reading --------------------------------------------------------------------------------


def _entries(document: Document) -> tuple[tuple[GateEntry, ...], bool]:
    gates = draft_gates(document)
    rows = rows_of(document)
    default = default_gate(four_eyes=document.four_eyes_default)
    ordered: list[tuple[str, GateNode | None]] = [
        (gate, node) for gate, node in (gates or {}).items()
    ]
    ordered += [(gate, None) for gate in sorted(rows) if gate not in (gates or {})]
    current = {gate: policy_of(rows[gate]) if gate in rows else default for gate, _ in ordered}
    names_groups: set[str] = set()
    names_users: set[str] = set()
    for policy in current.values():
        found_groups, found_users = _names_in(policy)
        names_groups |= found_groups
        names_users |= found_users
    known_groups, known_users = _existing(names_groups, names_users)
    keeping = keeping_old(document, current)
    entries = []
    for gate, node in ordered:
        policy = current[gate]
        groups, users = _names_in(policy)
        row = rows.get(gate)
        entries.append(
            GateEntry(
                gate=gate,
                policy=policy,
                stored=row is not None,
                in_draft=node is not None,
                name=node.name if node is not None else None,
                schema=node.approval_schema if node is not None else None,
                keeping_old=keeping.get(gate, 0),
                missing_groups=tuple(sorted(groups - known_groups)),
                missing_users=tuple(sorted(users - known_users)),
                updated_by=row.updated_by.get_username() if row and row.updated_by else None,
                updated_at=row.updated_at if row is not None else None,
            )
        )
    return tuple(entries), gates is not None


def read_policy(user: Any, slug: str) -> DocumentPolicy:
    """The document's policy as its Approvals page shows it (``UnknownDocument``)."""
    document = document_row(slug)
    entries, parses = _entries(document)
    editable = may_edit(user)
    return DocumentPolicy(
        slug=document.slug,
        title=document.title,
        four_eyes_default=document.four_eyes_default,
        entries=entries,
        draft_parses=parses,
        can_edit=editable,
        groups=tuple(Group.objects.order_by("name").values_list("name", flat=True))
        if editable
        else (),
        users=tuple(
            User.objects.filter(is_active=True)
            .order_by("username")
            .values_list("username", flat=True)[:1000]
        )
        if editable
        else (),
    )


def _warnings(entries: Iterable[GateEntry], parses: bool) -> list[dict[str, str]]:
    warnings = []
    if not parses:
        warnings.append(
            {
                "code": "draft_unreadable",
                "message": "the draft does not parse: only the gates the policy names are listed",
            }
        )
    for entry in entries:
        if not entry.in_draft:
            warnings.append(
                {
                    "gate": entry.gate,
                    "code": "gate_not_in_draft",
                    "message": f"the draft has no gate `{entry.gate}` (renamed or removed): its "
                    "policy is kept for the versions that have it, until it is left out",
                }
            )
        for name in entry.missing_groups:
            warnings.append(
                {
                    "gate": entry.gate,
                    "code": "unknown_group",
                    "message": f"no group is named `{name}`",
                }
            )
        for name in entry.missing_users:
            warnings.append(
                {
                    "gate": entry.gate,
                    "code": "unknown_user",
                    "message": f"no user is named `{name}`",
                }
            )
    return warnings


def _answer(document: Document) -> dict[str, Any]:
    entries, parses = _entries(document)
    answer: dict[str, Any] = {"gates": {entry.gate: entry.policy.as_json() for entry in entries}}
    warnings = _warnings(entries, parses)
    if warnings:
        answer["warnings"] = warnings
    return answer


def policy_json(slug: str) -> dict[str, Any]:
    """``GET /v1/documents/{slug}/approvals``: ``{"gates": {id: policy}, "warnings"?}``, every
    gate of the draft (defaults for those left out) and every gate named that it lacks."""
    return _answer(document_row(slug))


# --- Writing --------------------------------------------------------------------------------


def _checked(
    document: Document,
    gate: str,
    body: Any,
    rows: Mapping[str, GatePolicyRow],
    gates: Mapping[str, GateNode] | None,
) -> tuple[GatePolicy | None, list[Problem]]:
    """One gate of a save: read strictly against the defaults (a field left out keeps the
    default), with its value to resolve with checked against the draft's schema."""
    if not isinstance(body, Mapping):
        return None, [Problem(gate, "", "must be an object of the gate's policy")]
    node = (gates or {}).get(gate)
    if node is None:
        row = rows.get(gate)
        if row is None:
            return None, [Problem(gate, "", f"the draft has no gate `{gate}`")]
        # A gate the draft no longer has: its policy may be kept as it is, not changed (its
        # schema, against which a value to resolve with is checked, is gone with it).
        kept = policy_of(row)
        found, problems = read_gate(gate, body, kept)
        if problems or found != kept:
            message = (
                f"the draft no longer has the gate `{gate}`: its policy can be kept as it is, or "
                "left out to remove it, not changed"
            )
            return None, [Problem(gate, "", message)]
        return kept, []
    base = default_gate(four_eyes=document.four_eyes_default)
    return read_gate(gate, body, base, schema=node.approval_schema, check_value=True)


def _check_names(policies: Mapping[str, GatePolicy], kept: set[str]) -> list[Problem]:
    wanted_groups: set[str] = set()
    wanted_users: set[str] = set()
    for gate, policy in policies.items():
        if gate not in kept:
            groups, users = _names_in(policy)
            wanted_groups |= groups
            wanted_users |= users
    known_groups, known_users = _existing(wanted_groups, wanted_users)
    problems = []
    for gate, policy in policies.items():
        if gate in kept:
            continue
        places = [("deciders", policy.groups, policy.users)]
        if policy.on_expiry is not None and policy.on_expiry.action == "escalate":
            places.append(
                ("on_expiry.escalate_to", policy.on_expiry.groups, policy.on_expiry.users)
            )
        for where, group_names, user_names in places:
            for name in group_names:
                if name not in known_groups:
                    problems.append(Problem(gate, f"{where}.groups", f"no group is named `{name}`"))
            for name in user_names:
                if name not in known_users:
                    problems.append(Problem(gate, f"{where}.users", f"no user is named `{name}`"))
    return problems


def _locked(user: Any, slug: str) -> Document:
    if not may_edit(user):
        raise NotAllowed()
    document = document_row(slug)
    # One save of a document's policy at a time: the row lock orders them.
    return (
        Document.objects.select_for_update(of=("self",)).select_related("draft").get(pk=document.pk)
    )


def _write(
    user: Any, document: Document, policies: Mapping[str, GatePolicy], *, replace_all: bool
) -> None:
    rows = rows_of(document)
    default = default_gate(four_eyes=document.four_eyes_default)
    stored = {gate for gate, policy in policies.items() if policy != default}
    removed = set(policies) - stored
    if replace_all:
        removed |= set(rows) - set(policies)
    GatePolicyRow.objects.filter(document=document, gate__in=removed).delete()
    for gate in stored:
        values = row_values(policies[gate])
        row = rows.get(gate)
        if row is not None and policy_of(row) == policies[gate]:
            continue
        GatePolicyRow.objects.update_or_create(
            document=document,
            gate=gate,
            defaults={**values, "updated_by": author_of(user)},
        )


def _refuse_on(problems: list[Problem]) -> None:
    if problems:
        raise InvalidPolicy([problem.as_json() for problem in problems[:_MAX_PROBLEMS]])


def replace_policy(user: Any, slug: str, body: Any) -> dict[str, Any]:
    """``PUT /v1/documents/{slug}/approvals``: the whole policy. A gate left out goes back to
    the defaults (a named gate the draft lacks is removed); ``warnings`` in the body (what a
    ``GET`` answered) is ignored. Nothing is written unless every gate is right."""
    if not isinstance(body, Mapping) or not isinstance(body.get("gates"), Mapping):
        raise InvalidPolicy([{"gate": "", "field": "gates", "message": 'give {"gates": {…}}'}])
    extra = sorted(str(key) for key in body if key not in ("gates", "warnings"))
    if extra:
        message = "is not a field of a policy (it takes `gates`)"
        raise InvalidPolicy([{"gate": "", "field": extra[0], "message": message}])
    with transaction.atomic():
        document = _locked(user, slug)
        rows = rows_of(document)
        gates = draft_gates(document)
        policies: dict[str, GatePolicy] = {}
        problems: list[Problem] = []
        for gate, entry in body["gates"].items():
            found, trouble = _checked(document, str(gate), entry, rows, gates)
            problems += trouble
            if found is not None:
                policies[str(gate)] = found
        kept = {gate for gate in policies if gate not in (gates or {})}
        problems += _check_names(policies, kept)
        _refuse_on(problems)
        _write(user, document, policies, replace_all=True)
        return _answer(document)


def save_gate(user: Any, slug: str, gate: str, body: Mapping[str, Any]) -> DocumentPolicy:
    """The Approvals page's form of one gate of the draft: its whole policy (a field left out
    keeps the default). :class:`InvalidPolicy` when anything is wrong, nothing written."""
    with transaction.atomic():
        document = _locked(user, slug)
        rows = rows_of(document)
        gates = draft_gates(document)
        if gate not in (gates or {}):
            _refuse_on([Problem(gate, "", f"the draft has no gate `{gate}`")])
        found, problems = _checked(document, gate, body, rows, gates)
        if found is not None:
            problems += _check_names({gate: found}, set())
        _refuse_on(problems)
        assert found is not None
        _write(user, document, {gate: found}, replace_all=False)
    return read_policy(user, slug)


def remove_gate(user: Any, slug: str, gate: str) -> DocumentPolicy:
    """Forget what the policy says of ``gate``: a gate of the draft goes back to the
    defaults; a gate the draft lacks is no longer listed."""
    with transaction.atomic():
        document = _locked(user, slug)
        GatePolicyRow.objects.filter(document=document, gate=gate).delete()
    return read_policy(user, slug)


def stale_gates(slug: str, graph: Graph) -> list[str]:
    """The gates the document's policy names that ``graph`` (its draft) lacks: the editor's
    warning. One query."""
    named = GatePolicyRow.objects.filter(
        document__slug=slug, document__deleted_at__isnull=True
    ).values_list("gate", flat=True)
    present = gate_nodes(graph)
    return sorted(gate for gate in named if gate not in present)
