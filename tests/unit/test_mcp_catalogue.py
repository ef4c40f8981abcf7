"""``GATEHOUSE_MCP_SERVERS``: each bad file's message names what is wrong and the entry; the
effect mapping and the declared idempotency keys are the reference's (mcp.rs, idempotency.rs)."""

from __future__ import annotations

from pathlib import Path

import mcp.types as types
import pytest

from editor.engine.errors import ToolError
from editor.engine.ports import ToolEffect
from editor.tools.http import check_allowed_url, parse_allow_list
from editor.tools.mcp import (
    Catalogue,
    CatalogueError,
    check_catalogue,
    declared_key,
    effect_for,
    read_catalogue,
)

BASE = Path("/srv/tools")


def problems(text: str, **environ: str) -> list[str]:
    return [str(problem) for problem in check_catalogue(text.encode(), environ, base_dir=BASE)[1]]


def test_a_stdio_server_is_read_with_its_variables_expanded() -> None:
    catalogue, found = check_catalogue(
        b"""
        [servers.payroll]
        command = "python3"
        args = ["${TOOLS}/payroll/server.py"]
        cwd = "payroll"
        env = { LEDGER = "${TOOLS}/ledger.txt" }
        effect_overrides = { send_summary = "write" }
        idempotency_keys = { pay_employee = "payment.id" }
        timeout = 20
        """,
        {"TOOLS": "/opt/tools"},
        base_dir=BASE,
    )

    assert found == []
    (server,) = catalogue.servers
    assert server.transport == "stdio"
    assert server.args == ("/opt/tools/payroll/server.py",)
    assert server.cwd == "/srv/tools/payroll"
    assert server.env == {"LEDGER": "/opt/tools/ledger.txt"}
    assert server.effect_overrides == {"send_summary": ToolEffect.WRITE}
    assert server.idempotency_keys == {"pay_employee": ("payment", "id")}
    assert server.timeout == 20.0


def test_an_http_server_is_read() -> None:
    catalogue, found = check_catalogue(
        b'[servers.claims]\nurl = "https://claims.example.com/mcp"\nbearer_token_env = "CLAIMS"\n',
        {},
        base_dir=BASE,
    )

    assert found == []
    assert catalogue.servers[0].transport == "http"
    assert catalogue.servers[0].bearer_token_env == "CLAIMS"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[servers.a]\ncommand = "x"\nurl = "https://h/mcp"\n',
            "server `a`: has both `command` (stdio) and `url` (HTTP): a server has one transport",
        ),
        (
            '[servers.a]\nargs = ["x"]\n',
            "server `a`: has neither `command` (a stdio server) nor `url` (an HTTP server)",
        ),
        ('[servers.a]\ncommand = "x"\ncomand = "y"\n', "server `a`: unknown key `comand`"),
        ('[server.a]\ncommand = "x"\n', "the file: unknown key `server`"),
        ('[servers.a]\ncommand = ""\n', "server `a`: `command` must be a non-empty string"),
        (
            '[servers.a]\ncommand = "x"\nargs = "y"\n',
            "server `a`: `args` must be a list of strings",
        ),
        (
            '[servers.a]\ncommand = "x"\nenv = { A = 1 }\n',
            "server `a`: `env` must be a table of strings",
        ),
        (
            '[servers.a]\ncommand = "x"\nenv = { A = "${UNSET_HERE}" }\n',
            "server `a`: `env.A` names `${UNSET_HERE}`, which is not set",
        ),
        (
            '[servers.a]\nurl = "https://h/mcp"\ncwd = "/"\n',
            "server `a`: `cwd` is for stdio servers, but this one has a `url`",
        ),
        (
            '[servers.a]\ncommand = "x"\nbearer_token_env = "T"\n',
            "server `a`: `bearer_token_env` is for HTTP servers, but this one has a `command`",
        ),
        ('[servers.a]\nurl = "ftp://h/mcp"\n', "server `a`: `url` must be an http or https URL"),
        (
            '[servers.a]\nurl = "https://u:p@h/mcp"\n',
            "server `a`: `url` carries user info; name the token with `bearer_token_env`",
        ),
        (
            '[servers.a]\ncommand = "x"\neffect_overrides = { t = "delete" }\n',
            "server `a`: `effect_overrides.t` must be `read`, `idempotent` or `write`",
        ),
        (
            '[servers.a]\ncommand = "x"\nidempotency_keys = { t = "" }\n',
            "server `a`: `idempotency_keys.t` is empty",
        ),
        (
            '[servers.a]\ncommand = "x"\nidempotency_keys = { t = "a..b" }\n',
            "server `a`: `idempotency_keys.t` `a..b` has an empty segment",
        ),
        (
            '[servers.a]\ncommand = "x"\ntimeout = 0\n',
            "server `a`: `timeout` must be a positive number of seconds",
        ),
        ('[servers."a b"]\ncommand = "x"\n', "server `a b`: a server name is letters"),
        ("[servers.a\n", "the file: the file is not valid TOML"),
    ],
)
def test_each_bad_entry_is_named_with_what_is_wrong(text: str, message: str) -> None:
    assert any(found.startswith(f"GATEHOUSE_MCP_SERVERS: {message}") for found in problems(text))


def test_every_problem_of_the_file_is_reported_at_once() -> None:
    found = problems('[servers.a]\nargs = ["x"]\n[servers.b]\ncommand = "y"\ntimeout = -1\n')

    assert len(found) == 2
    assert "server `a`" in found[0]
    assert "server `b`" in found[1]


def test_reading_a_bad_file_raises_every_problem_together(tmp_path: Path) -> None:
    path = tmp_path / "servers.toml"
    path.write_text('[servers.a]\nargs = ["x"]\n')

    with pytest.raises(CatalogueError) as refused:
        read_catalogue(path, {})

    assert [problem.server for problem in refused.value.problems] == ["a"]


def test_a_missing_file_is_named() -> None:
    with pytest.raises(CatalogueError, match=r"the file: `/nowhere/servers.toml` cannot be read"):
        read_catalogue("/nowhere/servers.toml", {})


def test_an_oversized_file_is_refused_before_it_is_parsed() -> None:
    assert problems("a." * 200_000 + "a = 1") == [
        "GATEHOUSE_MCP_SERVERS: the file: the file is larger than 262144 bytes"
    ]


def test_a_catalogue_server_is_found_by_the_command_and_args_or_the_url_an_agent_names() -> None:
    catalogue, _ = check_catalogue(
        b'[servers.p]\ncommand = "python3"\nargs = ["s.py"]\n[servers.h]\nurl = "https://h/mcp"\n',
        {},
        base_dir=BASE,
    )

    assert catalogue.matching(command="python3", args=("s.py",)).name == "p"  # type: ignore[union-attr]
    assert catalogue.matching(command="python3", args=("other.py",)) is None
    assert catalogue.matching(url="https://h/mcp").name == "h"  # type: ignore[union-attr]
    assert Catalogue().matching(command="python3") is None


@pytest.mark.parametrize(
    ("annotations", "overrides", "effect"),
    [
        (types.ToolAnnotations(read_only_hint=True), {}, ToolEffect.READ),
        (types.ToolAnnotations(idempotent_hint=True), {}, ToolEffect.IDEMPOTENT),
        (types.ToolAnnotations(read_only_hint=True, idempotent_hint=True), {}, ToolEffect.READ),
        (types.ToolAnnotations(read_only_hint=False), {}, ToolEffect.WRITE),
        (None, {}, ToolEffect.WRITE),
        (types.ToolAnnotations(read_only_hint=True), {"t": ToolEffect.WRITE}, ToolEffect.WRITE),
        (None, {"t": ToolEffect.READ}, ToolEffect.READ),
    ],
)
def test_effects_are_read_from_the_hints_and_overrides_win(
    annotations: types.ToolAnnotations | None, overrides: dict[str, ToolEffect], effect: ToolEffect
) -> None:
    assert effect_for("t", annotations, overrides) is effect


def test_a_declared_key_is_the_tool_and_the_fields_value() -> None:
    assert declared_key("pay_claim", ("claim_id",), {"claim_id": "wreck-9931"}) == (
        "pay_claim:wreck-9931"
    )
    assert declared_key("pay", ("payment", "id"), {"payment": {"id": 483200}}) == "pay:483200"
    assert declared_key("pay", ("n",), {"n": 1.5}) == "pay:1.5"


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ({"name": "x"}, "there is no `claim_id` in the input; the input carries `name`"),
        ({"claim_id": ""}, "it holds an empty string"),
        ({"claim_id": True}, "it holds bool true"),
        ({"claim_id": None}, "it holds NoneType null"),
        ("text", "the input is not a JSON object"),
    ],
)
def test_a_call_without_a_usable_declared_key_is_refused(value: object, detail: str) -> None:
    with pytest.raises(ToolError) as refused:
        declared_key("pay_claim", ("claim_id",), value)

    assert str(refused.value).startswith(
        f"the tool `pay_claim` declares its idempotency key at `claim_id`, but {detail}"
    )


def test_an_http_server_outside_the_allow_list_is_refused() -> None:
    refused = r"`claims\.example\.com:443` is not in GATEHOUSE_HTTP_ALLOW"
    with pytest.raises(ToolError, match=refused):
        check_allowed_url("https://claims.example.com/mcp", parse_allow_list([]))
