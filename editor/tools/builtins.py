"""Every built-in tool, in one list (spec 04, *Registries*)."""

from __future__ import annotations

from collections.abc import Sequence

from editor.engine.ports import ToolSpec
from editor.tools.basic import basic_tools
from editor.tools.http import http_request_tool
from editor.tools.panel import panel_tools

__all__ = ["builtin_tools"]


def builtin_tools(http_allow: Sequence[str] = ()) -> list[ToolSpec]:
    return [*basic_tools(), *panel_tools(), http_request_tool(http_allow)]
