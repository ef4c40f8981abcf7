"""``/tools/``: the tool registry of this installation, with each tool's schemas."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from editor.graph.jsonio import pretty_json
from editor.services import runs


def _pretty(schema: Any) -> str | None:
    return None if schema is None else pretty_json(schema)


@require_safe
def tool_list(request: HttpRequest) -> HttpResponse:
    tools = [
        {
            **tool,
            "input_json": _pretty(tool.get("input_schema")),
            "output_json": _pretty(tool.get("output_schema")),
        }
        for tool in runs.list_tools()
    ]
    return render(request, "tools/list.html", {"tools": tools})
