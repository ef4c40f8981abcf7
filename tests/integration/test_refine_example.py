"""The reference's ``examples/refine`` end to end, as its README tells it (issue 23's first *Done
when*): its ``tailor`` agent file registered, ``refine-notice.json`` opened through the
documents API, validated and frozen under the reference's own hash, and run by ``db_worker``
against a fake Anthropic Messages server playing the example's ``model-script.json``.

With ``input.json`` the fold converges on pass 1 (0.55, then 0.85 clears 0.8) and produces the
winning draft, ``[rev A2]``; with ``input-stubborn.json`` four passes score 0.41, 0.52, 0.58 and
0.61 and ``on_bound: fail`` fails the run with all four in the log and no convergence. Each pass
is the agent's structured loop: the model is offered ``salvor_answer`` with the node's schema
and made to call a tool. The example's files are read where they are, never copied in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings

from editor.services import installation
from tests.fake_anthropic import FakeAnthropic
from tests.integration.api.callers import Caller, bearer_caller
from tests.integration.mcp.servers import EXAMPLES
from tests.reference_examples import needs_examples

#: The runs' tests: a worker takes the run from the queue once its start has committed.
committed = pytest.mark.django_db(transaction=True)

REFINE = EXAMPLES / "refine"

pytestmark = [
    pytest.mark.django_db,
    needs_examples(*(REFINE / name for name in ("refine-notice.json", "model-script.json"))),
]

#: What the reference's README gives for ``salvor agent hash agents/tailor.toml``.
TAILOR_HASH = "sha256:6f92dceb3f50d6f86a8cdbe947a7a5c9fbd3944ff72b1afa02fe01228fd36714"
BOUND_MESSAGE = (
    "fold node `refine`: reached the max_iterations bound of 4 without `stop_when` holding, "
    "and this fold declares `on_bound: fail`"
)


def reference_hash(text: str) -> str:
    """The reference's graph hash, with the standard library alone: the SHA-256 of the
    document's canonical JSON (keys sorted, no spaces)."""
    canonical = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """The example's scripted model, where ``tailor.toml``'s ``[llm] base_url_env`` points,
    with that variable allowed as ``run.sh``'s environment has it."""
    with (
        FakeAnthropic.from_file(REFINE / "model-script.json") as server,
        override_settings(GATEHOUSE_LLM_ENV_ALLOW=["SALVOR_DEMO_BASE_URL"]),
    ):
        monkeypatch.setenv("SALVOR_DEMO_BASE_URL", server.base_url)
        installation.providers.cache_clear()  # built once per process, from the settings
        yield server
    installation.providers.cache_clear()


@pytest.fixture
def frozen(author: User) -> str:
    """The example registered and opened: the agent file, then the document through the
    documents API, checked valid and frozen. The frozen graph's hash."""
    api = bearer_caller(author)
    agent = api.post(
        "/v1/agents",
        (REFINE / "agents" / "tailor.toml").read_bytes(),
        content_type="application/toml",
    )
    assert agent.status_code == 201, agent.content
    assert agent.json()["agent"] == TAILOR_HASH  # the hash the document names
    text = (REFINE / "refine-notice.json").read_text(encoding="utf-8")
    opened = api.post("/v1/documents", {"title": "Refine the notice", "text": text})
    assert opened.status_code == 201, opened.content
    slug = opened.json()["slug"]
    assert opened.json()["draft"]["valid"] is True
    draft = api.get(f"/v1/documents/{slug}/draft").json()
    assert draft["text"] == text  # opened as the reference wrote it
    assert draft["validation"]["valid"] is True
    assert draft["validation"]["graph"] == reference_hash(text)
    summary = draft["validation"]["summary"]
    assert (summary["node_count"], summary["edge_count"]) == (2, 0)  # the README's validate
    assert summary["entry_nodes"] == summary["terminal_nodes"] == ["refine", "tailor"]
    revision = draft["revision"]
    freeze = api.post(f"/v1/documents/{slug}/freeze", {}, headers={"If-Match": f'"{revision}"'})
    assert freeze.status_code == 201, freeze.content
    graph = freeze.json()["graph"]
    assert graph == reference_hash(text)  # frozen under the reference's own hash
    return str(graph)


def run_example(operator: User, graph: str, input_file: str) -> tuple[Caller, str]:
    """Start the run with the example's input file and let a worker drive it until the queue
    is empty; the operator's caller and the run's id."""
    api = bearer_caller(operator)
    run_input = json.loads((REFINE / input_file).read_text(encoding="utf-8"))
    started = api.post("/v1/graph-runs", {"graph_hash": graph, "input": run_input})
    assert started.status_code == 201, started.content
    call_command("db_worker", batch=True, no_startup_delay=True, reload=False)
    return api, started.json()["run"]


def log_of(api: Caller, run_id: str) -> list[dict[str, Any]]:
    response = api.get(f"/v1/runs/{run_id}/events")
    assert response.status_code == 200, response.content
    return [envelope["event"] for envelope in response.json()["events"]]


def answers(model: FakeAnthropic) -> list[dict[str, Any]]:
    """Each model request as the structured loop sent it: the tools offered and the choice."""
    return [
        {"tools": [tool["name"] for tool in request.body["tools"]], **request.body["tool_choice"]}
        for request in model.requests
    ]


def test_the_refine_document_opens_in_the_editor_valid(author: User, client: Client) -> None:
    text = (REFINE / "refine-notice.json").read_text(encoding="utf-8")
    api = bearer_caller(author)
    slug = api.post("/v1/documents", {"title": "Refine", "text": text}).json()["slug"]
    client.force_login(author)

    page = client.get(f"/graphs/{slug}/")

    assert page.status_code == 200
    body = page.content.decode()
    assert "Refine the notice to the desk threshold" in body  # the fold's name
    assert "tailor" in body


@committed
def test_the_refine_example_converges_on_pass_1_with_the_winning_draft(
    model: FakeAnthropic, frozen: str, operator: User
) -> None:
    api, run_id = run_example(operator, frozen, "input.json")

    status = api.get(f"/v1/runs/{run_id}").json()["status"]
    assert status["state"] == "completed", status
    assert status["output"]["score"] == 0.85
    assert status["output"]["draft"].endswith("[rev A2]")
    log = log_of(api, run_id)
    kinds = [event["kind"] for event in log]
    assert kinds.count("FoldIterationStarted") == 2  # passes 2 and 3 never asked for
    (converged,) = [event["payload"] for event in log if event["kind"] == "FoldConverged"]
    assert converged["winner_index"] == 1
    scores = [
        event["payload"]["output"]["score"]
        for event in log
        if event["kind"] == "NodeExited" and event["payload"]["node"] == "tailor"
    ]
    assert scores == [0.55, 0.85]  # the losing pass stays in the log beside the winner
    # One model call a pass, each offered salvor_answer and made to call a tool.
    assert answers(model) == [{"tools": ["salvor_answer"], "type": "any"}] * 2
    schema = model.requests[0].body["tools"][0]["input_schema"]
    assert schema["required"] == ["draft", "score"]
    assert "rev A1" in json.dumps(model.requests[1].body["messages"])  # pass 1 reads pass 0


@committed
def test_the_stubborn_notice_fails_at_the_bound_with_all_four_passes_in_the_log(
    model: FakeAnthropic, frozen: str, operator: User
) -> None:
    api, run_id = run_example(operator, frozen, "input-stubborn.json")

    status = api.get(f"/v1/runs/{run_id}").json()["status"]
    assert status == {"state": "failed", "error": BOUND_MESSAGE, "code": "fold_bound_exceeded"}
    log = log_of(api, run_id)
    kinds = [event["kind"] for event in log]
    assert kinds.count("FoldIterationJoined") == 4
    assert "FoldConverged" not in kinds
    assert not [e for e in log if e["kind"] == "NodeExited" and e["payload"]["node"] == "refine"]
    assert kinds[-1] == "RunFailed"
    scores = [
        event["payload"]["output"]["score"]
        for event in log
        if event["kind"] == "NodeExited" and event["payload"]["node"] == "tailor"
    ]
    assert scores == [0.41, 0.52, 0.58, 0.61]
    assert len(model.requests) == 4
