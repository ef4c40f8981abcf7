"""Approval policies: who may decide a gate, and how (``docs/inbox.md``, *Approval policies*).

A document names, per gate id, its **deciders** (groups and users; ``approvers`` stands for the
role, so the default is spec 06's rule), **four eyes** (the run's starter and the frozen
version's authors may not decide), a **quorum** (1–5 distinct people must approve), a **due**
time, a **reminder** (a share of the due time) and what happens **on expiry** (escalate to
other deciders, or resolve with a value). A run records the policy in force when it starts, in
its first event (``GraphRunStarted.approval_policy``), so the log alone says what applied:
:class:`RunPolicy` reads it back, and a run recorded without one keeps :data:`LEGACY`, the rule
of every run before policies.

:func:`read_gate` is the strict reader of one gate's JSON (the API's body, the page's form
once turned into JSON): it collects every problem as data (:class:`Problem`, naming the gate
and the field) rather than stopping at the first. Existence of the groups and users named is
the caller's to check (it needs the database).

Pure: no Django here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from editor.engine.schemas import violations
from editor.graph.durations import parse_duration
from editor.graph.model import GateNode, Graph, SubgraphBody

__all__ = [
    "LEGACY",
    "MAX_DUE_SECONDS",
    "MAX_GROUPS",
    "MAX_NAME_LENGTH",
    "MAX_QUORUM",
    "MAX_RESOLVE_BYTES",
    "MAX_USERS",
    "ROLE_GROUP",
    "Expiry",
    "GatePolicy",
    "Problem",
    "RunPolicy",
    "authors_of",
    "default_gate",
    "format_due",
    "gate_nodes",
    "gate_policy_of",
    "read_gate",
]

#: The group that stands for the approvers role: its members, and anyone else holding the
#: permission (a superuser).
ROLE_GROUP = "approvers"
MAX_QUORUM = 5
#: A due time is a second to a year.
MAX_DUE_SECONDS = 366 * 86400
MAX_GROUPS = 20
MAX_USERS = 50
#: Django's longest username and group name.
MAX_NAME_LENGTH = 150
#: A value to resolve with on expiry, as compact JSON: it is recorded in every run's first
#: event, beside the run's input, under the event cap.
MAX_RESOLVE_BYTES = 16 * 1024

#: The fields of a gate's policy, in the order the API writes them.
GATE_FIELDS = ("deciders", "four_eyes", "quorum", "due", "remind_at", "on_expiry")
_PERCENT = re.compile(r"([0-9]{1,2})\s*%")


@dataclass(frozen=True, slots=True)
class Problem:
    """What is wrong with a policy: the gate, the field (``quorum``, ``deciders.groups``,
    ``on_expiry.resolve_with``; empty for the gate as a whole) and why."""

    gate: str
    field: str
    message: str

    def as_json(self) -> dict[str, str]:
        found = {"gate": self.gate, "message": self.message}
        if self.field:
            found["field"] = self.field
        return found


@dataclass(frozen=True, slots=True)
class Expiry:
    """What happens when a card's due time passes: ``escalate`` to other deciders, or
    ``resolve`` with ``value`` (recorded as decided by the deadline)."""

    action: str
    groups: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    value: Any = None

    @property
    def value_text(self) -> str:
        """The value to resolve with, as compact JSON."""
        return orjson.dumps(self.value).decode() if self.action == "resolve" else ""

    def as_json(self) -> dict[str, Any]:
        if self.action == "escalate":
            return {"escalate_to": {"groups": list(self.groups), "users": list(self.users)}}
        return {"resolve_with": self.value}


@dataclass(frozen=True, slots=True)
class GatePolicy:
    """One gate's policy. The defaults are a new document's: the approvers role, four eyes,
    one approval, no due time."""

    groups: tuple[str, ...] = (ROLE_GROUP,)
    users: tuple[str, ...] = ()
    four_eyes: bool = True
    quorum: int = 1
    #: Seconds, or ``None`` for no due time.
    due: int | None = None
    #: A percentage of the due time (1–99), or ``None``.
    remind_at: int | None = None
    on_expiry: Expiry | None = None

    @property
    def due_text(self) -> str:
        return format_due(self.due) if self.due is not None else ""

    @property
    def role_decides(self) -> bool:
        """Anyone holding the approvers role decides (``approvers`` is among the groups)."""
        return ROLE_GROUP in self.groups

    def as_json(self) -> dict[str, Any]:
        """The API's shape, which is also what a run records."""
        return {
            "deciders": {"groups": list(self.groups), "users": list(self.users)},
            "four_eyes": self.four_eyes,
            "quorum": self.quorum,
            "due": format_due(self.due) if self.due is not None else None,
            "remind_at": f"{self.remind_at}%" if self.remind_at is not None else None,
            "on_expiry": self.on_expiry.as_json() if self.on_expiry is not None else None,
        }

    @classmethod
    def from_record(cls, value: Any, fallback: GatePolicy) -> GatePolicy:
        """A gate's policy as a run recorded it (written by :meth:`as_json`); ``fallback``
        for what is missing or unreadable."""
        found, problems = read_gate("", value if isinstance(value, Mapping) else {}, fallback)
        return fallback if found is None or problems else found


def default_gate(*, four_eyes: bool) -> GatePolicy:
    """A gate the policy leaves out: four eyes as the document sets it for such gates."""
    return GatePolicy(four_eyes=four_eyes)


#: The rule of a run recorded without a policy (before policies existed, a test run, a graph
#: no document froze): the approvers role, no four eyes, one approval.
LEGACY = GatePolicy(four_eyes=False)


def format_due(seconds: int) -> str:
    """A due time as the API writes it, largest units first, without spaces: ``1d``,
    ``1h30m``, ``2s``."""
    parts = []
    rest = seconds
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        amount, rest = divmod(rest, size)
        if amount:
            parts.append(f"{amount}{unit}")
    return "".join(parts) or "0s"


def _names(
    gate: str, where: str, value: Any, limit: int, problems: list[Problem]
) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        problems.append(Problem(gate, where, "must be a list of names"))
        return ()
    names: list[str] = []
    for name in value:
        cleaned = name.strip()
        if not cleaned or len(cleaned) > MAX_NAME_LENGTH or "\x00" in cleaned:
            problems.append(
                Problem(gate, where, f"a name is 1 to {MAX_NAME_LENGTH} characters, without NUL")
            )
            return ()
        if cleaned not in names:
            names.append(cleaned)
    if len(names) > limit:
        problems.append(Problem(gate, where, f"at most {limit} names"))
        return ()
    return tuple(names)


def _people(
    gate: str, where: str, value: Any, problems: list[Problem]
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``{"groups": [...], "users": [...]}``: at least one name in all."""
    if not isinstance(value, Mapping):
        problems.append(Problem(gate, where, 'must be {"groups": [...], "users": [...]}'))
        return None
    unknown = sorted(str(key) for key in value if key not in ("groups", "users"))
    if unknown:
        problems.append(Problem(gate, f"{where}.{unknown[0]}", "is not a field here"))
        return None
    before = len(problems)
    groups = _names(gate, f"{where}.groups", value.get("groups"), MAX_GROUPS, problems)
    users = _names(gate, f"{where}.users", value.get("users"), MAX_USERS, problems)
    if len(problems) > before:
        return None
    if not groups and not users:
        problems.append(Problem(gate, where, "name at least one group or user"))
        return None
    return groups, users


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read_due(gate: str, value: Any, problems: list[Problem]) -> int | None:
    if value is None:
        return None
    seconds = parse_duration(value) if isinstance(value, str) else None
    if _whole(value):
        seconds = value
    if seconds is None or not 1 <= seconds <= MAX_DUE_SECONDS:
        problems.append(
            Problem(gate, "due", "must be a time from 1 second to 366 days, like `24h` or `90m`")
        )
        return None
    return int(seconds)


def _read_remind(gate: str, value: Any, problems: list[Problem]) -> int | None:
    if value is None:
        return None
    found = _PERCENT.fullmatch(value.strip()) if isinstance(value, str) else None
    percent = int(found[1]) if found else None
    if percent is None or not 1 <= percent <= 99:
        problems.append(
            Problem(gate, "remind_at", "must be a share of the due time from `1%` to `99%`")
        )
        return None
    return percent


def _read_expiry(
    gate: str, value: Any, schema: Any, check_value: bool, problems: list[Problem]
) -> Expiry | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or len(value) != 1:
        problems.append(
            Problem(
                gate,
                "on_expiry",
                'must be null, {"escalate_to": {"groups", "users"}} or {"resolve_with": <value>}',
            )
        )
        return None
    ((action, given),) = value.items()
    if action == "escalate_to":
        people = _people(gate, "on_expiry.escalate_to", given, problems)
        if people is None:
            return None
        return Expiry("escalate", groups=people[0], users=people[1])
    if action != "resolve_with":
        problems.append(Problem(gate, f"on_expiry.{action}", "is not a field here"))
        return None
    where = "on_expiry.resolve_with"
    if len(orjson.dumps(given)) > MAX_RESOLVE_BYTES:
        problems.append(Problem(gate, where, f"is longer than {MAX_RESOLVE_BYTES} bytes as JSON"))
        return None
    if check_value:
        found = violations(schema, given, seconds=2.0)
        if found:
            said = "; ".join(f"{item['path']}: {item['message']}" for item in found[:3])
            problems.append(
                Problem(gate, where, f"does not match the gate's approval schema: {said}")
            )
            return None
    return Expiry("resolve", value=given)


def read_gate(
    gate: str,
    body: Mapping[str, Any],
    base: GatePolicy,
    *,
    schema: Any = None,
    check_value: bool = False,
) -> tuple[GatePolicy | None, list[Problem]]:
    """One gate's policy from its JSON (``GATE_FIELDS``; a field left out keeps ``base``'s).
    With ``check_value``, a value to resolve with on expiry must match ``schema`` (the gate's
    approval schema). Answers the policy, or ``None`` and every problem found."""
    problems: list[Problem] = []
    unknown = sorted(str(key) for key in body if key not in GATE_FIELDS)
    for name in unknown:
        problems.append(Problem(gate, name, "is not a field of a gate's policy"))
    groups, users = base.groups, base.users
    if "deciders" in body:
        people = _people(gate, "deciders", body["deciders"], problems)
        if people is not None:
            groups, users = people
    four_eyes = base.four_eyes
    if "four_eyes" in body:
        if isinstance(body["four_eyes"], bool):
            four_eyes = body["four_eyes"]
        else:
            problems.append(Problem(gate, "four_eyes", "must be true or false"))
    quorum = base.quorum
    if "quorum" in body:
        given = body["quorum"]
        if _whole(given) and 1 <= given <= MAX_QUORUM:
            quorum = int(given)
        else:
            problems.append(
                Problem(gate, "quorum", f"must be a whole number from 1 to {MAX_QUORUM}")
            )
    due = _read_due(gate, body["due"], problems) if "due" in body else base.due
    remind = (
        _read_remind(gate, body["remind_at"], problems) if "remind_at" in body else base.remind_at
    )
    expiry = base.on_expiry
    if "on_expiry" in body:
        expiry = _read_expiry(gate, body["on_expiry"], schema, check_value, problems)
    if due is None and not any(problem.field == "due" for problem in problems):
        if remind is not None:
            problems.append(Problem(gate, "remind_at", "needs a due time to be a share of"))
        if expiry is not None:
            problems.append(Problem(gate, "on_expiry", "needs a due time to expire at"))
    if problems:
        return None, problems
    policy = replace(
        base,
        groups=groups,
        users=users,
        four_eyes=four_eyes,
        quorum=quorum,
        due=due,
        remind_at=remind,
        on_expiry=expiry,
    )
    return policy, []


def gate_nodes(graph: Graph) -> dict[str, GateNode]:
    """Every gate of ``graph`` by id, embedded subgraphs included, in document order (the
    first of two equal ids wins, as the inbox names nodes)."""
    found: dict[str, GateNode] = {}
    for node in _nodes(graph):
        if isinstance(node, GateNode):
            found.setdefault(node.id, node)
    return found


def _nodes(graph: Graph) -> Iterator[Any]:
    for node in graph.nodes:
        yield node
        body = getattr(node, "body", None)
        if isinstance(body, SubgraphBody):
            yield from _nodes(body.graph)


@dataclass(frozen=True, slots=True)
class RunPolicy:
    """The policy a run recorded when it started: every gate of its graph, the authors of
    the frozen version (whom four eyes excludes, with the run's starter), and the document
    it came from."""

    gates: Mapping[str, GatePolicy] = field(default_factory=dict)
    authors: tuple[str, ...] = ()
    document: str | None = None

    def gate(self, node: str) -> GatePolicy:
        # Every gate of the run's graph is recorded; a node that is not (never, unless the
        # record was written by hand) gets a new document's defaults, the stricter rule.
        return self.gates.get(node) or GatePolicy()

    def as_record(self) -> dict[str, Any]:
        """``GraphRunStarted.approval_policy``."""
        record: dict[str, Any] = {}
        if self.document is not None:
            record["document"] = self.document
        record["gates"] = {gate: policy.as_json() for gate, policy in self.gates.items()}
        record["authors"] = list(self.authors)
        return record

    @classmethod
    def from_record(cls, value: Any) -> RunPolicy | None:
        """The policy a run's first event records, or ``None`` when it records none."""
        if not isinstance(value, Mapping):
            return None
        gates = value.get("gates")
        gates = gates if isinstance(gates, Mapping) else {}
        authors = value.get("authors")
        document = value.get("document")
        return cls(
            gates={
                str(gate): GatePolicy.from_record(policy, GatePolicy())
                for gate, policy in gates.items()
            },
            authors=tuple(str(name) for name in authors) if isinstance(authors, list) else (),
            document=document if isinstance(document, str) else None,
        )


def gate_policy_of(recorded: Any, node: str) -> GatePolicy:
    """The policy of gate ``node`` of a run that recorded ``recorded`` (its
    ``approval_policy``, or ``None``): :data:`LEGACY` when it recorded none. Only that gate's
    entry is read."""
    if not isinstance(recorded, Mapping):
        return LEGACY
    gates = recorded.get("gates")
    entry = gates.get(node) if isinstance(gates, Mapping) else None
    return GatePolicy.from_record(entry, GatePolicy()) if entry is not None else GatePolicy()


def authors_of(recorded: Any) -> tuple[str, ...]:
    """The authors of the frozen version a run recorded (four eyes excludes them)."""
    authors = recorded.get("authors") if isinstance(recorded, Mapping) else None
    return tuple(str(name) for name in authors) if isinstance(authors, list) else ()
