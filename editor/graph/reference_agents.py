"""The reference's ``agent_def_hash`` of an agent file, and the file's ``[[mcp_servers]]``.

The reference builds an agent from its file (``salvor_cli::agent_config::build_agent``) and
hashes this value (``salvor_runtime::agent``, ``compute_def_hash``) in the canonical form graphs
are hashed in (:func:`editor.graph.jsonio.hash_value`)::

    {"budgets": {"max_cost_usd": …, "max_steps": …, "max_tokens": …,
                 "max_wall_time_seconds": …},        # each null when not declared
     "model": "claude-…",
     "pricing": {"input_per_mtok": …, "output_per_mtok": …} or null,
     "system_prompt": "…" or null,
     "tools": [{"description", "effect", "input_schema", "name"[, "output_schema"]}, …],
     "output_schema": {…}}                           # only when the file declares one

Cost, wall time and prices are doubles there (``cost_usd = 2`` hashes as ``2.0``), and the wall
time passes through a ``Duration`` (rounded to whole nanoseconds) before it is hashed. The tools
are every tool each ``[[mcp_servers]]`` server lists, sorted by name: the server's own name,
description (empty when it gives none), input schema and output schema (only when it declares
one), and the effect the reference reads from the server's hints under the *file's*
``effect_overrides`` (``readOnlyHint`` → read, else ``idempotentHint`` → idempotent, else write).
``name``, ``[llm]``, ``max_response_tokens`` and ``record_prompts`` are not hashed: renaming an
agent or pointing it at another endpoint keeps its identity.

:func:`read_mcp_servers` reads the entries as the reference does (one transport each, its
fields only), and refuses what an agent file may not choose on a shared server: the server's
environment (``env``) and working directory (``cwd``). Which server an entry names is the
installation's catalogue's to say (``editor.services``); nothing here starts a process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from editor.graph.jsonio import hash_value

__all__ = [
    "EFFECTS",
    "GATEHOUSE_MODELS",
    "MAX_MCP_SERVERS",
    "ListedTool",
    "McpServerRef",
    "listed_tool",
    "read_mcp_servers",
    "reference_agent_def_hash",
    "reference_definition",
    "tool_descriptor",
    "tool_effect",
    "uses_reference_identity",
]

EFFECTS = ("read", "idempotent", "write")
#: Models only Gatehouse has: an agent on one of them is Gatehouse's, hashed as Gatehouse hashes.
GATEHOUSE_MODELS = ("echo", "scripted")
_GATEHOUSE_MODEL_PREFIX = "openai:"
#: Gatehouse's own fields read beside the reference's (``editor.graph.agent_files``).
_GATEHOUSE_EXTENSIONS = ("tools", "options")
#: The fields of the reference's ``McpServerConfig``.
_SERVER_FIELDS = (
    "command",
    "args",
    "env",
    "url",
    "bearer_token_env",
    "effect_overrides",
    "idempotency_keys",
)
#: What an entry may not bring on a shared server, and why.
_REFUSED_SERVER_FIELDS = {
    "env": "a server's environment is the operator's: it is set in this installation's "
    "catalogue (GATEHOUSE_MCP_SERVERS), never by an agent file",
    "cwd": "a server's working directory is the operator's: it is set in this installation's "
    "catalogue (GATEHOUSE_MCP_SERVERS), never by an agent file",
}
_NANOS = 10**9
#: The most ``[[mcp_servers]]`` entries one agent file may have (the reference's examples have
#: one): each is matched and listed at registration.
MAX_MCP_SERVERS = 16


@dataclass(frozen=True, slots=True)
class McpServerRef:
    """One ``[[mcp_servers]]`` entry of an agent file, as read (``index`` counts from 0)."""

    index: int
    command: str | None = None
    args: tuple[str, ...] = ()
    url: str | None = None
    bearer_token_env: str | None = None
    effect_overrides: Mapping[str, str] = field(default_factory=dict)
    idempotency_keys: Mapping[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"mcp_servers[{self.index}]"

    def describe(self) -> str:
        """The entry as people recognise it: ``[[mcp_servers]] #1 (`python3 server.py`)``."""
        named = self.url if self.url is not None else " ".join((self.command or "", *self.args))
        return f"`[[mcp_servers]]` entry {self.index + 1} (`{named}`)"


@dataclass(frozen=True, slots=True)
class ListedTool:
    """One tool as a server's ``tools/list`` gives it (the fields the hash reads)."""

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=dict)
    output_schema: Mapping[str, Any] | None = None
    read_only_hint: bool | None = None
    idempotent_hint: bool | None = None


def _problem(code: str, message: str, where: str) -> dict[str, str]:
    return {"code": code, "message": message, "field": where}


def read_mcp_servers(raw: Any) -> tuple[list[McpServerRef], list[dict[str, str]]]:
    """The file's ``mcp_servers`` (absent: none) and every problem found in them, each naming
    its field (``mcp_servers[0].env``)."""
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        return [], [
            _problem(
                "malformed_definition",
                "`mcp_servers` must be an array of tables (`[[mcp_servers]]`)",
                "mcp_servers",
            )
        ]
    if len(raw) > MAX_MCP_SERVERS:
        return [], [
            _problem(
                "too_many_mcp_servers",
                f"the agent file has {len(raw)} `[[mcp_servers]]` entries, more than the "
                f"{MAX_MCP_SERVERS} one agent may use",
                "mcp_servers",
            )
        ]
    servers: list[McpServerRef] = []
    problems: list[dict[str, str]] = []
    for index, table in enumerate(raw):
        reader = _ServerReader(index)
        server = reader.read(table)
        problems.extend(reader.problems)
        if server is not None:
            servers.append(server)
    return servers, problems


class _ServerReader:
    def __init__(self, index: int) -> None:
        self.index = index
        self.where = f"mcp_servers[{index}]"
        self.problems: list[dict[str, str]] = []

    def malformed(self, message: str, key: str = "") -> None:
        where = f"{self.where}.{key}" if key else self.where
        self.problems.append(_problem("malformed_definition", message, where))

    def read(self, table: Any) -> McpServerRef | None:
        if not isinstance(table, dict):
            self.malformed(f"`{self.where}` must be a table")
            return None
        for key in table:
            if key in _REFUSED_SERVER_FIELDS:
                self.problems.append(
                    _problem(
                        "unsupported_field",
                        f"`{self.where}.{key}` is not accepted here: {_REFUSED_SERVER_FIELDS[key]}",
                        f"{self.where}.{key}",
                    )
                )
            elif key not in _SERVER_FIELDS:
                known = ", ".join(f"`{name}`" for name in _SERVER_FIELDS if name != "env")
                self.malformed(f"unknown field `{key}` in `{self.where}`, expected {known}", key)
        command = self.text(table, "command")
        url = self.text(table, "url")
        args = self.texts(table, "args")
        token = self.text(table, "bearer_token_env")
        # The reference's transport rules (``McpServerConfig::validate``), in its words.
        if "command" not in table and "url" not in table:
            self.malformed(
                "an [[mcp_servers]] entry needs exactly one of `command` or `url`; neither is set"
            )
        elif "command" in table and "url" in table:
            self.malformed(
                "an [[mcp_servers]] entry sets both `command` and `url`; use exactly one"
            )
        elif "command" in table and "bearer_token_env" in table:
            self.malformed(
                "`bearer_token_env` applies only to a `url` server, not a `command` one",
                "bearer_token_env",
            )
        elif "url" in table and args:
            self.malformed("`args` applies only to a `command` server, not a `url` one", "args")
        overrides = self.effects(table)
        keys = self.key_paths(table)
        if self.problems:
            return None
        return McpServerRef(
            index=self.index,
            command=command,
            args=args,
            url=url,
            bearer_token_env=token,
            effect_overrides=overrides,
            idempotency_keys=keys,
        )

    def text(self, table: dict[str, Any], key: str) -> str | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            self.malformed(f"`{self.where}.{key}` must be a non-empty string", key)
            return None
        return value

    def texts(self, table: dict[str, Any], key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.malformed(f"`{self.where}.{key}` must be an array of strings", key)
            return ()
        return tuple(value)

    def table(self, table: dict[str, Any], key: str) -> dict[str, Any]:
        value = table.get(key, {})
        if not isinstance(value, dict):
            self.malformed(f"`{self.where}.{key}` must be a table of tool names", key)
            return {}
        return value

    def effects(self, table: dict[str, Any]) -> dict[str, str]:
        effects: dict[str, str] = {}
        for tool, effect in self.table(table, "effect_overrides").items():
            if effect not in EFFECTS:
                self.malformed(
                    f"`{self.where}.effect_overrides.{tool}` must be `read`, `idempotent` or "
                    "`write`",
                    f"effect_overrides.{tool}",
                )
            else:
                effects[tool] = effect
        return effects

    def key_paths(self, table: dict[str, Any]) -> dict[str, str]:
        keys: dict[str, str] = {}
        for tool, path in self.table(table, "idempotency_keys").items():
            # The reference's ``IdempotencyPath::parse``: field names joined by `.`, none empty.
            if not isinstance(path, str) or not path or any(not part for part in path.split(".")):
                self.malformed(
                    f"`idempotency_keys` entry for tool `{tool}`: the path must be field names "
                    "joined by `.` (none empty)",
                    f"idempotency_keys.{tool}",
                )
            else:
                keys[tool] = path
        return keys


def listed_tool(wire: Mapping[str, Any]) -> ListedTool:
    """A tool of a ``tools/list`` answer in its wire form (``inputSchema``, ``annotations``)."""
    annotations = wire.get("annotations")
    hints = annotations if isinstance(annotations, Mapping) else {}
    output_schema = wire.get("outputSchema")
    return ListedTool(
        name=str(wire["name"]),
        description=wire.get("description") or "",
        input_schema=dict(wire.get("inputSchema") or {}),
        output_schema=dict(output_schema) if isinstance(output_schema, Mapping) else None,
        read_only_hint=hints.get("readOnlyHint"),
        idempotent_hint=hints.get("idempotentHint"),
    )


def tool_effect(tool: ListedTool, overrides: Mapping[str, str]) -> str:
    """The reference's reading of a tool's effect: an override wins, else its hints."""
    if tool.name in overrides:
        return overrides[tool.name]
    if tool.read_only_hint is True:
        return "read"
    if tool.idempotent_hint is True:
        return "idempotent"
    return "write"


def tool_descriptor(tool: ListedTool, overrides: Mapping[str, str]) -> dict[str, Any]:
    """The tool as the reference's hash holds it (``output_schema`` only when declared)."""
    value: dict[str, Any] = {
        "description": tool.description,
        "effect": tool_effect(tool, overrides),
        "input_schema": dict(tool.input_schema),
        "name": tool.name,
    }
    if tool.output_schema is not None:
        value["output_schema"] = dict(tool.output_schema)
    return value


def uses_reference_identity(table: Mapping[str, Any]) -> bool:
    """Whether an agent file is one the reference could run as it is, and so is known by the
    reference's hash: none of Gatehouse's own fields (``tools``, ``options``) and none of
    Gatehouse's own models (``echo``, ``scripted``, ``openai:…``)."""
    model = table.get("model")
    if not isinstance(model, str):
        return False
    if model in GATEHOUSE_MODELS or model.startswith(_GATEHOUSE_MODEL_PREFIX):
        return False
    return not any(key in table for key in _GATEHOUSE_EXTENSIONS)


def _double(value: Any) -> Any:
    """A number as the reference's ``f64`` field holds it (an integer becomes a float)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _through_duration(seconds: Any) -> Any:
    """``Duration::from_secs_f64(s).as_secs_f64()``: the nearest whole nanosecond (ties to
    even), then seconds plus nanoseconds over 10⁹ in doubles."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        return seconds
    nanos = round(Fraction(seconds) * _NANOS)
    whole, rest = divmod(nanos, _NANOS)
    return float(whole) + float(rest) / float(_NANOS)


def reference_definition(
    table: Mapping[str, Any], tools: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The value the reference hashes for an agent file (its fields as read: TOML or the same
    as JSON) with ``tools`` (the :func:`tool_descriptor` of every tool its servers list)."""
    budgets = table.get("budgets")
    budgets = budgets if isinstance(budgets, Mapping) else {}
    pricing = table.get("pricing")
    value: dict[str, Any] = {
        "budgets": {
            "max_cost_usd": _double(budgets.get("cost_usd")),
            "max_steps": budgets.get("steps"),
            "max_tokens": budgets.get("tokens"),
            "max_wall_time_seconds": _through_duration(budgets.get("wall_time_seconds")),
        },
        "model": table.get("model"),
        "pricing": None
        if not isinstance(pricing, Mapping)
        else {
            "input_per_mtok": _double(pricing.get("input_per_mtok")),
            "output_per_mtok": _double(pricing.get("output_per_mtok")),
        },
        "system_prompt": table.get("system_prompt"),
        "tools": sorted((dict(tool) for tool in tools), key=lambda tool: str(tool["name"])),
    }
    if table.get("output_schema") is not None:
        value["output_schema"] = table["output_schema"]
    return value


def reference_agent_def_hash(table: Mapping[str, Any], tools: Sequence[Mapping[str, Any]]) -> str:
    """The reference's ``agent_def_hash`` of an agent file whose servers list ``tools``."""
    return hash_value(reference_definition(table, tools))
