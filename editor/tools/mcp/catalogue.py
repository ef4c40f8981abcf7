"""The operator's catalogue of MCP servers (``GATEHOUSE_MCP_SERVERS``): reading and checking it.

The catalogue is the only thing that can make Gatehouse start a process or open a connection to
a tool server: an author or API client names tools, never commands. It is a TOML file of named
servers::

    [servers.payroll]
    command = "python3"
    args = ["/srv/tools/payroll/server.py"]
    cwd = "/srv/tools/payroll"                       # optional; relative to the file
    env = { PAYROLL_LEDGER = "${PAYROLL_LEDGER}" }   # the server's whole environment, plus PATH
    effect_overrides = { send_summary = "write" }
    idempotency_keys = { pay_employee = "id" }
    timeout = 20                                     # seconds per call

    [servers.claims]
    url = "https://claims.example.com/mcp"           # streamable HTTP; host in GATEHOUSE_HTTP_ALLOW
    bearer_token_env = "CLAIMS_TOKEN"

``${VAR}`` in ``command``, ``args``, ``cwd``, ``env`` values and ``url`` expands from the
operator's environment (a variable that is not set is an error). Reading collects every problem
with the entry it belongs to (:func:`check_catalogue`); :func:`read_catalogue` raises them
together as one :class:`CatalogueError`. Pure Python: the environment comes in as an argument.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from editor.engine.ports import ToolEffect

__all__ = [
    "MAX_CATALOGUE_BYTES",
    "Catalogue",
    "CatalogueError",
    "CatalogueProblem",
    "McpServerEntry",
    "check_catalogue",
    "parse_catalogue",
    "parse_key_path",
    "read_catalogue",
]

#: The file is bounded before it is parsed (``tomllib`` is quadratic in a dotted key's depth).
MAX_CATALOGUE_BYTES = 256 * 1024

SETTING = "GATEHOUSE_MCP_SERVERS"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_STDIO_KEYS = {"command", "args", "cwd", "env"}
_HTTP_KEYS = {"url", "bearer_token_env"}
_COMMON_KEYS = {"effect_overrides", "idempotency_keys", "timeout"}
_KEYS = _STDIO_KEYS | _HTTP_KEYS | _COMMON_KEYS


@dataclass(frozen=True, slots=True)
class CatalogueProblem:
    """One thing wrong with the file; ``server`` is ``None`` for the file as a whole."""

    server: str | None
    message: str

    def __str__(self) -> str:
        where = f"server `{self.server}`" if self.server is not None else "the file"
        return f"{SETTING}: {where}: {self.message}"


class CatalogueError(Exception):
    """The catalogue cannot be used; ``problems`` says why, entry by entry."""

    def __init__(self, problems: list[CatalogueProblem]) -> None:
        super().__init__("; ".join(str(problem) for problem in problems))
        self.problems = problems


@dataclass(frozen=True, slots=True)
class McpServerEntry:
    """One server of the catalogue, with ``${VAR}`` already expanded."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    bearer_token_env: str | None = None
    effect_overrides: Mapping[str, ToolEffect] = field(default_factory=dict)
    #: tool name → the dotted path into the call's input that names the call (see
    #: :func:`editor.tools.mcp.tools.declared_key`).
    idempotency_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    timeout: float | None = None

    @property
    def transport(self) -> str:
        return "http" if self.url is not None else "stdio"

    def matches(
        self, *, command: str | None = None, args: tuple[str, ...] = (), url: str | None = None
    ) -> bool:
        """Whether an agent file's ``[[mcp_servers]]`` entry names this server: the same
        ``command`` and ``args``, or the same ``url``."""
        if url is not None:
            return self.url == url
        return command is not None and self.command == command and self.args == tuple(args)


@dataclass(frozen=True, slots=True)
class Catalogue:
    servers: tuple[McpServerEntry, ...] = ()

    def get(self, name: str) -> McpServerEntry | None:
        return next((server for server in self.servers if server.name == name), None)

    def names(self) -> list[str]:
        return [server.name for server in self.servers]

    def matching(
        self, *, command: str | None = None, args: tuple[str, ...] = (), url: str | None = None
    ) -> McpServerEntry | None:
        """The catalogue server an agent file's entry names, or ``None``."""
        return next(
            (s for s in self.servers if s.matches(command=command, args=args, url=url)), None
        )


def parse_key_path(path: object) -> tuple[str, ...] | str:
    """An ``idempotency_keys`` path (``"claim_id"``, ``"payment.claim_id"``) as its segments,
    or the reason it is refused (empty, or an empty segment), as the reference refuses it."""
    if not isinstance(path, str):
        return "must be a string (a dotted field path into the call's input)"
    if not path:
        return "is empty"
    segments = tuple(path.split("."))
    if any(not segment for segment in segments):
        return f"`{path}` has an empty segment"
    return segments


def read_catalogue(path: str | Path, environ: Mapping[str, str]) -> Catalogue:
    """The catalogue in the file at ``path``; every problem raises one :class:`CatalogueError`."""
    file = Path(path)
    try:
        with file.open("rb") as handle:
            raw = handle.read(MAX_CATALOGUE_BYTES + 1)
    except OSError as error:
        raise CatalogueError(
            [CatalogueProblem(None, f"`{file}` cannot be read: {error.strerror or error}")]
        ) from None
    return parse_catalogue(raw, environ, base_dir=file.parent)


def parse_catalogue(raw: bytes, environ: Mapping[str, str], *, base_dir: Path) -> Catalogue:
    catalogue, problems = check_catalogue(raw, environ, base_dir=base_dir)
    if problems:
        raise CatalogueError(problems)
    return catalogue


def check_catalogue(
    raw: bytes, environ: Mapping[str, str], *, base_dir: Path
) -> tuple[Catalogue, list[CatalogueProblem]]:
    """The catalogue's usable servers and every problem found (validation collects)."""
    if len(raw) > MAX_CATALOGUE_BYTES:
        return Catalogue(), [
            CatalogueProblem(None, f"the file is larger than {MAX_CATALOGUE_BYTES} bytes")
        ]
    try:
        document = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return Catalogue(), [CatalogueProblem(None, "the file is not UTF-8 text")]
    except (tomllib.TOMLDecodeError, RecursionError) as error:
        return Catalogue(), [CatalogueProblem(None, f"the file is not valid TOML: {error}")]
    problems: list[CatalogueProblem] = []
    for key in document:
        if key != "servers":
            problems.append(
                CatalogueProblem(None, f"unknown key `{key}` (expected `[servers.<name>]`)")
            )
    servers = document.get("servers", {})
    if not isinstance(servers, dict):
        problems.append(CatalogueProblem(None, "`servers` must be a table of `[servers.<name>]`"))
        return Catalogue(), problems
    entries = []
    for name, table in servers.items():
        reader = _EntryReader(name, environ, base_dir)
        entry = reader.read(table)
        problems.extend(reader.problems)
        if entry is not None:
            entries.append(entry)
    return Catalogue(tuple(entries)), problems


class _EntryReader:
    def __init__(self, name: str, environ: Mapping[str, str], base_dir: Path) -> None:
        self.name = name
        self.environ = environ
        self.base_dir = base_dir
        self.problems: list[CatalogueProblem] = []

    def problem(self, message: str) -> None:
        self.problems.append(CatalogueProblem(self.name, message))

    def read(self, table: object) -> McpServerEntry | None:
        if not _NAME.fullmatch(self.name):
            self.problem("a server name is letters, digits, `_`, `-` and `.` (at most 64)")
        if not isinstance(table, dict):
            self.problem("must be a table (`[servers.<name>]`)")
            return None
        for key in table:
            if key not in _KEYS:
                self.problem(f"unknown key `{key}` (known: {', '.join(sorted(_KEYS))})")
        stdio = sorted(key for key in table if key in _STDIO_KEYS)
        http = sorted(key for key in table if key in _HTTP_KEYS)
        if "command" in table and "url" in table:
            self.problem("has both `command` (stdio) and `url` (HTTP): a server has one transport")
        elif "url" in table and stdio:
            self.problem(f"`{stdio[0]}` is for stdio servers, but this one has a `url`")
        elif "url" not in table and "command" not in table:
            self.problem("has neither `command` (a stdio server) nor `url` (an HTTP server)")
        elif "command" in table and http:
            self.problem(f"`{http[0]}` is for HTTP servers, but this one has a `command`")
        entry = McpServerEntry(
            name=self.name,
            command=self.text(table, "command"),
            args=self.texts(table, "args"),
            cwd=self.directory(table),
            env=self.environment(table),
            url=self.url(table),
            bearer_token_env=self.variable_name(table, "bearer_token_env"),
            effect_overrides=self.effects(table),
            idempotency_keys=self.key_paths(table),
            timeout=self.timeout(table),
        )
        return None if self.problems else entry

    def expand(self, text: str, key: str) -> str:
        def variable(match: re.Match[str]) -> str:
            value = self.environ.get(match.group(1))
            if value is None:
                self.problem(f"`{key}` names `${{{match.group(1)}}}`, which is not set")
                return ""
            return value

        return _VARIABLE.sub(variable, text)

    def text(self, table: dict[str, Any], key: str) -> str | None:
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, str) or not value.strip():
            self.problem(f"`{key}` must be a non-empty string")
            return None
        return self.expand(value, key)

    def texts(self, table: dict[str, Any], key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.problem(f"`{key}` must be a list of strings")
            return ()
        return tuple(self.expand(item, key) for item in value)

    def directory(self, table: dict[str, Any]) -> str | None:
        cwd = self.text(table, "cwd")
        return None if cwd is None else str(self.base_dir / cwd)

    def environment(self, table: dict[str, Any]) -> dict[str, str]:
        value = table.get("env", {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            self.problem("`env` must be a table of strings")
            return {}
        return {name: self.expand(text, f"env.{name}") for name, text in value.items()}

    def url(self, table: dict[str, Any]) -> str | None:
        url = self.text(table, "url")
        if url is None:
            return None
        try:
            split = urlsplit(url)
            split.port  # noqa: B018  (raises on a bad port)
        except ValueError as error:
            self.problem(f"`url` is not a valid URL: {error}")
            return None
        if split.scheme not in ("http", "https") or not split.hostname:
            self.problem("`url` must be an http or https URL")
        elif split.username is not None or split.password is not None:
            self.problem("`url` carries user info; name the token with `bearer_token_env`")
        return url

    def variable_name(self, table: dict[str, Any], key: str) -> str | None:
        value = self.text(table, key)
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            self.problem(f"`{key}` must name an environment variable")
        return value

    def effects(self, table: dict[str, Any]) -> dict[str, ToolEffect]:
        value = table.get("effect_overrides", {})
        if not isinstance(value, dict):
            self.problem("`effect_overrides` must be a table of tool name = effect")
            return {}
        effects = {}
        for tool, effect in value.items():
            try:
                effects[tool] = ToolEffect(effect)
            except ValueError:
                self.problem(f"`effect_overrides.{tool}` must be `read`, `idempotent` or `write`")
        return effects

    def key_paths(self, table: dict[str, Any]) -> dict[str, tuple[str, ...]]:
        value = table.get("idempotency_keys", {})
        if not isinstance(value, dict):
            self.problem("`idempotency_keys` must be a table of tool name = field path")
            return {}
        paths = {}
        for tool, path in value.items():
            parsed = parse_key_path(path)
            if isinstance(parsed, str):
                self.problem(f"`idempotency_keys.{tool}` {parsed}")
            else:
                paths[tool] = parsed
        return paths

    def timeout(self, table: dict[str, Any]) -> float | None:
        if "timeout" not in table:
            return None
        value = table["timeout"]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            self.problem("`timeout` must be a positive number of seconds")
            return None
        return float(value)
