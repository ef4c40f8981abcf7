"""``/admin/usage/``: every user's quotas and rates beside their limits, for operators (staff)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from editor.services import quotas
from editor.services.numbers import strict_int

__all__ = ["usage_page"]

#: The last page asked for that is read: past any installation's users, and its offset within
#: a database integer.
MAX_PAGE = 10**9


@require_safe
def _usage_page(request: HttpRequest) -> HttpResponse:
    # A page that is not a whole number from 1 is a plain 400 naming it (views.errors).
    page = strict_int(request.GET.get("page", "1").strip(), "page", minimum=1, maximum=MAX_PAGE)
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
