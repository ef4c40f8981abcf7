"""Deciding several cards at once (``docs/inbox.md``, *Several cards at once*).

Cards of one gate and one approval schema are decided with one answer: the person fills the
form once, and each card is then decided on its own, exactly as if its own form had been
posted: checked against its own run's policy, validated against its own schema, recorded
(exactly once) and logged as that person's decision. One card refused or invalid leaves the
others decided; the outcome lists each, and why a card was not decided.

The fields that every selected card pre-fills from its own run (the draft a gate shows, say)
are not part of the one form: each card keeps what arrived at it. The API does the same with
the keys its ``input`` leaves out.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.utils import timezone

from editor.engine.states import PARKED
from editor.engine.status import scope_key
from editor.graph import hash_value
from editor.models import Run
from editor.presentation import approval_forms
from editor.presentation.approval_forms import ApprovalForm
from editor.services.access import ActingUser, can_resolve
from editor.services.errors import (
    InvalidRequest,
    MixedCards,
    NotAllowed,
    NotSuspended,
    ServiceError,
)
from editor.services.inbox import log as inbox_log
from editor.services.inbox.items import InboxItem
from editor.services.inbox.pending import items_of
from editor.services.runs import resolutions
from editor.services.runs.approvals import decider

__all__ = [
    "MAX_CARDS",
    "BulkOutcome",
    "BulkResult",
    "CardKey",
    "Selection",
    "card_key",
    "decide",
    "decide_form",
    "read_keys",
    "select",
]

#: The most cards one request decides.
MAX_CARDS = 50
_PARKED = frozenset(state.value for state in PARKED)


@dataclass(frozen=True, slots=True)
class CardKey:
    """A card a request names: its run, and its item by ``seq`` (the page's), by ``node`` and
    ``scope`` (the API's), or the run's oldest open item."""

    run: str
    seq: int | None = None
    node: str | None = None
    scope: Any = None

    @property
    def text(self) -> str:
        """``run:seq`` as the page's checkboxes post it."""
        return f"{self.run}:{self.seq}" if self.seq is not None else self.run


def card_key(run: str, node: str | None, scope: Any, field_name: str = "run") -> CardKey:
    """A card the API names by its run and its item's node and scope. Raises
    :class:`InvalidRequest` naming ``field_name`` when ``run`` is not a run id."""
    try:
        return CardKey(str(uuid.UUID(str(run))), None, node, scope)
    except ValueError:
        raise InvalidRequest(f"`{field_name}` must be a run id", field_name) from None


def read_keys(values: Sequence[str]) -> list[CardKey]:
    """The page's posted ``card`` values (``<run id>:<seq>``). Raises
    :class:`InvalidRequest` naming ``card`` for anything else."""
    keys = []
    for value in values:
        run, _, seq = str(value).partition(":")
        expected = InvalidRequest(f"`card` must be <run id>:<seq>, not {value[:80]!r}", "card")
        if not seq.isascii() or not seq.isdigit() or len(seq) > 10:
            raise expected
        try:
            keys.append(CardKey(str(uuid.UUID(run)), int(seq)))
        except ValueError:
            raise expected from None
    return keys


@dataclass(frozen=True, slots=True)
class Selection:
    """The cards a request names, as found: the open gates (``items``), the keys that name
    nothing open (``missing``), and the one form that decides them all."""

    items: list[InboxItem]
    missing: list[CardKey]
    runs: dict[str, Run]
    schema: Any = None
    #: The keys each card keeps from its own run, left out of the form.
    per_card: tuple[str, ...] = ()
    form: ApprovalForm | None = None

    @property
    def node(self) -> str | None:
        return self.items[0].node if self.items else None

    @property
    def name(self) -> str:
        return self.items[0].display_name if self.items else ""

    @property
    def reduced_schema(self) -> Any:
        return _without(self.schema, self.per_card)

    @property
    def keys_text(self) -> list[str]:
        return [f"{item.run}:{item.seq}" for item in self.items]


def _find(run: Run, key: CardKey) -> dict[str, Any] | None:
    pending = [
        raw
        for raw in (run.status or {}).get("pending") or []
        if raw.get("wait") != "signal" and raw.get("kind") == "gate"
    ]
    if key.seq is not None:
        return next((raw for raw in pending if int(raw.get("seq", -1)) == key.seq), None)
    if key.node is not None:
        wanted = scope_key(key.scope)
        return next(
            (
                raw
                for raw in pending
                if raw.get("node") == key.node and scope_key(raw.get("scope")) == wanted
            ),
            None,
        )
    return pending[0] if pending else None


def _without(schema: Any, keys: Sequence[str]) -> Any:
    """``schema`` without the properties ``keys`` (nor their place in ``required``)."""
    if not keys or not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return schema
    reduced = dict(schema)
    reduced["properties"] = {
        key: sub for key, sub in schema["properties"].items() if key not in keys
    }
    if isinstance(schema.get("required"), list):
        reduced["required"] = [key for key in schema["required"] if key not in keys]
    return reduced


def _per_card(schema: Any, items: list[InboxItem]) -> tuple[str, ...]:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or approval_forms.approval_form(schema, None).is_fallback:
        return ()
    decision = approval_forms.decision_key(schema)
    kept = [
        key
        for key in properties
        if key != decision
        and all(isinstance(item.value, dict) and key in item.value for item in items)
    ]
    return tuple(sorted(kept))


def select(user: ActingUser, keys: Sequence[CardKey]) -> Selection:
    """The cards ``keys`` name, read in two or three queries. Raises :class:`NotAllowed` for
    someone who may decide no gate, :class:`InvalidRequest` for none or too many, and
    :class:`MixedCards` when the open ones are not of one gate and one schema."""
    if not can_resolve(user, "gate"):
        raise NotAllowed()
    if not keys:
        raise InvalidRequest("name at least one card to decide", "items")
    if len(keys) > MAX_CARDS:
        raise InvalidRequest(f"at most {MAX_CARDS} cards are decided at once", "items")
    runs = {
        str(run.pk): run
        for run in Run.objects.filter(
            pk__in={key.run for key in keys}, test_revision__isnull=True
        ).select_related("document")
    }
    pairs: list[tuple[Run, dict[str, Any]]] = []
    missing: list[CardKey] = []
    seen: set[tuple[str, Any]] = set()
    for key in keys:
        run = runs.get(key.run)
        raw = _find(run, key) if run is not None and run.state in _PARKED else None
        if run is None or raw is None:
            missing.append(key)
            continue
        if (key.run, raw.get("seq")) in seen:
            continue  # named twice: decided once
        seen.add((key.run, raw.get("seq")))
        pairs.append((run, raw))
    now = timezone.now()
    items = items_of(pairs, None, now)
    if not items:
        return Selection(items, missing, runs)
    first = items[0]
    schema_hash = hash_value(first.input_schema)
    odd = [
        {"run": item.run, "node": item.node, "seq": item.seq}
        for item in items
        if item.node != first.node or hash_value(item.input_schema) != schema_hash
    ]
    if odd:
        raise MixedCards(
            f"cards decided together must be of one gate and one approval schema, as the first "
            f"(`{first.node}`): {len(odd)} are not",
            odd,
        )
    per_card = _per_card(first.input_schema, items)
    form = approval_forms.approval_form(_without(first.input_schema, per_card), None)
    return Selection(items, missing, runs, first.input_schema, per_card, form)


@dataclass(frozen=True, slots=True)
class BulkResult:
    """One card's outcome: ``outcome`` (``driving``: decided, the run goes on; ``voted``: an
    approval counted toward its quorum), or the ``error`` that kept it undecided."""

    run: str
    node: str
    seq: int | None
    scope: Any = None
    name: str = ""
    outcome: str | None = None
    error: ServiceError | None = None

    @property
    def decided(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class BulkOutcome:
    results: list[BulkResult] = field(default_factory=list)

    @property
    def decided(self) -> int:
        return sum(1 for result in self.results if result.decided)

    @property
    def failed(self) -> list[BulkResult]:
        return [result for result in self.results if not result.decided]


def _input(item: InboxItem, given: Any, per_card: Sequence[str]) -> Any:
    if not isinstance(given, Mapping) or not isinstance(item.value, dict):
        return given
    kept = {key: item.value[key] for key in per_card if key in item.value and key not in given}
    return {**kept, **given}


def _missing(key: CardKey) -> BulkResult:
    found = inbox_log.resolution_of(key.run, key.node, key.scope)
    error = NotSuspended("resolved", found.by if found else None, found.at if found else None)
    return BulkResult(key.run, key.node or "", key.seq, key.scope, error=error)


def decide(
    user: ActingUser,
    selection: Selection,
    given: Any,
    comment: str | None = None,
) -> BulkOutcome:
    """Decide every card of ``selection`` with the answer ``given`` (each card keeping its own
    run's value for the keys ``given`` leaves out that every card pre-fills), each on its own:
    its policy, its schema, its record. ``comment``: the resolution's comment for each."""
    person = decider(user)
    results = [_missing(key) for key in selection.missing]
    for item in selection.items:
        base = BulkResult(item.run, item.node, item.seq, item.scope, item.display_name)
        refused = item.refusal(person)
        if refused is not None:
            results.append(_with(base, error=refused))
            continue
        body: dict[str, Any] = {
            "input": _input(item, given, selection.per_card),
            "node": item.node,
        }
        if item.scope:
            body["scope"] = item.scope
        if comment:
            body["comment"] = comment[:2000]
        try:
            outcome, _ = resolutions.resume_run(user, selection.runs[item.run], body)
        except ServiceError as error:
            results.append(_with(base, error=error))
        else:
            results.append(_with(base, outcome=outcome.outcome))
    return BulkOutcome(results)


def _with(base: BulkResult, **changes: Any) -> BulkResult:
    return replace(base, **changes)


def decide_form(
    user: ActingUser, selection: Selection, post: Mapping[str, str]
) -> tuple[ApprovalForm | None, BulkOutcome | None]:
    """Decide the cards of ``selection`` with the one form as posted: the outcome, or (nothing
    recorded) the form again with the problems that kept it from being read."""
    schema = selection.reduced_schema
    value, problem = approval_forms.read_approval(schema, post)
    if problem:
        form = approval_forms.with_post(selection.form or ApprovalForm(None), schema, post)
        return approval_forms.with_errors(form, problem.errors, problem.general), None
    comment = str(post.get(approval_forms.COMMENT, "")).strip()
    if selection.form is not None and selection.form.comment_key is not None:
        own = value.get(selection.form.comment_key) if isinstance(value, dict) else None
        comment = own.strip() if isinstance(own, str) else ""
    return selection.form, decide(user, selection, value, comment or None)
