"""Schemathesis against ``/v1``: no generated request gets a server error.

The OpenAPI document is loaded from the WSGI app itself (no server, no network), authenticated
with the API token of a user who holds every role, so each operation is reached past its
permission check. Every operation gets Schemathesis' explicit examples, its coverage cases
(boundary and wrong-typed values, derived from the schema) and a capped number of random ones,
all derived from a fixed seed, so a CI run is repeatable; the one check is that nothing answers
5xx (spec 07: bad input gets a 4xx, never a 500).

Random path parameters name nothing, so most of them stop at a 404. Every other case therefore
names objects that exist (a document with a frozen version, a stored graph and agent, a run
waiting at an approval gate, with the draft's current ``If-Match`` revision), so the generated
bodies and queries reach each operation's own checks: saving a draft, freezing, resuming and
abandoning a run.

``make fuzz`` runs many more cases per operation (``GATEHOUSE_FUZZ_API_EXAMPLES``), randomly
seeded; a case that got a 5xx is written to ``cases/api_fuzz/``, which
``test_api_fuzz_corpus.py`` replays in every run.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from editor.models import Document, DocumentAlias
from editor.services import agents, documents, runs
from editor.services.documents import graphs
from editor.services.documents.demo import DEMO_AGENTS
from editor.services.tokens import create_token
from editor.tasks import drive_run
from tests.integration.runs.starting import GATED

FUZZING = os.environ.get("GATEHOUSE_FUZZ") == "1"
#: Random cases per operation, on top of the examples and coverage cases.
MAX_EXAMPLES = int(os.environ.get("GATEHOUSE_FUZZ_API_EXAMPLES", "15"))
#: Where ``make fuzz`` writes a case that got a server error.
API_CORPUS = Path(__file__).parent / "cases" / "api_fuzz"


@pytest.fixture
def bearer(db: None) -> dict[str, str]:
    """The Authorization header of a user who holds every role."""
    user = get_user_model().objects.create_user("schemathesis")
    user.groups.set(Group.objects.all())
    _token, raw = create_token(user, "schemathesis")
    return {"Authorization": f"Bearer {raw}"}


@pytest.fixture
def existing(bearer: dict[str, str]) -> dict[str, str]:
    """Objects the path parameters can name: a document with a frozen version, a graph, an
    agent, and a run suspended at its gate."""
    user = get_user_model().objects.get(username="schemathesis")
    graph = graphs.store_graph(user, json.dumps(GATED)).graph
    slug = documents.create_document(user, title="Fuzzed", text=json.dumps(GATED)).slug
    documents.freeze(user, slug, expected_revision=documents.read_draft(slug).revision)
    agent = agents.create_agent(user, json.dumps(DEMO_AGENTS["critic"])).agent
    run = runs.start_run(user, graph, {"topic": "fuzz"}).run
    assert drive_run.call(run) == "suspended"
    return {"slug": slug, "graph": graph, "agent": agent, "run": run}


@pytest.fixture
def api_schema(bearer: dict[str, str]) -> Iterator[schemathesis.BaseSchema]:
    """``/v1/openapi.json``, read from the app, with requests served by the app in-process.

    The app is built here as ``editor.wsgi`` builds it, once the test settings apply. As
    Django's test client does, it does not close the database connection after each request:
    the test's transaction lives on it.
    """
    application = get_wsgi_application()
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/v1/openapi.json", application, headers=bearer)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def _node_id_for_schemathesis(request: pytest.FixtureRequest) -> None:
    # Schemathesis 4.32 renames the test after each operation through ``node._nodeid``, which
    # pytest 9.2 no longer has; a plain attribute of that name lets it run (the names it sets
    # are then not shown, its subtest reports still name each operation).
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


schema = schemathesis.pytest.from_fixture("api_schema")


_turns = itertools.count()


def _document_again(slug: str) -> None:
    """The fuzzed document, made again when a case deleted or renamed it (both are operations
    of the API), so that the cases after it still name an existing document."""
    if Document.objects.filter(slug=slug, deleted_at__isnull=True).exists():
        return
    DocumentAlias.objects.filter(slug=slug).delete()
    user = get_user_model().objects.get(username="schemathesis")
    documents.create_document(user, title="Fuzzed", slug=slug, text=json.dumps(GATED))
    documents.freeze(user, slug, expected_revision=1)


def _name_existing_objects(case: schemathesis.Case, existing: dict[str, str]) -> None:
    """Every other case: the path names existing objects, and If-Match the draft's revision."""
    if next(_turns) % 2:
        return
    _document_again(existing["slug"])
    for name in list(case.path_parameters or {}):
        if name in existing:
            case.path_parameters[name] = existing[name]
    if case.headers and "If-Match" in case.headers:
        case.headers["If-Match"] = f'"{documents.read_draft(existing["slug"]).revision}"'


def _keep_failure(case: schemathesis.Case) -> None:
    """Writes a case that got a server error into the API corpus (``make fuzz`` only)."""
    body = case.body if isinstance(case.body, (dict, list, str, int, float, bool)) else None
    record: dict[str, Any] = {
        "method": case.method,
        "path": case.formatted_path,
        "query": case.query or {},
        "headers": {k: v for k, v in (case.headers or {}).items() if k != "Authorization"},
        "body": body,
        "media_type": case.media_type,
    }
    text = json.dumps(record, indent=1, default=str) + "\n"
    API_CORPUS.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    (API_CORPUS / f"{case.method.lower()}-{digest}.json").write_text(text, encoding="utf-8")


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    derandomize=not FUZZING,  # the same cases on every run of make test
    database=None,  # and no example database carried between runs
    deadline=None,  # a request's speed is make bench's business, not a test's
    # Generation health checks (slow or heavily filtered data for large schemas) would fail the
    # test for reasons that are not the API's; the check that matters is the status code.
    suppress_health_check=list(HealthCheck),
)
def test_no_request_gets_a_server_error(
    case: schemathesis.Case, bearer: dict[str, str], existing: dict[str, str]
) -> None:
    _name_existing_objects(case, existing)
    try:
        case.call_and_validate(headers=bearer, checks=[not_a_server_error])
    except Exception:
        if FUZZING:
            _keep_failure(case)
        raise
