"""The tool registry: built-ins plus the installation's own modules (spec 04, *Registries*).

An installation adds tools by naming importable modules in ``GATEHOUSE_TOOL_MODULES``. Each
such module defines ``register(registry)``, which calls ``registry.register(ToolSpec(...))``
once per tool::

    from editor.engine.ports import ToolEffect, ToolSpec

    def register(registry):
        registry.register(ToolSpec(
            "shout", "Upper-cases a text.", lambda text, context: text.upper(),
            input_schema={"type": "string"}, output_schema={"type": "string"},
        ))

A module that cannot be imported, has no ``register``, or fails while registering stops
:func:`build_registry` with a :class:`ToolModuleError` naming the module.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence

from editor.engine.ports import ANSWER_TOOL, ANSWER_TOOL_TAKEN, ToolSpec

__all__ = ["Registry", "ToolModuleError", "ToolRegistryError", "build_registry"]


class ToolRegistryError(Exception):
    """A registration the registry refuses (a duplicate or malformed name)."""


class ToolModuleError(ToolRegistryError):
    """A module of ``GATEHOUSE_TOOL_MODULES`` that cannot provide its tools."""

    def __init__(self, module: str, problem: str) -> None:
        super().__init__(f"GATEHOUSE_TOOL_MODULES: the tool module `{module}` {problem}")
        self.module = module


class Registry:
    """Tools by name; implements :class:`editor.engine.ports.ToolRegistry`."""

    def __init__(self, specs: Iterable[ToolSpec] = ()) -> None:
        self._specs: dict[str, ToolSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: ToolSpec) -> None:
        """Add ``spec``; a name is registered once (a second one would silently shadow it)."""
        if not isinstance(spec, ToolSpec):
            raise ToolRegistryError(f"expected a ToolSpec, got {type(spec).__name__}")
        if not isinstance(spec.name, str) or not spec.name.strip():
            raise ToolRegistryError("a tool needs a non-empty name")
        if spec.name == ANSWER_TOOL:  # the structured loop's own tool (spec 08, section 4)
            raise ToolRegistryError(ANSWER_TOOL_TAKEN)
        if spec.name in self._specs:
            raise ToolRegistryError(f"a tool named `{spec.name}` is already registered")
        self._specs[spec.name] = spec

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def names(self) -> list[str]:
        """Every registered name, sorted (suggestions are drawn from it)."""
        return sorted(self._specs)

    def all(self) -> list[ToolSpec]:
        """Every registered tool, sorted by name (``GET /v1/tools`` lists ``spec.describe()``)."""
        return [self._specs[name] for name in self.names()]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)


def build_registry(modules: Sequence[str] = (), http_allow: Sequence[str] = ()) -> Registry:
    """The built-in tools, then each module of ``modules`` (``GATEHOUSE_TOOL_MODULES``) in order.

    ``http_allow`` is ``GATEHOUSE_HTTP_ALLOW``: the ``host[:port]`` entries ``http_request``
    may reach; empty leaves that tool registered but disabled. A malformed entry raises
    :class:`ValueError` naming the setting.
    """
    from editor.tools.builtins import builtin_tools

    registry = Registry(builtin_tools(http_allow))
    for module_name in modules:
        _register_module(registry, module_name)
    return registry


def _register_module(registry: Registry, module_name: str) -> None:
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # ImportError, or anything the module raises while loading
        raise ToolModuleError(
            module_name, f"cannot be imported: {type(error).__name__}: {error}"
        ) from error
    register = getattr(module, "register", None)
    if not callable(register):
        raise ToolModuleError(module_name, "has no `register(registry)` function")
    try:
        register(registry)
    except Exception as error:
        raise ToolModuleError(
            module_name, f"failed to register its tools: {type(error).__name__}: {error}"
        ) from error
