"""The Approvals page's form of one gate: a gate's policy as fields, and a post read back into
the policy's JSON (the API's body for that gate), so the one strict reader
(:func:`editor.engine.approvals.read_gate`) judges both.

Fields: the deciders' groups (checkboxes) and users (a list to pick from), **Four eyes**,
**Quorum** (1–5), **Due** (``24h``, ``90m``), **Reminder** (``75%``, or ``75``), and **On
expiry**: nothing, escalate (groups and users), or resolve with a value (JSON, checked against
the gate's approval schema when saved). The problems a save reports (each naming a field of the
JSON: ``deciders.groups``, ``on_expiry.resolve_with``) are put back beside their fields.

Plain Python: no Django here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from editor.engine.approvals import GatePolicy, Problem, format_due
from editor.graph.jsonio import pretty_json
from editor.presentation.typed import read_typed_json, whole_number

__all__ = ["EXPIRY_CHOICES", "PolicyForm", "form_of", "read_form", "with_problems"]

#: The choices of **On expiry**: (value, label).
EXPIRY_CHOICES = (
    ("", "Nothing: the card keeps waiting"),
    ("escalate", "Escalate to other deciders"),
    ("resolve", "Resolve with a value"),
)

#: A JSON field of the policy → the form field its problems are shown beside.
_FIELD_OF = {
    "deciders": "deciders",
    "deciders.groups": "deciders",
    "deciders.users": "deciders",
    "four_eyes": "four_eyes",
    "quorum": "quorum",
    "due": "due",
    "remind_at": "remind_at",
    "on_expiry": "on_expiry",
    "on_expiry.escalate_to": "escalate",
    "on_expiry.escalate_to.groups": "escalate",
    "on_expiry.escalate_to.users": "escalate",
    "on_expiry.resolve_with": "resolve_with",
}


@dataclass(frozen=True, slots=True)
class PolicyForm:
    """What one gate's form shows: the values (as typed, after a refused post) and the
    problems beside their fields (``general``: about the gate as a whole)."""

    groups: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    four_eyes: bool = True
    quorum: str = "1"
    due: str = ""
    remind_at: str = ""
    expiry: str = ""
    escalate_groups: tuple[str, ...] = ()
    escalate_users: tuple[str, ...] = ()
    resolve_with: str = ""
    errors: dict[str, list[str]] = field(default_factory=dict)
    general: tuple[str, ...] = ()

    @property
    def focus(self) -> str | None:
        """The first field with a problem, in the order shown (it takes the focus)."""
        order = ("deciders", "four_eyes", "quorum", "due", "remind_at", "on_expiry", "escalate")
        return next((name for name in (*order, "resolve_with") if self.errors.get(name)), None)


def form_of(policy: GatePolicy) -> PolicyForm:
    """The form of a gate's policy as it is."""
    expiry = policy.on_expiry
    return PolicyForm(
        groups=policy.groups,
        users=policy.users,
        four_eyes=policy.four_eyes,
        quorum=str(policy.quorum),
        due=format_due(policy.due) if policy.due is not None else "",
        remind_at=f"{policy.remind_at}%" if policy.remind_at is not None else "",
        expiry=expiry.action if expiry is not None else "",
        escalate_groups=expiry.groups if expiry is not None else (),
        escalate_users=expiry.users if expiry is not None else (),
        resolve_with=pretty_json(expiry.value)
        if expiry is not None and expiry.action == "resolve"
        else "",
    )


def _first(post: Mapping[str, Sequence[str]], name: str) -> str:
    values = post.get(name) or ()
    return str(values[0]).strip() if values else ""


def _all(post: Mapping[str, Sequence[str]], name: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(value).strip() for value in post.get(name) or () if value))


def read_form(
    post: Mapping[str, Sequence[str]],
) -> tuple[dict[str, Any], PolicyForm]:
    """A posted form (each name → its values) as the gate's policy JSON, and the form as
    typed, with the problems found in reading it (text that is not JSON); the rest is judged
    by the strict reader when the policy is saved."""
    form = PolicyForm(
        groups=_all(post, "groups"),
        users=_all(post, "users"),
        four_eyes=_first(post, "four_eyes") == "on",
        quorum=_first(post, "quorum"),
        due=_first(post, "due"),
        remind_at=_first(post, "remind_at"),
        expiry=_first(post, "on_expiry"),
        escalate_groups=_all(post, "escalate_groups"),
        escalate_users=_all(post, "escalate_users"),
        resolve_with=(post.get("resolve_with") or [""])[0],
    )
    quorum = whole_number(form.quorum, minimum=0, maximum=99)
    remind = form.remind_at
    if remind and whole_number(remind, maximum=999) is not None:
        remind = f"{remind}%"
    body: dict[str, Any] = {
        "deciders": {"groups": list(form.groups), "users": list(form.users)},
        "four_eyes": form.four_eyes,
        "quorum": quorum if quorum is not None else form.quorum,
        "due": form.due or None,
        "remind_at": remind or None,
        "on_expiry": None,
    }
    errors: dict[str, list[str]] = {}
    if form.expiry == "escalate":
        body["on_expiry"] = {
            "escalate_to": {
                "groups": list(form.escalate_groups),
                "users": list(form.escalate_users),
            }
        }
    elif form.expiry == "resolve":
        if not form.resolve_with.strip():
            errors["resolve_with"] = ["Give the value to resolve with, as JSON."]
        else:
            value, problem = read_typed_json(form.resolve_with, storable=True)
            if problem is not None:
                errors["resolve_with"] = [problem.sentence()]
            body["on_expiry"] = {"resolve_with": value}
    elif form.expiry:
        errors["on_expiry"] = ["Choose one of the three."]
    return body, replace(form, errors=errors)


def with_problems(form: PolicyForm, problems: Iterable[Problem | Mapping[str, str]]) -> PolicyForm:
    """``form`` with a save's problems beside their fields."""
    errors = {name: list(messages) for name, messages in form.errors.items()}
    general = list(form.general)
    for problem in problems:
        where = problem.field if isinstance(problem, Problem) else problem.get("field", "")
        message = problem.message if isinstance(problem, Problem) else problem.get("message", "")
        sentence = f"{message[:1].upper()}{message[1:]}."
        name = _FIELD_OF.get(where or "")
        if name is None:
            general.append(sentence if not where else f"`{where}`: {sentence}")
        else:
            errors.setdefault(name, []).append(sentence)
    return replace(form, errors=errors, general=tuple(general))
