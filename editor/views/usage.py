"""``/admin/usage/``: every user's quotas and rates beside their limits, for operators (staff)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from editor.services import quotas

__all__ = ["usage_page"]


@require_safe
def _usage_page(request: HttpRequest) -> HttpResponse:
    try:
        page = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        page = 1
    rows, more = quotas.usage_listing(page)
    context = {
        **admin.site.each_context(request),
        "title": "Usage and limits",
        "rows": rows,
        "page": page,
        "next_page": page + 1 if more else None,
        "previous_page": page - 1 if page > 1 else None,
    }
    return render(request, "admin/usage.html", context)


#: Staff only, as every admin page (a signed-out visitor goes to the admin's sign-in).
usage_page = admin.site.admin_view(_usage_page)
