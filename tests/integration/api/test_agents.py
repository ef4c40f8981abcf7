"""``/v1/agents``: agent definitions stored by ``agent_def_hash``."""

from __future__ import annotations

from typing import Any

import pytest

from editor.graph import agent_def_hash, hash_value, parse_agent_definition
from editor.models import AgentDefinition
from tests.integration.api.callers import Caller, as_bytes, error_of, json_of

pytestmark = pytest.mark.django_db

RESEARCHER = {"name": "Researcher", "model": "echo", "prompt": "Find sources."}


def hash_of(definition: dict[str, Any]) -> str:
    return agent_def_hash(parse_agent_definition(as_bytes(definition)))


def post_agent(api: Caller, definition: Any) -> dict[str, Any]:
    response = api.post("/v1/agents", definition)
    assert response.status_code == 201, response.content
    return response.json()


def test_posting_a_definition_stores_it_under_its_hash(api: Caller) -> None:
    response = api.post("/v1/agents", RESEARCHER)

    assert response.status_code == 201
    assert response.json() == {"agent": hash_of(RESEARCHER), "created": True}
    assert AgentDefinition.objects.get().name == "Researcher"


def test_posting_the_same_definition_again_stores_nothing(api: Caller) -> None:
    first = post_agent(api, RESEARCHER)
    spelled_out = {**RESEARCHER, "tools": [], "options": {}}

    again = post_agent(api, spelled_out)

    assert again == {"agent": first["agent"], "created": False}
    assert AgentDefinition.objects.count() == 1


def test_posting_the_same_definition_under_a_new_name_renames_it(api: Caller) -> None:
    first = post_agent(api, RESEARCHER)

    renamed = post_agent(api, {**RESEARCHER, "name": "Scout"})

    assert renamed == {"agent": first["agent"], "created": False}
    assert api.get(f"/v1/agents/{first['agent']}").json()["name"] == "Scout"


def test_posting_it_without_a_name_keeps_the_name(api: Caller) -> None:
    first = post_agent(api, RESEARCHER)
    unnamed = {key: value for key, value in RESEARCHER.items() if key != "name"}

    post_agent(api, unnamed)

    assert api.get(f"/v1/agents/{first['agent']}").json()["name"] == "Researcher"


def test_a_definition_is_answered_with_its_name_and_hashed_form(api: Caller) -> None:
    digest = post_agent(api, {**RESEARCHER, "budget": {"max_steps": 3}})["agent"]

    response = api.get(f"/v1/agents/{digest}")

    assert response.status_code == 200
    body = response.json()
    assert body == {
        "agent": digest,
        "name": "Researcher",
        "format": "json",
        "definition": {
            "model": "echo",
            "prompt": "Find sources.",
            "tools": [],
            "options": {},
            "budget": {"max_steps": 3},
        },
    }
    assert hash_value(body["definition"]) == digest


def test_an_unnamed_definition_has_a_null_name(api: Caller) -> None:
    digest = post_agent(api, {"model": "echo", "prompt": ""})["agent"]

    assert api.get(f"/v1/agents/{digest}").json()["name"] is None


def test_the_list_is_sorted_by_name_and_pages(api: Caller) -> None:
    for name in ("charlie", "alpha", "bravo"):
        post_agent(api, {"name": name, "model": "echo", "prompt": name})

    everything = json_of(api.get("/v1/agents"))
    first = api.get("/v1/agents?limit=2").json()
    rest = api.get(f"/v1/agents?limit=2&cursor={first['next']}").json()

    assert [item["name"] for item in everything["agents"]] == ["alpha", "bravo", "charlie"]
    assert "next" not in everything
    assert set(everything["agents"][0]) == {"agent", "name", "format", "definition"}
    assert [item["name"] for item in first["agents"] + rest["agents"]] == [
        "alpha",
        "bravo",
        "charlie",
    ]
    assert rest["next"] is None


def test_a_bad_definition_is_400_invalid_agent_with_every_problem(api: Caller) -> None:
    response = api.post(
        "/v1/agents", {"name": "  ", "model": "gpt", "prompt": "x", "colour": "red"}
    )

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_agent"
    codes = sorted(problem["code"] for problem in error["details"]["errors"])
    assert codes == ["blank_agent_name", "malformed_definition", "unknown_model"]
    for problem in error["details"]["errors"]:
        assert set(problem) == {"code", "message", "field"}
    assert not AgentDefinition.objects.exists()


def test_a_scripted_agent_without_replies_is_refused(api: Caller) -> None:
    response = api.post("/v1/agents", {"model": "scripted", "prompt": ""})

    assert response.status_code == 400
    [problem] = error_of(response)["details"]["errors"]
    assert problem["code"] == "missing_replies"


@pytest.mark.parametrize("body", [b"", b"not json", b"[]", b"\xff", b"[" * 2000])
def test_a_body_that_is_not_a_definition_is_400_invalid_agent(api: Caller, body: bytes) -> None:
    response = api.post("/v1/agents", body)

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_agent"
    assert error["details"]["errors"][0]["code"] == "malformed_definition"


@pytest.mark.parametrize(
    "digest", ["sha256:" + "0" * 64, "sha256:nope", "Researcher", "sha256:" + "F" * 64]
)
def test_an_unknown_or_malformed_agent_hash_is_404_unknown_agent(api: Caller, digest: str) -> None:
    response = api.get(f"/v1/agents/{digest}")

    assert response.status_code == 404
    assert error_of(response)["code"] == "unknown_agent"
