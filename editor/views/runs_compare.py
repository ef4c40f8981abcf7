"""Two runs of one document side by side (``/runs/compare/?run=a&run=b``), chosen on the
**Runs** page: each node's state, input, output and their differences, durations, tokens."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from editor.services.errors import NotComparable
from editor.services.runs import compare as run_compare

__all__ = ["compare_page"]


@require_safe
def compare_page(request: HttpRequest) -> HttpResponse:
    chosen = request.GET.getlist("run")
    if len(chosen) != 2:
        problem = f"Choose exactly two runs to compare ({len(chosen)} chosen)."
        return render(request, "runs/compare.html", {"problem": problem}, status=400)
    try:
        comparison = run_compare.compare_runs(chosen[0], chosen[1], older_first=True)
    except NotComparable as refused:
        return render(request, "runs/compare.html", {"problem": str(refused)}, status=400)
    return render(request, "runs/compare.html", {"comparison": comparison})
