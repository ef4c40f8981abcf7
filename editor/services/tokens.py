"""API tokens: created and shown once, stored as a SHA-256 digest, revocable."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from editor.models import ApiToken
from editor.services import quotas
from editor.services.access import ActingUser, author_of
from editor.services.errors import NotAllowed

__all__ = [
    "NAME_LENGTH",
    "TOKEN_PREFIX",
    "Token",
    "create_token",
    "find_user",
    "revoke_token",
    "tokens_of",
    "user_for_token",
]

#: Every token starts with this, so a leaked one is easy to recognise.
TOKEN_PREFIX = "gh_"
#: A stored token, as the Account page lists it (its digest, never the token itself).
Token = ApiToken
#: The most characters a token's name may have.
NAME_LENGTH: int = ApiToken._meta.get_field("name").max_length or 0
#: ``last_used_at`` is written at most this often per token, not on every request.
LAST_USE_RESOLUTION = timedelta(minutes=1)


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def create_token(user: ActingUser, name: str) -> tuple[ApiToken, str]:
    """A new token for ``user`` (signed in: :class:`NotAllowed` otherwise): the stored record,
    and the token itself (shown once)."""
    owner = author_of(user)
    if owner is None:
        raise NotAllowed()
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        quotas.check_tokens(owner)
        token = ApiToken.objects.create(
            user=owner, name=name.strip() or "API token", prefix=raw[:10], digest=_digest(raw)
        )
    return token, raw


def user_for_token(raw: str) -> User | None:
    """The active user a presented token belongs to, or ``None``; records the use."""
    if not raw or len(raw) > 200:
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=_digest(raw), revoked_at__isnull=True)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USE_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


def tokens_of(user: ActingUser) -> QuerySet[ApiToken]:
    """The user's tokens, newest first, revoked ones included (none for a user not signed in)."""
    owner = author_of(user)
    return ApiToken.objects.filter(user=owner) if owner else ApiToken.objects.none()


def revoke_token(user: ActingUser, token_id: int) -> bool:
    """Revoke one of ``user``'s tokens; ``False`` when there is no such active token."""
    owner = author_of(user)
    if owner is None:
        return False
    changed = ApiToken.objects.filter(pk=token_id, user=owner, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    return changed == 1


def find_user(username: str) -> User | None:
    """The user with ``username``, or ``None``."""
    return get_user_model().objects.filter(username=username).first()
