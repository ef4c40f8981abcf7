"""The admin's own pages for Gatehouse: each user's usage row, where an operator sets the limits
that replace the installation's for that user (``editor.services.quotas``). Every user's usage
beside their limits is on ``/admin/usage/`` (``editor.views.usage``)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from editor.services.quotas import ADDRESS_LIMITS, QUOTAS, UsageRow, recount_stored_bytes

__all__ = ["UsageAdmin", "UsageForm", "check_limits"]


def check_limits(limits: Any) -> None:
    """A user's own limits: an object of known names, each a whole number of at least 0."""
    if not isinstance(limits, dict):
        raise ValidationError("The limits must be a JSON object.")
    for name, value in limits.items():
        if name in ADDRESS_LIMITS:
            raise ValidationError(
                f"{name!r} is a limit of an address, not of a user: every user and client "
                f"behind one address shares it, so only {ADDRESS_LIMITS[name].setting} sets it. "
                "Remove it here."
            )
        if name not in QUOTAS:
            raise ValidationError(f"{name!r} is not a limit; the names are {', '.join(QUOTAS)}.")
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValidationError(f"The limit {name!r} must be a whole number, at least 0.")


class UsageForm(forms.ModelForm):
    class Meta:
        model = UsageRow
        fields = ("limits",)
        help_texts = {  # noqa: RUF012 - Django's Meta convention
            "limits": 'Limits for this user alone, as JSON: {"stored_bytes": 5000000}. Names: '
            + ", ".join(QUOTAS)
            + ". A name left out keeps the installation's limit. The rate of an address "
            "(GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE) is the installation's alone.",
        }

    def clean_limits(self) -> Any:
        limits = self.cleaned_data.get("limits")
        check_limits(limits)
        return limits


@admin.register(UsageRow)
class UsageAdmin(admin.ModelAdmin):
    form = UsageForm
    list_display = ("user", "stored_bytes", "limits")
    search_fields = ("user__username",)
    readonly_fields = ("user", "stored_bytes")
    fields = ("user", "stored_bytes", "limits")
    actions = ("recount",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A row is made for each user as they first store something.
        return False

    @admin.action(description="Recount the stored bytes of the selected users")
    def recount(self, request: HttpRequest, queryset: Any) -> None:
        counted = recount_stored_bytes(queryset.values_list("user_id", flat=True))
        self.message_user(request, f"Recounted the stored bytes of {counted} users.")
