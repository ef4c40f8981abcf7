"""The tool registry: built-ins, installation modules, and what GET /v1/tools lists."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from editor.engine.ports import ToolContext, ToolEffect, ToolSpec
from editor.tools import Registry, ToolModuleError, ToolRegistryError, build_registry

BUILTINS = [
    "echo",
    "http_request",
    "merge",
    "panel_collect",
    "panel_prompts",
    "pick",
    "score_text",
    "template",
]
CONTEXT = ToolContext("run", "node", "key", 5.0)


@pytest.fixture
def fake_module() -> Iterator[types.ModuleType]:
    module = types.ModuleType("gatehouse_test_tools")

    def register(registry: Registry) -> None:
        registry.register(
            ToolSpec("shout", "Upper-cases a text.", lambda text, context: text.upper())
        )

    module.register = register  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def test_the_registry_holds_every_built_in_sorted_by_name() -> None:
    registry = build_registry()
    assert registry.names() == BUILTINS
    assert [spec.name for spec in registry.all()] == BUILTINS


def test_every_built_in_has_a_description_schemas_and_an_effect() -> None:
    for spec in build_registry().all():
        described = spec.describe()
        assert described["description"]
        assert isinstance(described["input_schema"], dict)
        assert isinstance(described["output_schema"], dict)
        expected = "write" if spec.name == "http_request" else "read"
        assert described["effect"] == expected


def test_http_request_is_disabled_unless_hosts_are_allowed() -> None:
    assert build_registry().get("http_request").enabled is False
    assert build_registry(http_allow=["example.org"]).get("http_request").enabled is True
    assert all(spec.enabled for spec in build_registry().all() if spec.name != "http_request")


def test_an_installation_module_adds_its_tools(fake_module: types.ModuleType) -> None:
    registry = build_registry(modules=[fake_module.__name__])
    assert "shout" in registry.names()
    assert registry.get("shout").func("hey", CONTEXT) == "HEY"
    assert registry.get("shout").effect is ToolEffect.READ


def test_a_module_that_cannot_be_imported_is_named_in_the_error() -> None:
    with pytest.raises(ToolModuleError, match="`no_such_module_for_gatehouse` cannot be imported"):
        build_registry(modules=["no_such_module_for_gatehouse"])


def test_a_module_without_register_is_refused_by_name(fake_module: types.ModuleType) -> None:
    del fake_module.register
    with pytest.raises(ToolModuleError, match="`gatehouse_test_tools` has no `register"):
        build_registry(modules=[fake_module.__name__])


def test_a_module_that_registers_a_taken_name_is_refused(fake_module: types.ModuleType) -> None:
    fake_module.register = lambda registry: registry.register(  # type: ignore[attr-defined]
        ToolSpec("echo", "Another echo.", lambda value, context: value)
    )
    with pytest.raises(ToolModuleError, match="`echo` is already registered"):
        build_registry(modules=[fake_module.__name__])


def test_an_unknown_name_gives_none() -> None:
    assert build_registry().get("ecko") is None


def test_a_registry_refuses_a_nameless_tool() -> None:
    with pytest.raises(ToolRegistryError):
        Registry([ToolSpec("  ", "blank", lambda value, context: value)])


def test_a_malformed_allow_list_entry_names_the_setting() -> None:
    with pytest.raises(ValueError, match="GATEHOUSE_HTTP_ALLOW: `http://x/y`"):
        build_registry(http_allow=["http://x/y"])


def test_a_module_that_registers_the_structured_answers_tool_is_refused(
    fake_module: types.ModuleType,
) -> None:
    fake_module.register = lambda registry: registry.register(  # type: ignore[attr-defined]
        ToolSpec("salvor_answer", "Mine.", lambda value, context: value)
    )
    with pytest.raises(
        ToolModuleError, match="the tool name `salvor_answer` is reserved for the structured answer"
    ):
        build_registry(modules=[fake_module.__name__])
