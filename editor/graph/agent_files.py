"""The reference's agent files (TOML, or the same fields as JSON) read into a definition.

The reference's parser is ``salvor_cli_core::agent_config`` (``AgentConfig::from_toml_str``):
unknown fields are refused, and so are the fields it knows that have no meaning on this server.
What maps here:

========================  ===========================================================
reference field           Gatehouse definition
========================  ===========================================================
``model``                 ``model`` (one this installation has: ``echo``, ``scripted``,
                          ``openai:<name>``, ``claude-…``)
``name``                  ``name`` (not hashed)
``system_prompt``         ``prompt`` (absent: empty)
``llm``                   ``llm`` (``base_url_env``, ``api_key_env``, ``api_key_kind``,
                          ``max_retries``, ``timeout_seconds``; ``base_url`` only as the
                          public endpoint)
``budgets.steps``         ``budget.max_steps``
``budgets.tokens``        ``budget.max_tokens``
``budgets.cost_usd``      ``budget.max_cost_usd`` (needs ``pricing``)
``budgets.wall_time_…``   ``budget.max_wall_time_seconds``
``pricing``               ``pricing``
``max_response_tokens``   ``max_response_tokens``
``output_schema``         ``output_schema``
``record_prompts``        ``record_prompts``
========================  ===========================================================

Two of Gatehouse's own fields are read beside them: ``tools`` (names from the registry,
``GET /v1/tools``) and ``options`` (the scripted model's ``replies``).

``[[mcp_servers]]`` is not read here: :func:`editor.graph.reference_agents.read_mcp_servers`
reads each entry (``command``/``args`` or ``url``, ``effect_overrides``, ``idempotency_keys``;
never an ``env`` or ``cwd`` of its own), and the services match it against the operator's
catalogue (``GATEHOUSE_MCP_SERVERS``: an entry naming no catalogue server is refused with
``unknown_mcp_server``), its servers' tools becoming the definition's. :func:`parse_reference_agent`
leaves the field to that path and maps the rest.

The other fields the reference knows are refused with ``unsupported_field``, naming each and
why: WebAssembly components (``wasm_tools``: name tools from the registry instead), and prompts
and schemas from files beside the agent file (``*_path``). Which variables ``[llm]`` may name is
the installation's (``GATEHOUSE_LLM_ENV_ALLOW``), checked where the settings are.

An agent file is read safely whoever sends it: at most :data:`MAX_AGENT_FILE_BYTES`, then
:func:`editor.graph.toml_scan.scan_toml` bounds its keys, nesting and bare values before
``tomllib`` reads it, and what ``tomllib`` reads must be JSON (no date, time, ``nan`` or
``inf``, integers in 64 bits), each value refused naming its key path. Every failure is an
:class:`InvalidAgentDefinition` naming what is wrong.
"""

from __future__ import annotations

import datetime
import math
import tomllib
from typing import Any

from editor.graph.agents import AgentDefinition, parse_agent_definition
from editor.graph.errors import InvalidAgentDefinition
from editor.graph.toml_scan import TomlTooComplex, scan_toml

__all__ = [
    "GATEHOUSE_ONLY_FIELDS",
    "MAX_AGENT_FILE_BYTES",
    "is_reference_definition",
    "parse_reference_agent",
    "read_agent_toml",
]

#: The largest agent file read (the reference's examples are a few kilobytes).
MAX_AGENT_FILE_BYTES = 256 * 1024
#: TOML integers are 64-bit (TOML 1.0, *Integer*); ``tomllib`` reads any length.
_I64 = (-(2**63), 2**63 - 1)

#: The fields of the reference's ``AgentConfig``, in its order.
REFERENCE_FIELDS = (
    "model",
    "name",
    "system_prompt",
    "system_prompt_path",
    "llm",
    "budgets",
    "pricing",
    "max_response_tokens",
    "output_schema",
    "output_schema_path",
    "mcp_servers",
    "wasm_tools",
    "record_prompts",
)
_BUDGET_FIELDS = ("steps", "tokens", "cost_usd", "wall_time_seconds")
#: Fields only Gatehouse's own definition has: a JSON body with one of them is read as ours.
GATEHOUSE_ONLY_FIELDS = ("prompt", "budget", "options")
#: Gatehouse's fields read beside the reference's (it has no way to name this server's tools).
_EXTENSIONS = ("tools", "options")

_WHY_UNSUPPORTED = {
    "system_prompt_path": "a file beside the agent file means nothing to this server: "
    "give the prompt inline as `system_prompt`",
    "output_schema_path": "a file beside the agent file means nothing to this server: "
    "give the schema inline as `[output_schema]`",
    "wasm_tools": "this server runs no WebAssembly tools (nor their `idempotency_key`); "
    "name tools from this installation's registry in `tools` (GET /v1/tools)",
}


def _unsupported(field: str) -> dict[str, str]:
    return {
        "code": "unsupported_field",
        "message": f"`{field}` is not supported here: {_WHY_UNSUPPORTED[field]}",
        "field": field,
    }


def _malformed(message: str, field: str) -> dict[str, str]:
    return {"code": "malformed_definition", "message": message, "field": field}


def read_agent_toml(data: bytes | str) -> dict[str, Any]:
    """An agent file's TOML as a table of JSON values; raises :class:`InvalidAgentDefinition`
    (the file too large, too deep or too long to read, not TOML, or holding a value JSON has
    no form for)."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > MAX_AGENT_FILE_BYTES:
        raise InvalidAgentDefinition(
            [
                {
                    "code": "agent_file_too_large",
                    "message": f"the agent file is {size} bytes, over the "
                    f"{MAX_AGENT_FILE_BYTES}-byte cap",
                    "field": "",
                }
            ]
        )
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as error:
        raise InvalidAgentDefinition(
            [_malformed(f"the agent file is not UTF-8 text: {error.reason}", "")]
        ) from None
    try:
        scan_toml(text)
    except TomlTooComplex as error:
        raise InvalidAgentDefinition(
            [_malformed(f"the agent file is not read: {error}", "")]
        ) from None
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InvalidAgentDefinition(
            [_malformed(f"the agent file is not valid TOML: {error}", "")]
        ) from None
    except (ValueError, RecursionError) as error:
        # What the scan bounds should never get here; if it does, it is still the file's fault.
        raise InvalidAgentDefinition(
            [_malformed(f"the agent file is not valid TOML: {error}", "")]
        ) from None
    problems = _not_json(table)
    if problems:
        raise InvalidAgentDefinition(problems)
    return table


def _not_json(table: dict[str, Any]) -> list[dict[str, str]]:
    """Every value of a TOML table that has no JSON form, located by its key path
    (``output_schema.properties.when.default``; array items as ``replies[0]``)."""
    problems: list[dict[str, str]] = []
    stack: list[tuple[str, Any]] = [("", table)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(
                (f"{path}.{key}" if path else key, item) for key, item in reversed(value.items())
            )
        elif isinstance(value, list):
            stack.extend(
                (f"{path}[{index}]", item) for index, item in reversed(list(enumerate(value)))
            )
        else:
            why = _why_not_json(value)
            if why is not None:
                problems.append(
                    {"code": "not_json_value", "message": f"`{path}` is {why}", "field": path}
                )
    return problems


def _why_not_json(value: Any) -> str | None:
    if isinstance(value, datetime.datetime):
        kind = "a TOML date-time"
    elif isinstance(value, datetime.date):
        kind = "a TOML date"
    elif isinstance(value, datetime.time):
        kind = "a TOML time"
    elif isinstance(value, float) and not math.isfinite(value):
        return f"`{value}`, a number JSON cannot hold: write a finite number"
    elif isinstance(value, int) and not isinstance(value, bool) and not _I64[0] <= value <= _I64[1]:
        return "an integer outside the 64 bits TOML integers have"
    else:
        return None
    return f'{kind}, which JSON has no form for: write it as a string ("{value.isoformat()}")'


def is_reference_definition(raw: Any) -> bool:
    """Whether a JSON definition is written in the reference's fields rather than ours."""
    return isinstance(raw, dict) and not any(key in raw for key in GATEHOUSE_ONLY_FIELDS)


def _budget(raw: Any, errors: list[dict[str, str]]) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        errors.append(_malformed("`budgets` must be a table", "budgets"))
        return None
    budget: dict[str, Any] = {}
    for key, value in raw.items():
        where = f"budgets.{key}"
        if key not in _BUDGET_FIELDS:
            expected = ", ".join(f"`{name}`" for name in _BUDGET_FIELDS)
            errors.append(
                _malformed(f"unknown field `{key}` in `budgets`, expected {expected}", where)
            )
        else:
            budget[f"max_{key}"] = value
    return budget


def parse_reference_agent(raw: Any) -> AgentDefinition:
    """A reference agent file's fields (a TOML table, or the same as a JSON object) as a
    definition; raises :class:`InvalidAgentDefinition` listing every problem: the unsupported
    and unknown fields, then whatever Gatehouse's own definition refuses in what maps.
    ``mcp_servers`` is the caller's to read and match (see the module's docs): it adds nothing
    and refuses nothing here."""
    if not isinstance(raw, dict):
        raise InvalidAgentDefinition(
            [_malformed("an agent definition must be a table of fields", "")]
        )
    errors: list[dict[str, str]] = []
    for key in raw:
        if key in _WHY_UNSUPPORTED:
            errors.append(_unsupported(key))
        elif key not in REFERENCE_FIELDS and key not in _EXTENSIONS:
            known = ", ".join(f"`{name}`" for name in (*REFERENCE_FIELDS, *_EXTENSIONS))
            errors.append(_malformed(f"unknown field `{key}`, expected one of {known}", key))
    mapped: dict[str, Any] = {"prompt": raw.get("system_prompt", "")}
    for key in (
        "model",
        "name",
        "output_schema",
        "llm",
        "pricing",
        "max_response_tokens",
        "record_prompts",
        *_EXTENSIONS,
    ):
        if key in raw:
            mapped[key] = raw[key]
    if "system_prompt" in raw and not isinstance(raw["system_prompt"], str):
        errors.append(_malformed("`system_prompt` must be a string", "system_prompt"))
        mapped["prompt"] = ""
    budget = _budget(raw.get("budgets"), errors)
    if budget:
        mapped["budget"] = budget
    try:
        definition = parse_agent_definition(mapped)
    except InvalidAgentDefinition as error:
        errors += [_reference_names(problem) for problem in error.errors]
    if errors:
        raise InvalidAgentDefinition(errors)
    return definition


def _reference_names(problem: dict[str, str]) -> dict[str, str]:
    """A problem Gatehouse's definition found, located by the reference's field names."""
    field = problem.get("field", "")
    renamed = {"prompt": "system_prompt"}.get(field, field)
    if renamed.startswith("budget.max_"):
        renamed = "budgets." + renamed.removeprefix("budget.max_")
    message = problem["message"]
    if renamed != field:
        message = message.replace(f"`{field}`", f"`{renamed}`")
    return {**problem, "message": message, "field": renamed}
