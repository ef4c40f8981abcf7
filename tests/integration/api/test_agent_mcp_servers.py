"""``POST /v1/agents`` with the reference's ``[[mcp_servers]]``: accepted only when each entry
names a server of the operator's catalogue, registered under the reference's own hash
(docs/registries.md, *Agent files and their MCP servers*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from editor.models import AgentDefinition
from editor.services import installation
from tests.integration.api.callers import Caller, error_of
from tests.integration.mcp.examples import (
    AGENT_FILES,
    REFERENCE,
    example_catalogue,
    hashes_named_by_graphs,
)
from tests.integration.mcp.servers import EXAMPLES, processes_marked
from tests.reference_examples import needs_examples

pytestmark = [
    pytest.mark.django_db,
    needs_examples(),
]


@pytest.fixture
def catalogue(settings: Any, tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Use the examples' catalogue (plus ``extra`` entries); the marker of its processes."""
    settings.GATEHOUSE_LLM_ENV_ALLOW = ["SALVOR_DEMO_BASE_URL"]

    def use(extra: str = "", payroll: str = "") -> str:
        path, marker = example_catalogue(tmp_path, extra, payroll)
        settings.GATEHOUSE_MCP_SERVERS = str(path)
        installation.reset()
        return marker

    try:
        yield use
    finally:
        installation.reset()


def post_toml(api: Caller, text: str) -> Any:
    return api.post("/v1/agents", text.encode(), content_type="application/toml")


@pytest.mark.parametrize(
    "folder", sorted({path.parent.parent for path in AGENT_FILES}), ids=lambda path: path.name
)
def test_each_example_agent_file_registers_under_the_hash_its_example_graph_names(
    api: Caller, catalogue: Callable[..., str], folder: Path
) -> None:
    marker = catalogue("")

    registered = {}
    for path in sorted(folder.glob("agents/*.toml")):
        response = post_toml(api, path.read_text())
        assert response.status_code == 201, response.content
        registered[path.name] = response.json()["agent"]

    assert set(registered.values()) == hashes_named_by_graphs(folder)
    for path in sorted(folder.glob("agents/*.toml")):
        stored = api.get(f"/v1/agents/{registered[path.name]}").json()
        assert stored["format"] == "toml" and stored["source"] == path.read_text()
        if "[[mcp_servers]]" in stored["source"]:
            assert stored["definition"]["tools"], "the server's tools are the agent's"
    assert processes_marked(marker) == []  # each short listing stopped its server again


def test_an_example_agents_tools_are_its_servers_tools_in_the_registry(
    api: Caller, catalogue: Callable[..., str]
) -> None:
    catalogue("")
    text = (EXAMPLES / "payroll" / "agents" / "notify-summary.toml").read_text()

    agent = post_toml(api, text).json()["agent"]

    tools = api.get(f"/v1/agents/{agent}").json()["definition"]["tools"]
    assert tools == ["flag_exceptions", "pay_employee", "pull_roster", "send_summary"]
    listed = {tool["name"]: tool for tool in api.get("/v1/tools").json()["tools"]}
    assert {listed[name]["server"] for name in tools} == {"payroll"}


AGENT = 'model = "claude-opus-4-8"\nsystem_prompt = "x"\n\n'


def test_an_entry_naming_a_command_not_in_the_catalogue_is_refused_naming_it_and_the_catalogue(
    api: Caller, catalogue: Callable[..., str]
) -> None:
    catalogue("")
    text = AGENT + '[[mcp_servers]]\ncommand = "python3"\nargs = ["/tmp/mine.py"]\n'

    response = post_toml(api, text)

    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_agent"
    [problem] = error["details"]["errors"]
    assert (problem["code"], problem["field"]) == ("unknown_mcp_server", "mcp_servers[0]")
    assert "`python3 /tmp/mine.py`" in problem["message"]
    assert "The catalogue has `disputes`, `payroll`" in problem["message"]
    assert not AgentDefinition.objects.exists()


@pytest.mark.parametrize(
    "entry",
    [
        'url = "https://tools.example.com/mcp"\n',
        # The same program, other arguments: not the catalogue's server.
        'command = "python3"\nargs = ["examples/payroll/server.py", "--debug"]\n',
        'command = "/usr/bin/python3"\nargs = ["examples/payroll/server.py"]\n',
    ],
)
def test_a_url_or_arguments_the_catalogue_does_not_have_are_an_unknown_mcp_server(
    api: Caller, catalogue: Callable[..., str], entry: str
) -> None:
    catalogue("")

    response = post_toml(api, AGENT + "[[mcp_servers]]\n" + entry)

    assert response.status_code == 400
    assert error_of(response)["details"]["errors"][0]["code"] == "unknown_mcp_server"


@pytest.mark.parametrize(
    ("field", "value"), [("env", '{ SALVOR_PAYROLL_LEDGER = "/etc/passwd" }'), ("cwd", '"/"')]
)
def test_an_entry_may_not_bring_its_own_env_or_cwd(
    api: Caller, catalogue: Callable[..., str], field: str, value: str
) -> None:
    catalogue("")
    entry = f'command = "python3"\nargs = ["examples/payroll/server.py"]\n{field} = {value}\n'

    response = post_toml(api, AGENT + "[[mcp_servers]]\n" + entry)

    assert response.status_code == 400
    [problem] = error_of(response)["details"]["errors"]
    assert (problem["code"], problem["field"]) == ("unsupported_field", f"mcp_servers[0].{field}")
    assert "GATEHOUSE_MCP_SERVERS" in problem["message"]


def started_marker_server(tmp_path: Path) -> tuple[str, str, Path]:
    """A catalogue server that leaves a file behind when it is started; its entry for an
    agent file, and that file."""
    started = tmp_path / "started"
    script = f'touch "{started}"; exec python3 examples/payroll/server.py'
    catalogue_entry = (
        f'[servers.marked]\ncommand = "sh"\nargs = ["-c", \'{script}\']\ncwd = "{REFERENCE}"\n'
    )
    agent_entry = f'[[mcp_servers]]\ncommand = "sh"\nargs = ["-c", \'{script}\']\n'
    return catalogue_entry, agent_entry, started


@pytest.mark.parametrize(
    "refused",
    [
        '[[mcp_servers]]\ncommand = "sh"\nargs = ["-c", "touch /tmp/nothing"]\n',
        '[[mcp_servers]]\ncommand = "python3"\nargs = ["examples/payroll/server.py"]\n'
        'env = { A = "1" }\n',
        '[llm]\nbase_url_env = "SECRET_KEY"\n',
    ],
    ids=["unknown command", "env", "llm variable not allowed"],
)
def test_a_refused_file_starts_no_process_not_even_its_catalogue_servers(
    api: Caller, catalogue: Callable[..., str], tmp_path: Path, refused: str
) -> None:
    catalogue_entry, agent_entry, started = started_marker_server(tmp_path)
    catalogue(catalogue_entry)

    response = post_toml(api, AGENT + agent_entry + refused)

    assert response.status_code == 400, response.content
    assert not started.exists()
    # The same file without what is refused is accepted, and its server was listed: the marker
    # would have been there had anything been started.
    accepted = post_toml(api, AGENT + agent_entry)
    assert accepted.status_code == 201, accepted.content
    assert started.exists()


def test_an_effect_the_catalogue_does_not_run_a_tool_with_is_refused_naming_both(
    api: Caller, catalogue: Callable[..., str]
) -> None:
    catalogue("")
    entry = (
        '[[mcp_servers]]\ncommand = "python3"\nargs = ["examples/payroll/server.py"]\n'
        'effect_overrides = { pull_roster = "write" }\n'
    )

    response = post_toml(api, AGENT + entry)

    assert response.status_code == 400
    [problem] = error_of(response)["details"]["errors"]
    assert problem["code"] == "effect_not_in_catalogue"
    assert "`pull_roster` as `write`" in problem["message"]
    assert "runs it as `read`" in problem["message"]


def test_an_idempotency_key_for_a_tool_the_server_does_not_list_is_refused_listing_its_tools(
    api: Caller, catalogue: Callable[..., str]
) -> None:
    catalogue("")
    entry = (
        '[[mcp_servers]]\ncommand = "python3"\nargs = ["examples/payroll/server.py"]\n'
        'idempotency_keys = { pay_employe = "id" }\n'
    )

    response = post_toml(api, AGENT + entry)

    assert response.status_code == 400
    [problem] = error_of(response)["details"]["errors"]
    assert (problem["code"], problem["field"]) == (
        "unknown_tool",
        "mcp_servers[0].idempotency_keys.pay_employe",
    )
    assert (
        "this server advertises: pull_roster, flag_exceptions, pay_employee, send_summary"
        in (problem["message"])
    )


def test_an_idempotency_key_is_accepted_only_as_the_catalogue_declares_it(
    api: Caller, catalogue: Callable[..., str]
) -> None:
    catalogue("")
    entry = (
        '[[mcp_servers]]\ncommand = "python3"\nargs = ["examples/payroll/server.py"]\n'
        'idempotency_keys = { pay_employee = "id" }\n'
    )

    undeclared = post_toml(api, AGENT + entry)

    assert undeclared.status_code == 400
    [problem] = error_of(undeclared)["details"]["errors"]
    assert problem["code"] == "idempotency_key_not_in_catalogue"
    assert "calls it with no key" in problem["message"]
    catalogue(payroll='idempotency_keys = { pay_employee = "id" }\n')
    assert post_toml(api, AGENT + entry).status_code == 201
    other = entry.replace('"id"', '"employee.id"')
    assert error_of(post_toml(api, AGENT + other))["details"]["errors"][0]["message"].endswith(
        "calls it with `id`: calls are keyed as the operator's catalogue says, so a file may "
        "only repeat its keys"
    )


def test_two_entries_offering_one_tool_name_are_refused(
    api: Caller, catalogue: Callable[..., str]
) -> None:
    catalogue("")
    entry = '[[mcp_servers]]\ncommand = "python3"\nargs = ["examples/payroll/server.py"]\n'

    response = post_toml(api, AGENT + entry + entry)

    assert response.status_code == 400
    codes = {problem["code"] for problem in error_of(response)["details"]["errors"]}
    assert codes == {"duplicate_tool"}


def test_without_a_catalogue_every_entry_is_an_unknown_mcp_server(
    api: Caller, settings: Any
) -> None:
    settings.GATEHOUSE_MCP_SERVERS = ""
    installation.reset()
    entry = '[[mcp_servers]]\ncommand = "python3"\nargs = ["examples/payroll/server.py"]\n'

    response = post_toml(api, AGENT + entry)

    assert response.status_code == 400
    [problem] = error_of(response)["details"]["errors"]
    assert problem["code"] == "unknown_mcp_server"
    assert "The catalogue has no servers at all" in problem["message"]


def test_a_gatehouse_model_with_mcp_servers_keeps_gatehouses_hash_and_gets_the_tools(
    api: Caller, catalogue: Callable[..., str]
) -> None:
    catalogue("")
    text = (
        'model = "echo"\nsystem_prompt = "x"\n\n'
        '[[mcp_servers]]\ncommand = "python3"\nargs = ["examples/graph-service/server.py"]\n'
    )

    response = post_toml(api, text)

    assert response.status_code == 201, response.content
    definition = api.get(f"/v1/agents/{response.json()['agent']}").json()["definition"]
    assert definition["tools"] == ["issue_refund", "lookup_dispute", "send_notice"]
    same = api.post("/v1/agents", {"model": "echo", "prompt": "x", "tools": definition["tools"]})
    assert same.json() == {"agent": response.json()["agent"], "created": False}


def test_a_catalogue_server_that_will_not_start_is_named_and_nothing_is_stored(
    api: Caller, catalogue: Callable[..., str]
) -> None:
    catalogue(
        '[servers.broken]\ncommand = "sh"\nargs = ["-c", "echo \'no licence\' >&2; exit 3"]\n'
    )
    entry = '[[mcp_servers]]\ncommand = "sh"\nargs = ["-c", "echo \'no licence\' >&2; exit 3"]\n'

    response = post_toml(api, AGENT + entry)

    assert response.status_code == 400
    [problem] = error_of(response)["details"]["errors"]
    assert (problem["code"], problem["field"]) == ("mcp_server_unavailable", "mcp_servers[0]")
    assert "the catalogue's server `broken`" in problem["message"]
    assert "no licence" in problem["message"]
    assert not AgentDefinition.objects.exists()
