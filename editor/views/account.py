"""``/account/``: the signed-in user's password and their own API tokens.

A wrong current password counts as a failed sign-in (``editor.services.password_attempts``):
five lock the password form, like the sign-in form, for the cool-off.

A new token is shown once, in the response to the POST that created it: it is never put in a
URL, a redirect, the session or a message, and the page is not cached. Only its digest is kept.
"""

from __future__ import annotations

import math
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth.forms import PasswordChangeForm
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from editor.services import password_attempts, tokens

TOO_MANY_REQUESTS = 429


class PasswordForm(PasswordChangeForm):
    """Django's password change form, without the autofocus: the page holds other forms."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["old_password"].widget.attrs.pop("autofocus", None)


class NewTokenForm(forms.Form):
    name = forms.CharField(
        label="Name",
        max_length=tokens.NAME_LENGTH,
        help_text="What the token is for, so you can tell your tokens apart.",
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # "id_token_name", not "id_name": the field shares the page with the password form.
        kwargs["auto_id"] = "id_token_%s"
        super().__init__(*args, **kwargs)


@never_cache
@require_safe
def account(request: HttpRequest) -> HttpResponse:
    return _account_page(request)


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def change_password(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        # The address bar shows this URL after a refused change; coming back to it is harmless.
        return redirect(_account_url("password"))
    if not password_attempts.password_change_allowed(request):
        return _password_locked(request)
    form = PasswordForm(request.user, request.POST)
    if not form.is_valid():
        wrong = form.has_error("old_password", "password_incorrect")
        if wrong and not password_attempts.count_wrong_password(request):
            return _password_locked(request)
        return _account_page(request, password_form=form)
    password_attempts.count_right_password(request)
    user = form.save()
    update_session_auth_hash(request, user)
    messages.success(
        request,
        "Your password was changed. You are still signed in here; "
        "other sessions signed in as you have been signed out.",
    )
    # To the top of the page, where the message is shown.
    return redirect("account")


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def new_token(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return redirect(_account_url("tokens"))
    form = NewTokenForm(request.POST)
    if not form.is_valid():
        return _account_page(request, token_form=form)
    token, raw = tokens.create_token(request.user, form.cleaned_data["name"])
    # Rendered here and nowhere else: after this response the token cannot be shown again.
    return _account_page(request, new_token=token, new_token_value=raw)


@never_cache
@require_POST
def revoke_token(request: HttpRequest, token_id: int) -> HttpResponse:
    token = tokens.tokens_of(request.user).filter(pk=token_id).first()
    if token is None:
        # Someone else's token, or none at all: the same answer, so ids reveal nothing.
        raise Http404("No such API token.")
    if tokens.revoke_token(request.user, token_id):
        messages.success(request, f"Revoked the API token “{token.name}”.")
    else:
        messages.info(request, f"The API token “{token.name}” was already revoked.")
    return redirect("account")


def _password_locked(request: HttpRequest) -> HttpResponse:
    """429: the password form is locked; the page says when it opens again."""
    lifts_at = password_attempts.lock_lifts_at(request)
    seconds = max(1, math.ceil((lifts_at - timezone.now()).total_seconds()))
    response = render(
        request,
        "account/password_locked.html",
        {"lifts_at": lifts_at, "minutes": math.ceil(seconds / 60)},
        status=TOO_MANY_REQUESTS,
    )
    response["Retry-After"] = str(seconds)
    return response


def _account_url(section: str) -> str:
    return f"{reverse('account')}#{section}"


def _account_page(
    request: HttpRequest,
    *,
    password_form: PasswordForm | None = None,
    token_form: NewTokenForm | None = None,
    new_token: tokens.Token | None = None,
    new_token_value: str = "",
) -> HttpResponse:
    if password_form is None:
        password_form = PasswordForm(request.user)
    if token_form is None:
        token_form = NewTokenForm()
    return render(
        request,
        "account/account.html",
        {
            "password_form": password_form,
            "token_form": token_form,
            "tokens": tokens.tokens_of(request.user),
            "new_token": new_token,
            "new_token_value": new_token_value,
        },
    )
