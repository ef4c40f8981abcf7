"""The reference's agent files read into Gatehouse definitions (``editor.graph.agent_files``).

The refused files are the reference's own examples (``crates/salvor-cli-wasm/fixtures/agents/``
in its repository), as they are there: each is refused here too, naming every field that has no
meaning on this server (and the models this installation does not have).
"""

from __future__ import annotations

import pytest

from editor.graph import InvalidAgentDefinition, agent_def_hash, parse_agent_definition
from editor.graph.agent_files import (
    is_reference_definition,
    parse_reference_agent,
    read_agent_toml,
)

FULL = """\
model = "scripted"
name = "reviewer"
system_prompt = "Review the draft."
record_prompts = false
tools = ["echo"]

[options]
replies = ["Looks good."]

[budgets]
steps = 4
tokens = 2000

[output_schema]
type = "object"
required = ["score"]

[output_schema.properties.score]
type = "number"
"""


def read(text: str) -> object:
    return parse_reference_agent(read_agent_toml(text))


def problems(text: str) -> list[tuple[str, str]]:
    with pytest.raises(InvalidAgentDefinition) as refused:
        read(text)
    return [(error["code"], error["field"]) for error in refused.value.errors]


def test_every_field_with_a_meaning_here_is_mapped() -> None:
    definition = read(FULL)

    assert definition == parse_agent_definition(
        {
            "model": "scripted",
            "name": "reviewer",
            "prompt": "Review the draft.",
            "tools": ["echo"],
            "options": {"replies": ["Looks good."]},
            "budget": {"max_steps": 4, "max_tokens": 2000},
            "output_schema": {
                "type": "object",
                "required": ["score"],
                "properties": {"score": {"type": "number"}},
            },
        }
    )


def test_the_name_is_not_hashed_and_a_missing_prompt_is_empty() -> None:
    named = read('model = "echo"\nname = "a"\n')
    renamed = read('model = "echo"\nname = "b"\n')

    assert agent_def_hash(named) == agent_def_hash(renamed)
    assert named.prompt == ""


def test_a_definition_without_an_output_schema_hashes_as_before() -> None:
    plain = parse_agent_definition({"model": "echo", "prompt": "p"})

    assert "output_schema" not in plain.identity()
    assert agent_def_hash(read('model = "echo"\nsystem_prompt = "p"\n')) == agent_def_hash(plain)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "hero.toml",
            'model = "claude-opus-4-8"\nname = "salvage-claim"\nsystem_prompt = "x"\n\n'
            '[llm]\nbase_url_env = "SALVOR_HERO_BASE_URL"\n\n[budgets]\nsteps = 24\n'
            'tokens = 400000\n\n[[wasm_tools]]\npath = "hero.wasm"\nname = "save_claim"\n',
            [("unsupported_field", "wasm_tools")],
        ),
        (
            "keys.toml",
            'model = "m"\n\n[[mcp_servers]]\ncommand = "payouts"\n'
            'idempotency_keys = { pay_claim = "claim_id", refund = "payment.charge_id" }\n',
            [("unknown_model", "model")],  # the servers are matched elsewhere
        ),
        (
            "local_model.toml",
            'model = "llama3.2"\nsystem_prompt = "x"\n\n[llm]\nbase_url = "http://localhost:11434"\n'
            'api_key_env = "SALVOR_LOCAL_MODEL_API_KEY"\n\n[budgets]\nsteps = 5\ntokens = 20000\n'
            "wall_time_seconds = 120\n",
            [("unknown_model", "model"), ("llm_base_url_refused", "llm.base_url")],
        ),
        (
            "bad_both_output_schemas.toml",
            'model = "m"\noutput_schema_path = "answer.json"\n\n[output_schema]\ntype = "object"\n',
            [("unsupported_field", "output_schema_path"), ("unknown_model", "model")],
        ),
        (
            "bad_both_prompts.toml",
            'model = "m"\nsystem_prompt = "inline"\nsystem_prompt_path = "prompt.txt"\n',
            [("unsupported_field", "system_prompt_path"), ("unknown_model", "model")],
        ),
        (
            "bad_unknown_field.toml",
            'model = "claude-opus-4-8"\n[budgets]\nstep = 3\n',
            [("malformed_definition", "budgets.step")],
        ),
        (
            "bad_wasm_without_effect.toml",
            'model = "m"\n\n[[wasm_tools]]\npath = "t.wasm"\nname = "t"\ndescription = "d"\n'
            'input_schema = "{}"\n',
            [("unsupported_field", "wasm_tools"), ("unknown_model", "model")],
        ),
    ],
)
def test_the_references_own_files_are_refused_naming_every_field_without_a_meaning_here(
    name: str, text: str, expected: list[tuple[str, str]]
) -> None:
    assert problems(text) == expected, name


def test_each_refusal_says_why_and_what_to_do_instead() -> None:
    with pytest.raises(InvalidAgentDefinition) as refused:
        read('model = "echo"\n[[wasm_tools]]\npath = "x.wasm"\n')

    messages = [error["message"] for error in refused.value.errors]
    assert messages[0].startswith("`wasm_tools` is not supported here: this server runs no")
    assert "`tools` (GET /v1/tools)" in messages[0]


def test_mcp_servers_are_left_to_the_catalogue_matching_not_refused_here() -> None:
    definition = read('model = "echo"\n[[mcp_servers]]\ncommand = "x"\n')

    assert definition.tools == ()  # their tools come from the matched catalogue server


def test_a_file_that_is_not_toml_is_refused_as_such() -> None:
    with pytest.raises(InvalidAgentDefinition) as refused:
        read_agent_toml('model = "m"\nthis is not toml at all\n')

    (error,) = refused.value.errors
    assert error["code"] == "malformed_definition"
    assert error["message"].startswith("the agent file is not valid TOML: ")


def test_recording_prompts_can_be_declined_or_asked_for() -> None:
    assert read('model = "echo"\nrecord_prompts = false\n').record_prompts is False
    assert read('model = "echo"\nrecord_prompts = true\n').record_prompts is True
    assert problems('model = "echo"\nrecord_prompts = "yes"\n') == [
        ("malformed_definition", "record_prompts")
    ]


def test_an_unknown_field_is_refused_not_ignored() -> None:
    assert problems('model = "echo"\nmodle = "typo"\n') == [("malformed_definition", "modle")]


def test_problems_in_what_maps_are_named_by_the_references_fields() -> None:
    with pytest.raises(InvalidAgentDefinition) as refused:
        read('model = "echo"\nsystem_prompt = 3\n[budgets]\nsteps = 0\n')

    assert [(error["field"], error["message"]) for error in refused.value.errors] == [
        ("system_prompt", "`system_prompt` must be a string"),
        ("budgets.steps", "`budgets.steps` must be an integer in 1..=4294967295"),
    ]


def test_an_output_schema_must_be_a_table_holding_a_json_schema() -> None:
    assert problems('model = "echo"\noutput_schema = "number"\n') == [
        ("malformed_definition", "output_schema")
    ]
    assert problems('model = "echo"\n[output_schema]\ntype = 5\n') == [
        ("invalid_output_schema", "output_schema")
    ]


@pytest.mark.parametrize(
    ("body", "reference"),
    [
        ({"model": "echo", "system_prompt": "p"}, True),
        ({"model": "echo"}, True),
        ({"model": "echo", "prompt": "p"}, False),
        ({"model": "echo", "budget": {}}, False),
        ([], False),
    ],
)
def test_a_json_body_is_read_in_the_references_fields_unless_it_uses_ours(
    body: object, reference: bool
) -> None:
    assert is_reference_definition(body) is reference


@pytest.mark.parametrize(
    ("schema", "code"),
    [
        ('"$ref" = "https://schemas.example/answer"', "schema_reference_not_local"),
        ('"$ref" = "#/$defs/missing"', "schema_reference_dangling"),
        ('type = "string"\npattern = "(a)\\\\1"', "schema_pattern_unsupported"),
        ('"$schema" = "http://json-schema.org/draft-07/schema#"', "schema_dialect_unsupported"),
    ],
)
def test_an_output_schema_is_read_in_a_closed_world_as_node_schemas_are(
    schema: str, code: str
) -> None:
    with pytest.raises(InvalidAgentDefinition) as refused:
        read(f'model = "echo"\n[output_schema]\n{schema}\n')

    (error,) = refused.value.errors
    assert (error["code"], error["field"]) == (code, "output_schema")
    assert error["message"].startswith("`output_schema` ")


def test_an_output_schema_of_too_many_subschemas_is_refused_before_it_is_checked() -> None:
    with pytest.raises(InvalidAgentDefinition) as refused:
        parse_agent_definition(
            {"model": "echo", "prompt": "", "output_schema": {"allOf": [{}] * 20_000}}
        )

    (error,) = refused.value.errors
    assert error["code"] == "schemas_too_large"
    assert "more than 10000 subschemas" in error["message"]


CLAUDE = """\
model = "claude-opus-4-8"
name = "notify-summary"
system_prompt = "You are the notify-summary writer."
max_response_tokens = 1024
record_prompts = true

[llm]
base_url = "https://api.anthropic.com/"
base_url_env = "SALVOR_DEMO_BASE_URL"
api_key_env = "TEAM_KEY"
api_key_kind = "api_key"
max_retries = 3
timeout_seconds = 30

[budgets]
steps = 10
tokens = 20000
cost_usd = 0.5
wall_time_seconds = 90.5

[pricing]
input_per_mtok = 3
output_per_mtok = 15.0
"""


def test_the_model_fields_of_the_reference_map_onto_the_definition() -> None:
    definition = read(CLAUDE)

    assert definition.model == "claude-opus-4-8"
    assert definition.llm == {
        "base_url": "https://api.anthropic.com",
        "base_url_env": "SALVOR_DEMO_BASE_URL",
        "api_key_env": "TEAM_KEY",
        "max_retries": 3,
        "timeout_seconds": 30,
    }
    assert definition.budget == {
        "max_steps": 10,
        "max_tokens": 20000,
        "max_cost_usd": 0.5,
        "max_wall_time_seconds": 90.5,
    }
    assert definition.pricing == {"input_per_mtok": 3, "output_per_mtok": 15.0}
    assert (definition.max_response_tokens, definition.record_prompts) == (1024, True)
    # hashed as the other fields are, and read back from the stored form unchanged
    assert parse_agent_definition(definition.identity()).identity() == definition.identity()


def test_a_definition_without_the_model_fields_hashes_as_before() -> None:
    plain = read('model = "echo"\nsystem_prompt = "p"\n[llm]\n')

    assert set(plain.identity()) == {"model", "prompt", "tools", "options"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[llm]\nbase_url = "http://10.0.0.1"\n', [("llm_base_url_refused", "llm.base_url")]),
        ('[llm]\nbase_url_env = "not a name"\n', [("malformed_definition", "llm.base_url_env")]),
        ('[llm]\napi_key_kind = "token"\n', [("malformed_definition", "llm.api_key_kind")]),
        ("[llm]\nmax_retries = 99\n", [("malformed_definition", "llm.max_retries")]),
        ('[llm]\nkey = "sk-..."\n', [("malformed_definition", "llm.key")]),
        ("[pricing]\ninput_per_mtok = -1\n", [
            ("malformed_definition", "pricing.input_per_mtok"),
            ("malformed_definition", "pricing.output_per_mtok")]),
        ("[budgets]\ncost_usd = 1.0\n", [("missing_pricing", "pricing")]),
        ("[budgets]\nwall_time_seconds = 0\n", [
            ("malformed_definition", "budgets.wall_time_seconds")]),
        ("max_response_tokens = 0\n", [("malformed_definition", "max_response_tokens")]),
    ],
)  # fmt: skip
def test_the_model_fields_are_checked_one_by_one(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert problems('model = "claude-opus-4-8"\n' + text) == expected


def test_llm_means_nothing_to_the_offline_models() -> None:
    assert problems('model = "echo"\n[llm]\nbase_url_env = "X"\n') == [
        ("malformed_definition", "llm")
    ]
