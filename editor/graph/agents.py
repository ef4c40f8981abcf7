"""Agent definitions and ``agent_def_hash`` (spec 01, *Agent definitions*).

A definition is parsed as strictly as a graph. Its identity is the hash of its
canonical form **without** ``name``, so renaming an agent keeps its identity
(seed 000). Defaults are written out before hashing (``tools`` ``[]``,
``options`` ``{}``; an empty ``budget`` is dropped), so two spellings of the same
definition have one hash. ``output_schema`` (the shape of the agent's answer, as in the
reference's agent files) is hashed when it is set; a definition without one hashes as before,
and so are ``llm``, ``pricing``, ``max_response_tokens`` and ``record_prompts`` (the reference's
``[llm]`` and the fields beside it; ``budget`` also takes ``max_cost_usd`` and
``max_wall_time_seconds``). ``llm`` names environment variables, never values: which of them an
installation lets an agent read is the caller's check (:func:`llm_env_problems`).
It is read as node schemas are: valid Draft 2020-12, at most ``MAX_DOCUMENT_SUBSCHEMAS``
subschemas, and nothing the closed-world reading refuses (E10's codes: outside or recursive
references, patterns RE2 cannot run, another dialect).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from editor.graph.closed_schemas import count_subschemas, schema_findings
from editor.graph.errors import InvalidAgentDefinition, JsonError
from editor.graph.jsonio import hash_value, read_json
from editor.graph.model import U32_MAX
from editor.graph.text import is_blank
from editor.graph.validation.schemas import MAX_DOCUMENT_SUBSCHEMAS, schema_problem

__all__ = [
    "ANTHROPIC_PREFIX",
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_LLM_BASE_URL",
    "AgentDefinition",
    "agent_def_hash",
    "llm_env_problems",
    "parse_agent_definition",
]

MAX_AGENT_NAME_LENGTH = 64
FIXED_MODELS = ("echo", "scripted")
OPENAI_PREFIX = "openai:"
ANTHROPIC_PREFIX = "claude-"
_KEYS = (
    "name",
    "model",
    "prompt",
    "tools",
    "budget",
    "options",
    "output_schema",
    "llm",
    "pricing",
    "max_response_tokens",
    "record_prompts",
)
_INTEGER_BUDGETS = ("max_steps", "max_tokens")
_NUMBER_BUDGETS = ("max_cost_usd", "max_wall_time_seconds")
_BUDGET_KEYS = (*_INTEGER_BUDGETS, *_NUMBER_BUDGETS)
#: ``llm`` as the reference's ``[llm]`` table has it (``salvor_cli_core::agent_config::LlmConfig``).
LLM_KEYS = (
    "base_url",
    "base_url_env",
    "api_key_env",
    "api_key_kind",
    "max_retries",
    "timeout_seconds",
)
#: The one literal ``base_url`` an agent may name: the public endpoint (the reference's
#: default). Any other endpoint comes from a variable the operator allows (``base_url_env``),
#: so an author cannot send this installation's key to an address of their choosing.
DEFAULT_LLM_BASE_URL = "https://api.anthropic.com"
DEFAULT_API_KEY_ENV = "ANTHROPIC_API_KEY"
_API_KEY_KINDS = ("api_key", "oauth")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    model: str
    prompt: str
    name: str | None = None
    tools: tuple[str, ...] = ()
    budget: dict[str, int | float] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    #: A JSON Schema every answer of the agent must satisfy (an agent node's own
    #: ``output_schema`` wins over it).
    output_schema: dict[str, Any] | None = None
    #: How a ``claude-…`` model is reached (the reference's ``[llm]``: variable *names*, never
    #: a URL of the author's or a key).
    llm: dict[str, Any] = field(default_factory=dict)
    #: Dollars per million tokens, ``{"input_per_mtok", "output_per_mtok"}``: what a cost
    #: budget is counted in.
    pricing: dict[str, float] | None = None
    #: The ``max_tokens`` each request asks for (the provider's default when unset).
    max_response_tokens: int | None = None
    #: Record each model request on its ``ModelCallRequested`` event.
    record_prompts: bool = False

    def identity(self) -> dict[str, Any]:
        """The hashed form: everything but ``name``, defaults written out."""
        value: dict[str, Any] = {
            "model": self.model,
            "prompt": self.prompt,
            "tools": list(self.tools),
            "options": self.options,
        }
        if self.budget:
            value["budget"] = dict(self.budget)
        if self.output_schema is not None:
            value["output_schema"] = self.output_schema
        # The fields an agent file brought are hashed when set, like every other field here;
        # a definition without them hashes as before.
        if self.llm:
            value["llm"] = dict(self.llm)
        if self.pricing is not None:
            value["pricing"] = dict(self.pricing)
        if self.max_response_tokens is not None:
            value["max_response_tokens"] = self.max_response_tokens
        if self.record_prompts:
            value["record_prompts"] = True
        return value

    def as_json(self) -> dict[str, Any]:
        """The definition as stored and served: its identity plus ``name`` when set."""
        value = self.identity()
        if self.name is not None:
            value = {"name": self.name, **value}
        return value


def agent_def_hash(definition: AgentDefinition) -> str:
    """``sha256:<hex>`` of the canonical definition without its name."""
    return hash_value(definition.identity())


class _Problems:
    def __init__(self) -> None:
        self.errors: list[dict[str, str]] = []

    def add(self, code: str, message: str, field_name: str) -> None:
        self.errors.append({"code": code, "message": message, "field": field_name})

    def malformed(self, message: str, field_name: str) -> None:
        self.add("malformed_definition", message, field_name)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _budget(raw: Any, problems: _Problems) -> dict[str, int | float]:
    if raw is None:
        return {}
    if type(raw) is not dict:
        problems.malformed(f"`budget` must be an object, found {_kind(raw)}", "budget")
        return {}
    budget: dict[str, int | float] = {}
    for key, value in raw.items():
        where = f"budget.{key}"
        if key not in _BUDGET_KEYS:
            expected = ", ".join(f"`{name}`" for name in _BUDGET_KEYS)
            problems.malformed(f"unknown field `{key}` in `budget`, expected {expected}", where)
        elif value is None:
            continue
        elif key in _NUMBER_BUDGETS:
            if not _positive_number(value):
                problems.malformed(f"`{where}` must be a number above 0", where)
            else:
                budget[key] = value
        elif type(value) is not int or not 1 <= value <= U32_MAX:
            problems.malformed(f"`{where}` must be an integer in 1..={U32_MAX}", where)
        else:
            budget[key] = value
    return budget


def _positive_number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and value > 0 and value <= 1e15


def _llm(model: str | None, raw: Any, problems: _Problems) -> dict[str, Any]:
    """The reference's ``[llm]`` table, checked field by field (its ``LlmConfig``)."""
    if raw is None:
        return {}
    if type(raw) is not dict:
        problems.malformed(f"`llm` must be an object, found {_kind(raw)}", "llm")
        return {}
    if raw and model is not None and (model in FIXED_MODELS or model.startswith(OPENAI_PREFIX)):
        problems.malformed(
            f"`llm` applies to the Anthropic Messages models (`{ANTHROPIC_PREFIX}…`), "
            f"not to `{model}`",
            "llm",
        )
        return {}
    llm: dict[str, Any] = {}
    for key, value in raw.items():
        where = f"llm.{key}"
        if key not in LLM_KEYS:
            expected = ", ".join(f"`{name}`" for name in LLM_KEYS)
            problems.malformed(f"unknown field `{key}` in `llm`, expected {expected}", where)
        elif value is None:
            continue
        elif key in ("base_url_env", "api_key_env"):
            if type(value) is not str or not _ENV_NAME.fullmatch(value):
                problems.malformed(
                    f"`{where}` must name an environment variable (letters, digits and `_`)",
                    where,
                )
            else:
                llm[key] = value
        elif key == "base_url":
            if type(value) is not str or value.rstrip("/") != DEFAULT_LLM_BASE_URL:
                problems.add(
                    "llm_base_url_refused",
                    f"`llm.base_url` may only be the public endpoint {DEFAULT_LLM_BASE_URL}: "
                    "any other endpoint is named by `llm.base_url_env`, a variable this "
                    "installation allows (GATEHOUSE_LLM_ENV_ALLOW), so that its key is never "
                    "sent to an address an agent file chooses",
                    where,
                )
            else:
                llm[key] = DEFAULT_LLM_BASE_URL
        elif key == "api_key_kind":
            if value not in _API_KEY_KINDS:
                problems.malformed(f"`{where}` must be `api_key` or `oauth`", where)
            elif value != "api_key":
                llm[key] = value
        elif type(value) is not int or not 0 <= value <= (10 if key == "max_retries" else 3600):
            top = 10 if key == "max_retries" else 3600
            problems.malformed(f"`{where}` must be an integer in 0..={top}", where)
        else:
            llm[key] = value
    return llm


def _pricing(raw: Any, problems: _Problems) -> dict[str, float] | None:
    if raw is None:
        return None
    if type(raw) is not dict:
        problems.malformed(f"`pricing` must be an object, found {_kind(raw)}", "pricing")
        return None
    pricing: dict[str, float] = {}
    for key, value in raw.items():
        where = f"pricing.{key}"
        if key not in ("input_per_mtok", "output_per_mtok"):
            problems.malformed(
                f"unknown field `{key}` in `pricing`, expected `input_per_mtok` or "
                "`output_per_mtok`",
                where,
            )
        elif type(value) not in (int, float) or not math.isfinite(value) or value < 0:
            problems.malformed(f"`{where}` must be a number of dollars, 0 or more", where)
        else:
            pricing[key] = value
    for key in ("input_per_mtok", "output_per_mtok"):
        if key not in raw:
            problems.malformed(f"missing field `{key}` in `pricing`", f"pricing.{key}")
    return pricing if len(pricing) == 2 else None


def llm_env_problems(definition: AgentDefinition, allowed: Collection[str]) -> list[dict[str, str]]:
    """The ``llm`` variables of ``definition`` this installation does not allow
    (``GATEHOUSE_LLM_ENV_ALLOW``), one problem each, naming it and why."""
    problems: list[dict[str, str]] = []
    for key in ("base_url_env", "api_key_env"):
        name = definition.llm.get(key)
        if name is None or name in allowed:
            continue
        what = "an endpoint" if key == "base_url_env" else "a key"
        problems.append(
            {
                "code": "llm_env_not_allowed",
                "message": f"`llm.{key}` names `{name}`, which is not in this installation's "
                f"GATEHOUSE_LLM_ENV_ALLOW: an agent file may read {what} only from a "
                "variable the operator allows, so that no server secret can be sent to an "
                "endpoint an author chooses",
                "field": f"llm.{key}",
            }
        )
    return problems


def _options(model: str | None, raw: Any, problems: _Problems) -> dict[str, Any]:
    if raw is None:
        raw = {}
    if type(raw) is not dict:
        problems.malformed(f"`options` must be an object, found {_kind(raw)}", "options")
        return {}
    if model != "scripted":
        for key in raw:
            problems.malformed(
                f"unknown field `{key}` in `options`: only the scripted model takes options",
                f"options.{key}",
            )
        return {}
    for key in raw:
        if key != "replies":
            problems.malformed(
                f"unknown field `{key}` in `options`, expected `replies`", f"options.{key}"
            )
    replies = raw.get("replies")
    if replies is None:
        problems.add(
            "missing_replies",
            "a scripted agent needs `options.replies`, a list of strings",
            "options.replies",
        )
        return {}
    if type(replies) is not list or any(type(reply) is not str for reply in replies):
        problems.malformed("`options.replies` must be a list of strings", "options.replies")
        return {}
    return {"replies": replies}


def parse_agent_definition(
    data: bytes | str | dict[str, Any], *, closed_world: bool = True
) -> AgentDefinition:
    """Parse a definition strictly; raises :class:`InvalidAgentDefinition` listing every problem.

    ``closed_world=False`` leaves out the closed-world reading of ``output_schema``, for a
    definition stored before it was read so: run-time resolution reports what it finds there,
    naming the node that uses the agent."""
    problems = _Problems()
    if isinstance(data, dict):
        raw: Any = data
    else:
        try:
            raw = read_json(data)
        except JsonError as error:
            problems.malformed(str(error), "")
            raise InvalidAgentDefinition(problems.errors) from None
    if type(raw) is not dict:
        problems.malformed(f"an agent definition must be a JSON object, found {_kind(raw)}", "")
        raise InvalidAgentDefinition(problems.errors)
    for key in raw:
        if key not in _KEYS:
            expected = ", ".join(f"`{name}`" for name in _KEYS)
            problems.malformed(f"unknown field `{key}`, expected one of {expected}", key)

    name = _string(raw, "name", problems, required=False)
    if name is not None and is_blank(name):
        problems.add(
            "blank_agent_name", "`name`, if set, must not be empty or all whitespace", "name"
        )
    elif name is not None and len(name) > MAX_AGENT_NAME_LENGTH:
        problems.add(
            "agent_name_too_long",
            f"`name` is {len(name)} characters, over the {MAX_AGENT_NAME_LENGTH}-character cap",
            "name",
        )

    model = _string(raw, "model", problems, required=True)
    if model is not None and (
        model not in FIXED_MODELS
        and not (model.startswith(OPENAI_PREFIX) and not is_blank(model[len(OPENAI_PREFIX) :]))
        and not (
            model.startswith(ANTHROPIC_PREFIX) and not is_blank(model[len(ANTHROPIC_PREFIX) :])
        )
    ):
        problems.add(
            "unknown_model",
            f"unknown model `{model}`: expected `echo`, `scripted`, `openai:<model name>` or "
            f"an Anthropic model (`{ANTHROPIC_PREFIX}…`)",
            "model",
        )

    prompt = _string(raw, "prompt", problems, required=True)

    tools = raw.get("tools")
    if tools is None:
        tools = []
    elif type(tools) is not list or any(type(tool) is not str for tool in tools):
        problems.malformed("`tools` must be a list of tool names (strings)", "tools")
        tools = []

    budget = _budget(raw.get("budget"), problems)
    options = _options(model, raw.get("options"), problems)
    output_schema = output_schema_of(raw.get("output_schema"), problems, closed_world=closed_world)
    llm = _llm(model, raw.get("llm"), problems)
    pricing = _pricing(raw.get("pricing"), problems)
    if "max_cost_usd" in budget and pricing is None and "pricing" not in raw:
        problems.add(
            "missing_pricing",
            "a cost budget needs `pricing` (`input_per_mtok` and `output_per_mtok`): a cost "
            "cannot be counted without rates",
            "pricing",
        )
    max_response_tokens = raw.get("max_response_tokens")
    if max_response_tokens is not None and (
        type(max_response_tokens) is not int or not 1 <= max_response_tokens <= U32_MAX
    ):
        problems.malformed(
            f"`max_response_tokens` must be an integer in 1..={U32_MAX}", "max_response_tokens"
        )
    record_prompts = raw.get("record_prompts")
    if record_prompts is not None and type(record_prompts) is not bool:
        problems.malformed("`record_prompts` must be true or false", "record_prompts")
    # A missing or mistyped model or prompt is among the problems; the checker cannot know.
    if problems.errors or model is None or prompt is None:
        raise InvalidAgentDefinition(problems.errors)
    return AgentDefinition(
        model=model,
        prompt=prompt,
        name=name,
        tools=tuple(tools),
        budget=budget,
        options=options,
        output_schema=output_schema,
        llm=llm,
        pricing=pricing,
        max_response_tokens=max_response_tokens,
        record_prompts=record_prompts is True,
    )


def _string(raw: dict[str, Any], key: str, problems: _Problems, *, required: bool) -> str | None:
    """``raw[key]`` when it is a string; else ``None``, with the problem recorded (a missing
    field is one only when ``required``)."""
    value = raw.get(key)
    if value is None:
        if required:
            problems.malformed(f"missing field `{key}`", key)
        return None
    if type(value) is not str:
        problems.malformed(f"`{key}` must be a string, found {_kind(value)}", key)
        return None
    return value


def output_schema_of(
    raw: Any, problems: _Problems, *, closed_world: bool = True
) -> dict[str, Any] | None:
    """An agent's ``output_schema``: absent, or an object that is a valid JSON Schema."""
    if raw is None:
        return None
    if type(raw) is not dict:
        problems.malformed(
            f"`output_schema` must be an object (a JSON Schema), found {_kind(raw)}",
            "output_schema",
        )
        return None
    if count_subschemas(raw, MAX_DOCUMENT_SUBSCHEMAS) > MAX_DOCUMENT_SUBSCHEMAS:
        problems.add(
            "schemas_too_large",
            f"`output_schema` holds more than {MAX_DOCUMENT_SUBSCHEMAS} subschemas, the most "
            "one document may hold",
            "output_schema",
        )
        return None
    problem = schema_problem(raw)
    if problem is not None:
        problems.add(
            "invalid_output_schema",
            f"`output_schema` is not a valid JSON Schema: {problem}",
            "output_schema",
        )
        return None
    # The closed-world reading node schemas get (E10): what would make checking an answer
    # reach outside, loop, explode or switch dialect is refused now, not when a run fails.
    findings = schema_findings(raw) if closed_world else ()
    for finding in findings:
        problems.add(finding.code, finding.describe("`output_schema`"), "output_schema")
    return None if findings else raw
