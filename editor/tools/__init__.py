"""The tool registry and the built-in tools (spec 04, *Registries*). Pure Python: no Django.

``build_registry(modules, http_allow)`` gives the built-ins (``echo``, ``template``, ``pick``,
``merge``, ``score_text``, ``panel_prompts``, ``panel_collect``, ``http_request``) plus the
tools of each ``GATEHOUSE_TOOL_MODULES`` module; see :mod:`editor.tools.registry` for what such
a module provides. Settings come in as arguments.
"""

from editor.tools.basic import render_template, score
from editor.tools.http import MAX_BODY_BYTES, parse_allow_list
from editor.tools.panel import panel_collect, panel_prompts
from editor.tools.registry import Registry, ToolModuleError, ToolRegistryError, build_registry

__all__ = [
    "MAX_BODY_BYTES",
    "Registry",
    "ToolModuleError",
    "ToolRegistryError",
    "build_registry",
    "panel_collect",
    "panel_prompts",
    "parse_allow_list",
    "render_template",
    "score",
]
