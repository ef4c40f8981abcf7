"""The inbox's cards: a pending item with the form that resolves it, and what becomes of the
card when someone submits it (spec 06, *Approval inbox*).

:func:`card` shows an item; :func:`resolve_card` reads a submitted card, records the
resolution through :func:`editor.services.runs.resume` (the one place that does) and answers
the card to show next: the **receipt** (who, when, the input), the same card with the errors
beside its fields (nothing recorded), or the note that someone else resolved it first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from editor.graph import JsonError, read_json
from editor.presentation import approval_forms
from editor.presentation.approval_forms import ApprovalForm
from editor.presentation.typed import decimal_number, read_typed_json
from editor.services import inbox, links
from editor.services.access import ActingUser, can_resolve, can_resolve_any
from editor.services.errors import (
    AlreadyVoted,
    FourEyes,
    InvalidRequest,
    InvalidResume,
    NotAllowed,
    NotAnApprover,
    NotSuspended,
    ServiceError,
)
from editor.services.inbox import InboxItem
from editor.services.inbox import log as inbox_log
from editor.services.inbox.log import Decision
from editor.services.numbers import INT64_MAX, InvalidNumber, strict_int
from editor.services.runs import approvals, resolutions
from editor.services.runs.approvals import Decider

__all__ = ["Card", "card", "card_of", "cards", "read_scope", "resolve_card"]

#: The reconciliation card's two buttons.
RECORD, RETRY = "record", "retry"


@dataclass(frozen=True, slots=True)
class Card:
    """What one card shows. Exactly one of: a pending ``item`` (with its ``form`` for a
    gate), a ``receipt``, or ``taken_by``/``taken_at`` (someone else was first)."""

    card_id: str
    item: InboxItem | None = None
    may_resolve: bool = False
    form: ApprovalForm | None = None
    receipt: Decision | None = None
    taken_by: str | None = None
    taken_at: str | None = None
    #: The budget card's new limit and the reconciliation card's output, as typed.
    limit_text: str = ""
    output_text: str = ""
    errors: dict[str, list[str]] = field(default_factory=dict)
    general: list[str] = field(default_factory=list)
    #: Why the approval policy keeps this person from deciding the gate now
    #: (``not_an_approver``, ``four_eyes``, ``already_voted``), and what it says.
    refusal_code: str | None = None
    refusal: str | None = None
    #: Who looks at the card (their username): a claim says *you* to its holder.
    viewer: str = ""
    #: A note about the card after an action on it (a claim someone else holds).
    notice: str | None = None

    @property
    def waiting(self) -> bool:
        """Whether the card still waits for a decision (no receipt, nobody else was first)."""
        return bool(self.item and not self.receipt and not (self.taken_by or self.taken_at))

    @property
    def claimed_by_viewer(self) -> bool:
        return bool(self.item and self.item.claimed_by and self.item.claimed_by == self.viewer)

    @property
    def claimed_by_other(self) -> bool:
        return bool(self.item and self.item.claimed_by and self.item.claimed_by != self.viewer)

    @property
    def selectable(self) -> bool:
        """Whether the card can be decided with others of its gate (a gate this person may
        decide now, whose form has fields)."""
        return bool(self.item and self.item.kind == "gate" and self.may_resolve and self.form)

    @property
    def scope_json(self) -> str:
        return json.dumps(self.item.scope) if self.item and self.item.scope else ""


def card(
    item: InboxItem,
    *,
    may_resolve: bool,
    refused: ServiceError | None = None,
    viewer: str = "",
    notice: str | None = None,
) -> Card:
    """The card of a pending item, as the inbox first shows it (``may_resolve``: with its
    form, for someone who may resolve it; ``refused``: why the gate's approval policy keeps
    this person from deciding it now; ``viewer``: who looks at it)."""
    form = None
    if item.kind == "gate" and may_resolve and refused is None:
        form = approval_forms.approval_form(item.input_schema, item.value)
    return Card(
        card_id=item.card_id,
        item=item,
        may_resolve=may_resolve and refused is None,
        form=form,
        limit_text=str(item.suggested_limit) if item.kind == "budget" else "",
        output_text="",
        refusal_code=_REFUSAL_CODES.get(type(refused)) if refused is not None else None,
        refusal=_sentence(str(refused)) if refused is not None else None,
        viewer=viewer,
        notice=notice,
    )


#: The policy's refusals, by the code the API gives them.
_REFUSAL_CODES: dict[type[ServiceError], str] = {
    NotAnApprover: "not_an_approver",
    FourEyes: "four_eyes",
    AlreadyVoted: "already_voted",
}


def _sentence(text: str) -> str:
    return f"{text[:1].upper()}{text[1:]}."


def _gate_refusal(person: Decider, item: InboxItem) -> ServiceError | None:
    return item.refusal(person)


def cards(user: ActingUser, items: list[InboxItem], person: Decider | None = None) -> list[Card]:
    """The cards of a page: one permission check per kind of item, and for each gate the
    check of its approval policy (the person's groups read once, unless ``person`` gives
    them)."""
    allowed = {kind: can_resolve(user, kind) for kind in {item.kind for item in items}}
    if allowed.get("gate"):
        person = person or approvals.decider(user)
    viewer = str(user.get_username()) if user.is_authenticated else ""
    shown = []
    for item in items:
        refused = None
        if item.kind == "gate" and person is not None and allowed["gate"]:
            refused = _gate_refusal(person, item)
        shown.append(card(item, may_resolve=allowed[item.kind], refused=refused, viewer=viewer))
    return shown


def card_of(
    user: ActingUser, run_id: str, node: str | None, scope: Any, *, notice: str | None = None
) -> Card:
    """The card of the run's open item ``node`` (at ``scope``) as ``user`` sees it now (after
    a claim, say); the note that it no longer waits when it does not."""
    _, item = inbox.pending_item(run_id, node, scope)
    if item is None:
        return _taken(user, run_id, node, scope, links.card_id(run_id))
    (shown,) = cards(user, [item])
    return replace(shown, notice=notice)


#: A scope names the map items and fold passes a gate waits inside: never this deep.
_MAX_SCOPE_DEPTH = 64
_SCOPE_EXPECTED = "`scope` must be a JSON list of [node id, index] pairs"


def read_scope(text: str) -> list[list[Any]] | None:
    """A card's ``scope`` field: what the card was drawn with, checked before it is used.

    Raises :class:`InvalidRequest` for anything but a list of ``[node id, index]`` pairs."""
    if not text:
        return None
    try:
        scope = read_json(text)
    except JsonError:
        raise InvalidRequest(_SCOPE_EXPECTED, "scope") from None
    if not isinstance(scope, list) or len(scope) > _MAX_SCOPE_DEPTH:
        raise InvalidRequest(_SCOPE_EXPECTED, "scope")
    for pair in scope:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not isinstance(pair[0], str)
            or type(pair[1]) is not int
            or not 0 <= pair[1] <= INT64_MAX
        ):
            raise InvalidRequest(_SCOPE_EXPECTED, "scope")
    return scope or None


def _seq(text: str) -> int | None:
    """A card's ``seq`` field (the log position it was drawn at), when it has one."""
    return strict_int(text, "seq") if text else None


def _gate_input(item: InboxItem, post: Mapping[str, str], base: Card) -> tuple[Any, Card | None]:
    value, problem = approval_forms.read_approval(item.input_schema, post)
    if not problem:
        return value, None
    form = approval_forms.with_post(base.form or ApprovalForm(None), item.input_schema, post)
    form = approval_forms.with_errors(form, problem.errors, problem.general)
    return None, replace(base, form=form)


#: The budgets counted in numbers rather than whole counts: dollars and seconds.
_DECIMAL_BUDGETS = {"cost_usd": "dollars", "wall_time": "seconds"}
_DECIMAL = re.compile(r"[0-9]{1,15}(\.[0-9]{1,9})?")


def _budget_input(post: Mapping[str, str], base: Card, item: InboxItem) -> tuple[Any, Card | None]:
    text = str(post.get("limit", "")).strip()
    unit = _DECIMAL_BUDGETS.get(str((item.budget or {}).get("kind")))
    if unit is not None:
        # The one decimal reader, on the budget's own shape: no sign, no exponent, and no more
        # digits than a limit needs.
        number = decimal_number(text, integer=True) if _DECIMAL.fullmatch(text) else None
        if number is not None and number > 0:
            return {"limit": number}, None
        message = f"Enter a number of {unit} above 0, like 1.5."
        return None, replace(base, limit_text=text, errors={"limit": [message]})
    try:
        return {"limit": strict_int(text, "limit", minimum=1)}, None
    except InvalidNumber as error:
        message = f"Enter {error.expected}."
        return None, replace(base, limit_text=text, errors={"limit": [message]})


def _reconciliation_input(post: Mapping[str, str], base: Card) -> tuple[Any, Card | None]:
    if post.get("action") == RETRY:
        return {"retry": True}, None
    text = str(post.get("output", ""))
    output, problem = read_typed_json(text, storable=True)
    if problem is not None:
        return None, replace(base, output_text=text, errors={"output": [problem.sentence()]})
    return {"output": output}, None


def _comment(
    item: InboxItem, form: ApprovalForm | None, value: Any, post: Mapping[str, str]
) -> str:
    """The resolution's comment: the built-in field's, or the schema's own ``comment``
    property (which replaces it on the card)."""
    if item.kind != "gate":
        return ""
    if form is not None and form.comment_key is not None:
        own = value.get(form.comment_key) if isinstance(value, dict) else None
        return own.strip() if isinstance(own, str) else ""
    return str(post.get(approval_forms.COMMENT, "")).strip()


def _with_violations(
    base: Card, item: InboxItem, post: Mapping[str, str], violations: list[dict]
) -> Card:
    if item.kind == "gate":
        by_field, general = approval_forms.field_errors(item.input_schema, violations)
        form = approval_forms.with_post(base.form or ApprovalForm(None), item.input_schema, post)
        return replace(base, form=approval_forms.with_errors(form, by_field, general))
    messages = [str(violation.get("message", "")) for violation in violations]
    if item.kind == "budget":
        return replace(base, limit_text=str(post.get("limit", "")), errors={"limit": messages})
    return replace(base, output_text=str(post.get("output", "")), errors={"output": messages})


def resolve_card(user: ActingUser, run_id: str, post: Mapping[str, str]) -> Card:
    """Resolve the item a submitted card names (``node``, ``scope``, ``seq`` in ``post``, the
    card's fields by name).

    The run is read once and the permission checked once. Raises :class:`NotAllowed` when
    ``user`` may not resolve it, :class:`UnknownRun`, and :class:`InvalidRequest` when
    ``scope`` or ``seq`` is not what a card sends."""
    node = str(post.get("node", "")) or None
    scope = read_scope(str(post.get("scope", "")))
    seq = _seq(str(post.get("seq", "")))
    card_id = links.card_id(run_id, seq)
    run, item = inbox.pending_item(run_id, node, scope)
    if item is None or (seq is not None and item.seq != seq):
        return _taken(user, run_id, node, scope, card_id)
    if not can_resolve(user, item.kind):
        raise NotAllowed()
    viewer = str(user.get_username())
    if item.kind == "gate":
        refused = _gate_refusal(approvals.decider(user), item)
        if refused is not None:
            return card(item, may_resolve=True, refused=refused, viewer=viewer)
    base = card(item, may_resolve=True, viewer=viewer)
    if item.kind == "gate":
        value, problem_card = _gate_input(item, post, base)
    elif item.kind == "budget":
        value, problem_card = _budget_input(post, base, item)
    else:
        value, problem_card = _reconciliation_input(post, base)
    if problem_card is not None:
        return problem_card
    body: dict[str, Any] = {"input": value, "node": item.node}
    if item.scope:
        body["scope"] = item.scope
    comment = _comment(item, base.form, value, post)
    if comment:
        body["comment"] = comment[:2000]
    try:
        _, recorded = resolutions.resume_run(user, run, body, allowed=True)
    except InvalidResume as error:
        return _with_violations(base, item, post, error.violations)
    except InvalidRequest as error:  # a value no database may store (a NUL in the comment)
        return _with_violations(base, item, post, [{"path": "$", "message": f"{error}."}])
    except NotSuspended as error:
        return Card(card_id, item=item, taken_by=error.resolved_by, taken_at=error.resolved_at)
    except (NotAnApprover, FourEyes, AlreadyVoted) as error:
        # Another answer of this person, counted meanwhile (a second tab): nothing recorded.
        return card(item, may_resolve=True, refused=error, viewer=viewer)
    policy = item.policy.as_json() if item.policy and item.recorded_policy is not None else None
    receipt = inbox_log.receipt(item.run, item.graph_hash, recorded, policy)
    return Card(card_id, item=item, receipt=receipt)


def _taken(user: ActingUser, run_id: str, node: str | None, scope: Any, card_id: str) -> Card:
    """The card of an item that no longer waits: who resolved it and when, read back from
    the log. Only someone who may resolve something is told."""
    if not can_resolve_any(user):
        raise NotAllowed()
    receipt = inbox_log.resolution_of(run_id, node, scope) if node is not None else None
    if receipt is None:
        return Card(card_id)
    return Card(card_id, taken_by=receipt.by, taken_at=receipt.at)
