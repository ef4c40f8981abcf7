"""``POST /v1/agents`` with the reference's agent files (``application/toml``) and its JSON
fields, ``415`` for any other body, and ``format`` on every definition served."""

from __future__ import annotations

import pytest

from editor.models import AgentDefinition
from tests.integration.api.callers import Caller, error_of, json_of

pytestmark = pytest.mark.django_db

DRAFTER = """\
# The reference's agent file.
model = "echo"
name = "drafter"
system_prompt = "Draft a note."

[budgets]
steps = 3
"""

#: The same agent in Gatehouse's own JSON fields.
DRAFTER_JSON = {"model": "echo", "name": "drafter", "prompt": "Draft a note.",
                "budget": {"max_steps": 3}}  # fmt: skip


def post_toml(api: Caller, text: str, content_type: str = "application/toml") -> object:
    return api.post("/v1/agents", text.encode(), content_type=content_type)


@pytest.mark.parametrize("content_type", ["application/toml", "text/toml; charset=utf-8"])
def test_an_agent_file_is_stored_under_the_hash_of_its_definition_and_kept_as_sent(
    api: Caller, content_type: str
) -> None:
    response = post_toml(api, DRAFTER, content_type)

    assert response.status_code == 201, response.content
    created = response.json()
    assert created["created"] is True
    same = api.post("/v1/agents", DRAFTER_JSON).json()
    assert same == {"agent": created["agent"], "created": False}
    stored = api.get(f"/v1/agents/{created['agent']}").json()
    assert stored["format"] == "toml"
    assert stored["source"] == DRAFTER
    assert stored["name"] == "drafter"
    assert stored["definition"] == {
        "model": "echo",
        "prompt": "Draft a note.",
        "tools": [],
        "options": {},
        "budget": {"max_steps": 3},
    }


def test_the_references_fields_are_read_as_json_too(api: Caller) -> None:
    response = api.post("/v1/agents", {"model": "echo", "system_prompt": "Draft a note.",
                                       "budgets": {"steps": 3}})  # fmt: skip

    assert response.status_code == 201
    stored = api.get(f"/v1/agents/{response.json()['agent']}").json()
    assert stored["format"] == "json" and "source" not in stored
    assert stored["definition"]["prompt"] == "Draft a note."


def test_an_agent_file_with_fields_gatehouse_does_not_offer_is_refused_naming_each(
    api: Caller,
) -> None:
    text = DRAFTER + '\n[llm]\nbase_url = "http://localhost:11434"\n\n[[wasm_tools]]\npath = "t"\n'

    response = post_toml(api, text)

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_agent"
    assert [(item["code"], item["field"]) for item in error["details"]["errors"]] == [
        ("unsupported_field", "wasm_tools"),
        ("malformed_definition", "llm"),
    ]
    assert not AgentDefinition.objects.exists()


def test_an_agent_file_that_is_not_toml_is_400_invalid_agent_never_a_json_error(
    api: Caller,
) -> None:
    response = post_toml(api, 'model = "echo"\nthis is not toml at all\n')

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_agent"
    assert "not valid TOML" in error["details"]["errors"][0]["message"]
    assert "JSON" not in error["message"]


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/yaml"]
)
def test_a_body_in_another_format_is_415(api: Caller, content_type: str) -> None:
    response = post_toml(api, DRAFTER, content_type)

    assert response.status_code == 415
    error = error_of(response)
    assert error["code"] == "unsupported_media_type"
    assert "`application/json` or `application/toml`" in error["message"]
    assert error["details"]["content_type"] == content_type


def test_the_whole_list_carries_each_definitions_format(api: Caller) -> None:
    post_toml(api, DRAFTER)
    api.post("/v1/agents", {"model": "echo", "prompt": "Other."})

    listed = json_of(api.get("/v1/agents"))["agents"]

    assert sorted(item["format"] for item in listed) == ["json", "toml"]


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ("a" + ".a" * 30_000 + " = 1\n", "", "a key has more than 16 parts"),
        ("x = " + "[" * 100_000 + "]" * 100_000 + "\n", "", "values nest more than 127 levels"),
        ("[budgets]\nsteps = " + "1" * 100_000 + "\n", "", "longer than the 64"),
        ("[output_schema]\nmaximum = nan\n", "output_schema.maximum", "`nan`"),
        (
            "[output_schema.properties.when]\ndefault = 1979-05-27\n",
            "output_schema.properties.when.default",
            "a TOML date",
        ),
        ("# padding\n" * 26_500, "", "over the 262144-byte cap"),  # under the body cap
    ],
    ids=["deep key", "deep arrays", "long integer", "nan", "date", "too large"],
)
def test_an_agent_file_built_to_break_the_parser_is_400_invalid_agent_naming_why(
    api: Caller, text: str, field: str, words: str
) -> None:
    response = post_toml(api, 'model = "echo"\n' + text)

    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "invalid_agent"
    (problem,) = error["details"]["errors"]
    assert problem["field"] == field
    assert words in problem["message"]
    assert not AgentDefinition.objects.exists()


@pytest.mark.parametrize("form", ["json", "toml"])
def test_an_agent_listing_the_structured_answers_tool_is_400_answer_tool_name_taken(
    api: Caller, form: str
) -> None:
    if form == "toml":
        response = post_toml(
            api, DRAFTER.replace("[budgets]", 'tools = ["salvor_answer"]\n\n[budgets]')
        )
    else:
        response = api.post("/v1/agents", {**DRAFTER_JSON, "tools": ["salvor_answer"]})

    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "invalid_agent"
    assert error["details"]["errors"] == [
        {
            "code": "answer_tool_name_taken",
            "message": "the tool name `salvor_answer` is reserved for the structured answer",
            "field": "tools",
        }
    ]
    assert not AgentDefinition.objects.exists()
