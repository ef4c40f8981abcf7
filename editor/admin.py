"""The admin's own pages for Gatehouse: each user's usage row, where an operator sets the limits
that replace the installation's for that user (``editor.services.quotas``). Every user's usage
beside their limits is on ``/admin/usage/`` (``editor.views.usage``)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from editor.services.quotas import QUOTAS, UsageRow, recount_stored_bytes


@admin.register(UsageRow)
class UsageAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("user", "stored_bytes", "limits")
    search_fields = ("user__username",)
    readonly_fields = ("user", "stored_bytes")
    fields = ("user", "stored_bytes", "limits")
    actions = ("recount",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A row is made for each user as they first store something.
        return False

    def get_form(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, **kwargs)
        names = ", ".join(QUOTAS)
        form.base_fields["limits"].help_text = (
            f'Limits for this user alone, as JSON: {{"stored_bytes": 5000000}}. Names: {names}. '
            "A name left out keeps the installation's limit."
        )
        original = form.clean

        def clean(this: Any) -> Any:
            data = original(this)
            check_limits(data.get("limits"))
            return data

        form.clean = clean
        return form

    @admin.action(description="Recount the stored bytes of the selected users")
    def recount(self, request: HttpRequest, queryset: Any) -> None:
        counted = recount_stored_bytes(queryset.values_list("user_id", flat=True))
        self.message_user(request, f"Recounted the stored bytes of {counted} users.")


def check_limits(limits: Any) -> None:
    if not isinstance(limits, dict):
        raise ValidationError("The limits must be a JSON object.")
    for name, value in limits.items():
        if name not in QUOTAS:
            raise ValidationError(f"{name!r} is not a limit; the names are {', '.join(QUOTAS)}.")
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValidationError(f"The limit {name!r} must be a whole number, at least 0.")
