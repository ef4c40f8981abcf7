"""What the page fuzzer sends, to which pages, as whom, and the corpus it keeps.

Every page of ``editor/urls.py`` (the API under ``/v1`` has its own fuzzer), with every form
and query parameter its templates and views read, is sent hostile values — Unicode digits,
huge numbers, NUL, JSON that strict JSON refuses, lists where scalars go, invalid UTF-8,
megabyte strings — and plausible ones that reach deeper code (the current draft revision, a
waiting gate's ``seq``, real node ids), as each role: nobody signed in, a user without a role,
an author, an operator, an approver, a superuser. The one promise: no answer is a 5xx and no
answer carries a traceback (spec 07: bad input gets a clear error, never a 500).

Plausible values are *symbols* (``{revision}``, ``{gated_run}``, …) resolved against the
objects of the test that sends them, so a case kept in the corpus (``cases/page_fuzz/``)
replays against fresh objects. Each case file is ``{"method", "path", "role", "htmx",
"query", "form", "note"}``; ``query`` and ``form`` are lists of ``[name, value]`` pairs, a value
being text, ``{"base64": …}`` for bytes that are not UTF-8, or ``{"repeat": text, "times": n}``
for a long value whose length is the point.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote_from_bytes

from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client

from editor.graph import wire_value
from editor.graph.templates import approval_gate
from editor.models import ApiToken, Run
from editor.services import agents, documents
from editor.services.documents.demo import DEMO_AGENTS
from editor.services.tokens import create_token
from tests.integration.api.callers import make_user
from tests.integration.inbox import frozen, gated, parked, waiting

CORPUS = Path(__file__).parent / "cases" / "page_fuzz"

#: ``make fuzz`` sets these: many more examples per page, randomly seeded, failures written to
#: the corpus.
FUZZING = os.environ.get("GATEHOUSE_FUZZ") == "1"
EXAMPLES = int(os.environ.get("GATEHOUSE_FUZZ_PAGE_EXAMPLES", "300" if FUZZING else "10"))

ROLES = ("anonymous", "nobody", "author", "operator", "approver", "admin")

MEGABYTE = 1024 * 1024

#: Numbers as a person or an attacker might write them: ``str.isdigit()`` accepts several.
NUMBERISH: tuple[str, ...] = (
    "²", "3²", "①", "١٢", "٣", "𝟗", "１", "-1", "0", "007", " 1", "1 ", "+1", "1.0", "1e3",
    "1_000", "9" * 30, str(2**63), str(2**64), "-" + "9" * 30, "9" * 5000,
)  # fmt: skip

#: Values no page should trip over.
HOSTILE: tuple[str | bytes, ...] = (
    "",
    " ",
    "²",
    "3²",
    "١٢",
    "٣",
    "①",
    "𝟗",
    "１",
    "-1",
    "0",
    "-0",
    "1.5",
    "1e3",
    "1e999",
    "1_000",
    "9" * 30,
    str(2**63),
    str(2**64),
    "-" + "9" * 30,
    "9" * 5000,
    "NaN",
    "Infinity",
    "-Infinity",
    "\x00",
    "a\x00b",
    '"\\u0000"',
    '{"approved": true, "note": "\\u0000"}',
    '{"a": 1, "a": 2}',
    '{"approved": NaN}',
    "[1]",
    "[[1]]",
    '[["each", 1]]',
    '[["each", "²"]]',
    '[["each", 99999999999999999999999]]',
    "[" * 200 + "]" * 200,
    "{}",
    "null",
    "true",
    "on",
    "draft",
    "sha256:" + "0" * 64,
    "sha256:" + "²" * 64,
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "../../etc/passwd",
    "%00",
    "\u202e\u2028",
    "\ufeff{}",
    b"\xff\xfe",
    b"\xed\xa0\x80",  # a UTF-16 surrogate, encoded
    "x" * MEGABYTE,
    "[" * MEGABYTE,
    "7" * MEGABYTE,
)

#: Symbols for the objects of the test, resolved by :meth:`World.resolve`.
SYMBOLS = (
    "{slug}",
    "{gated_slug}",
    "{hex}",
    "{graph}",
    "{revision}",
    "{gated_run}",
    "{gated_seq}",
    "{budget_run}",
    "{reconcile_run}",
    "{token}",
    "{agent}",
)


@dataclass(frozen=True)
class Page:
    """One route and what it reads: query parameters for a GET, form fields for a POST."""

    method: str
    path: str
    params: tuple[str, ...] = ()
    #: Plausible values by parameter (symbols or literals), tried beside the hostile ones.
    plausible: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def name(self) -> str:
        return f"{self.method} {self.path}"

    def plausible_for(self, param: str) -> tuple[str, ...]:
        return dict(self.plausible).get(param, ())


_EDITOR = "/graphs/{slug}/"
_REV = ("revision", ("{revision}", "0"))
_NODES = ("write", "review", "decide", "publish", "archive", "each", "refine", "ghost")
_NODE_FIELDS = (
    "revision", "node", "id", "name", "prompt", "on", "agent_hash", "tool", "over",
    "concurrency", "max_iterations", "stop_when", "join_kind", "join_value", "body_kind",
    "body_node", "body_subgraph", "input_schema", "output_schema", "approval_schema",
    "accumulator_schema", "input", "case_count", "case-0-name", "case-0-kind", "case-0-value",
    "case-1-name", "add_case", "remove_case", "token", "shown_canvas", "shown_structure",
    "selected",
)  # fmt: skip
_CARD_FIELDS = (
    "node", "scope", "seq", "field-approved", "field-note", "approval-json", "comment",
    "limit", "output", "action",
)  # fmt: skip

PAGES: tuple[Page, ...] = (
    Page("GET", "/", ("q", "cursor", "archived")),
    Page("GET", "/new/"),
    Page(
        "POST",
        "/new/",
        ("title", "template", "writer", "critic", "synthesizer", "personas", "max_rounds"),
        (
            ("template", ("blank", "approval_gate", "parallel", "rounds")),
            ("writer", ("{agent}",)),
            ("critic", ("{agent}",)),
            ("synthesizer", ("{agent}",)),
            ("personas", ("a\nb", "a\na")),
            ("max_rounds", ("3", "5")),
        ),
    ),
    Page("GET", "/import/"),
    Page("POST", "/import/", ("text", "file")),
    Page("GET", "/graphs/{slug}/versions/", ("cursor",)),
    Page(
        "GET",
        "/graphs/{slug}/compare/",
        ("from", "to"),
        (("from", ("{graph}", "draft")), ("to", ("{graph}", "draft"))),
    ),
    Page("GET", "/g/{hex}/", ("document",), (("document", ("{slug}", "{gated_slug}")),)),
    Page("GET", "/g/{hex}/download/", ("document",), (("document", ("{slug}",)),)),
    Page("GET", "/g/sha256:{hex}/", ("document",)),
    Page(
        "POST",
        "/g/{hex}/runs/",
        ("input", "document"),
        (("input", ('{"topic": "x"}', "null")), ("document", ("{gated_slug}",))),
    ),
    Page(
        "GET",
        "/runs/",
        ("state", "graph", "document", "label", "person", "from", "to", "cursor"),
        (
            ("state", ("suspended", "running")),
            ("graph", ("{graph}",)),
            ("document", ("{gated_slug}",)),
            ("label", ("team=a", "team")),
            ("from", ("2026-01-01",)),
            ("to", ("2026-12-31",)),
        ),
    ),
    Page("GET", "/runs/{gated_run}/", ("seen",), (("seen", ("0", "1", "3")),)),
    Page("POST", "/runs/{gated_run}/abandon/", ("reason",)),
    Page("POST", "/runs/{gated_run}/wake/"),
    Page(
        "POST",
        "/runs/{gated_run}/signal/",
        ("seq", "input"),
        (("seq", ("{gated_seq}", "0")), ("input", ('{"paid": true}', "{"))),
    ),
    Page("GET", "/runs/{gated_run}/events/", ("before",), (("before", ("0", "2", "5")),)),
    Page("GET", "/runs/{gated_run}/events/{gated_seq}/"),
    Page("GET", "/runs/{gated_run}/events/99999999999999999999/"),
    Page("GET", "/runs/{gated_run}/log.jsonl"),
    Page("GET", "/runs/{gated_run}/node/", ("node", "in"), (("node", _NODES),)),
    Page(
        "POST",
        "/runs/{gated_run}/fork/",
        ("from_node", "acknowledge"),
        (("from_node", _NODES), ("acknowledge", ("1", "4"))),
    ),
    Page("POST", "/runs/{gated_run}/again/"),
    Page(
        "GET",
        "/inbox/",
        ("graph", "cursor", "run"),
        (("graph", ("{graph}",)), ("run", ("{gated_run}",))),
    ),
    Page("GET", "/inbox/resolved/", ("cursor",)),
    Page("GET", "/inbox/count/"),
    Page(
        "POST",
        "/inbox/{gated_run}/resolve/",
        _CARD_FIELDS,
        (
            ("node", ("review", "write")),
            ("seq", ("{gated_seq}",)),
            ("field-approved", ("on",)),
            ("approval-json", ('{"approved": true}',)),
        ),
    ),
    Page(
        "POST",
        "/inbox/{budget_run}/resolve/",
        _CARD_FIELDS,
        (("node", ("write",)), ("limit", ("4", "9"))),
    ),
    Page(
        "POST",
        "/inbox/{reconcile_run}/resolve/",
        _CARD_FIELDS,
        (("node", ("write",)), ("action", ("record", "retry")), ("output", ('{"ok": 1}',))),
    ),
    Page("GET", "/agents/", ("cursor",)),
    Page(
        "POST",
        "/agents/",
        ("name", "model", "openai_model", "prompt", "tools", "max_steps", "max_tokens", "replies"),
        (("model", ("echo", "scripted", "openai")), ("tools", ("echo",))),
    ),
    Page("GET", "/tools/"),
    Page("GET", "/healthz"),
    Page("GET", "/accounts/login/", ("next",)),
    Page("POST", "/accounts/login/", ("username", "password", "next")),
    Page("GET", "/account/"),
    Page("POST", "/account/password/", ("old_password", "new_password1", "new_password2")),
    Page("POST", "/account/tokens/", ("name",)),
    Page("POST", "/account/tokens/{token}/revoke/"),
    Page("POST", "/account/tokens/99999999999999999999999/revoke/"),
    Page("GET", _EDITOR, ("node",), (("node", _NODES),)),
    Page(
        "POST",
        _EDITOR + "edit/node/",
        _NODE_FIELDS,
        (
            _REV,
            ("node", _NODES),
            ("id", _NODES),
            ("case_count", ("1", "2")),
            ("join_kind", ("last", "all", "best_by")),
            ("body_kind", ("node", "subgraph")),
        ),
    ),
    Page(
        "POST",
        _EDITOR + "edit/add-node/",
        ("revision", "kind", "id"),
        (_REV, ("kind", ("tool", "gate", "branch", "map", "fold", "agent"))),
    ),
    Page("POST", _EDITOR + "edit/delete-node/", ("revision", "node"), (_REV, ("node", _NODES))),
    Page(
        "POST",
        _EDITOR + "edit/add-edge/",
        ("revision", "from", "to", "label", "selected"),
        (_REV, ("from", _NODES), ("to", _NODES)),
    ),
    Page(
        "POST",
        _EDITOR + "edit/delete-edge/",
        ("revision", "edge", "selected"),
        (_REV, ("edge", ("0", "1"))),
    ),
    # The one-click fix of a branch edge's label (issue 25).
    Page(
        "POST",
        _EDITOR + "edit/relabel-edge/",
        ("revision", "edge", "from", "to", "label", "in", "selected"),
        (_REV, ("edge", ("0", "1")), ("from", _NODES), ("to", _NODES)),
    ),
    Page("POST", _EDITOR + "edit/json/", ("revision", "text", "selected"), (_REV,)),
    Page("POST", _EDITOR + "freeze/", ("revision", "note"), (_REV,)),
    Page("POST", _EDITOR + "discard/", ("revision",), (_REV,)),
    # A node's latest test result, and running it alone or the draft from it (issue 24).
    Page("GET", _EDITOR + "test/node/", ("node", "in"), (("node", _NODES),)),
    Page(
        "POST",
        _EDITOR + "test/node/run/",
        ("node", "input", "confirm_writes"),
        (("node", _NODES), ("input", ('{"topic": "x"}', "null"))),
    ),
    Page(
        "POST",
        _EDITOR + "test/node/from-here/",
        ("node", "acknowledge_writes", "confirm_writes"),
        (("node", _NODES), ("acknowledge_writes", ("1", "4"))),
    ),
    Page(
        "POST",
        _EDITOR + "test/sample/",
        ("original", "name", "delete", "approval-json", "field-topic"),
        (("name", ("small",)), ("approval-json", ('{"topic": "x"}',))),
    ),
    Page("POST", "/accounts/logout/"),
)


# --- The objects a test sends requests about ---------------------------------------------------


class World:
    """A user per role, a document being edited (every kind of node), a frozen graph that runs
    here, and runs waiting at a gate, at a budget and for a reconciliation."""

    def __init__(self) -> None:
        self.users: dict[str, User | None] = {
            "anonymous": None,
            "nobody": make_user("nobody"),
            "author": make_user("ada", "authors"),
            "operator": make_user("otto", "operators"),
            "approver": make_user("april", "approvers"),
            "admin": User.objects.create_superuser("root", password="not-used-by-these-tests"),
        }
        author, operator = self.users["author"], self.users["operator"]
        self.agent = agents.create_agent(author, json.dumps(DEMO_AGENTS["writer"])).agent
        value = wire_value(approval_gate(self.agent))
        value["nodes"] += [
            {
                "kind": "map",
                "payload": {
                    "id": "each",
                    "over": "items",
                    "concurrency": 2,
                    "body": {"kind": "node", "value": "publish"},
                },
            },
            {
                "kind": "fold",
                "payload": {
                    "id": "refine",
                    "body": {"kind": "node", "value": "archive"},
                    "max_iterations": 3,
                    "stop_when": "done == true",
                    "join": {"kind": "last"},
                },
            },
        ]
        self.slug = documents.create_document(
            author, title="Fuzzed", slug="fuzzed", text=json.dumps(value, indent=2)
        ).slug
        self.gated_slug, self.graph = frozen(author, gated(), title="Gated")
        self.gated_run = waiting(author, operator, graph_hash=self.graph, document=self.gated_slug)
        self.budget_run = parked(author, operator, "budget")
        self.reconcile_run = parked(author, operator, "reconciliation")
        self.token = str(create_token(self.users["admin"], "fuzz")[0].pk)

    def symbol(self, name: str) -> str:
        if name not in SYMBOLS:
            return name
        if name == "{revision}":
            return str(documents.read_draft(self.slug).revision)
        if name == "{gated_seq}":
            pending = (Run.objects.get(pk=self.gated_run).status or {}).get("pending") or []
            return str(pending[0]["seq"]) if pending else "0"
        if name == "{hex}":
            return self.graph.removeprefix("sha256:")
        if name == "{token}":
            return self.token if ApiToken.objects.filter(pk=self.token).exists() else "1"
        return str(getattr(self, name.strip("{}")))

    def resolve(self, value: Any) -> Any:
        """A value with its symbols replaced (a path may hold several; a value is one)."""
        if isinstance(value, str) and "{" in value:
            return re.sub(r"\{[a-z_]+\}", lambda match: self.symbol(match.group(0)), value)
        return value

    def client(self, role: str) -> Client:
        client = Client(raise_request_exception=False)
        user = self.users[role]
        if user is not None:
            client.force_login(user)
        return client


# --- Sending a case ----------------------------------------------------------------------------


def _encoded(pairs: list[tuple[str, str | bytes]]) -> str:
    def part(value: str | bytes) -> str:
        raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
        return quote_from_bytes(raw, safe="")

    return "&".join(f"{part(name)}={part(value)}" for name, value in pairs)


def send(world: World, case: dict[str, Any]) -> HttpResponse:
    """Send one case (as the corpus stores it) as its role."""
    client = world.client(case["role"])
    path = world.resolve(case["path"])
    query = [(name, world.resolve(decode_value(value))) for name, value in case["query"]]
    form = [(name, world.resolve(decode_value(value))) for name, value in case["form"]]
    headers = {"HX-Request": "true"} if case.get("htmx") else {}
    extra = {"QUERY_STRING": _encoded(query)} if query else {}
    if case["method"] == "GET":
        return client.get(path, headers=headers, **extra)
    if any(name == "file" for name, _ in form):
        return _upload(client, path, form, headers)
    return client.generic(
        "POST",
        path,
        data=_encoded(form).encode("ascii"),
        content_type="application/x-www-form-urlencoded",
        headers=headers,
        **extra,
    )


def _upload(
    client: Client, path: str, form: list[tuple[str, str | bytes]], headers: dict[str, str]
) -> HttpResponse:
    from django.core.files.uploadedfile import SimpleUploadedFile

    data: dict[str, Any] = {}
    for name, value in form:
        raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
        if name == "file":
            data[name] = SimpleUploadedFile("fuzz.json", raw, "application/json")
        else:
            data[name] = raw.decode("utf-8", "replace")
    return client.post(path, data, headers=headers)


def check(response: HttpResponse, case: dict[str, Any]) -> None:
    """The promise: no server error, no traceback."""
    body = response.content if not response.streaming else b""
    where = f"{case['method']} {case['path']} as {case['role']}"
    assert response.status_code < 500, f"{where} answered {response.status_code}: " + repr(
        getattr(response, "exc_info", None)
    )
    assert b"Traceback" not in body, f"{where} showed a traceback"


# --- The corpus --------------------------------------------------------------------------------


def encode_value(value: str | bytes) -> Any:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(value).decode("ascii")}
    return value


def decode_value(value: Any) -> str | bytes:
    if isinstance(value, dict) and "repeat" in value:
        return value["repeat"] * value["times"]
    if isinstance(value, dict):
        return base64.b64decode(value["base64"])
    return value


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.json"))


def read_case(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def write_case(case: dict[str, Any], note: str) -> Path:
    """Keep a case that broke the promise (``make fuzz`` only). A long value of one repeated
    character is kept as ``{"repeat", "times"}``; another long value is cut to 4 KiB."""

    def shortened(value: Any) -> Any:
        if isinstance(value, str) and len(value) > 4096:
            if len(set(value)) == 1:
                return {"repeat": value[0], "times": len(value)}
            return value[:4096]
        return value

    record = {
        **case,
        "query": [[name, shortened(value)] for name, value in case["query"]],
        "form": [[name, shortened(value)] for name, value in case["form"]],
        "note": note,
    }
    text = json.dumps(record, indent=1, ensure_ascii=True) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    CORPUS.mkdir(parents=True, exist_ok=True)
    path = CORPUS / f"{case['method'].lower()}-{digest}.json"
    path.write_text(text, encoding="utf-8")
    return path
