"""Users of their own for the quota and rate attacks (cases 50-59): each with small limits of
its own (``UserUsage.limits``, as an operator sets them on the admin's usage rows), so that an
attack trips its limit in seconds while the shared server keeps the installation's defaults for
``mallory`` and every other attack."""

from __future__ import annotations

import json
from typing import Any

from tests.hostile.steps import _api, sign_in


def user_with_limits(
    corpus: Any, name: str, limits: dict[str, int], *, browser: bool = False
) -> None:
    """Creates ``name`` (author and operator) with ``limits``; its API client is ``name`` and,
    with ``browser``, its signed-in session ``name_browser``."""
    users_with_limits(corpus, {name: limits}, browser=browser)


def users_with_limits(
    corpus: Any, limits: dict[str, dict[str, int]], *, browser: bool = False
) -> None:
    """:func:`user_with_limits` for each user of ``limits``, in one ``manage.py shell``. Users
    without a browser session get no password (hashing one takes a good part of a second)."""
    password = corpus.users.password if browser else None
    code = (
        "from django.contrib.auth import get_user_model\n"
        "from django.contrib.auth.models import Group\n"
        "from editor.models import UserUsage\n"
        "from editor.services.tokens import create_token\n"
        f"for name, limits in {limits!r}.items():\n"
        f"    user = get_user_model().objects.create_user(name, password={password!r})\n"
        "    user.groups.set(Group.objects.filter(name__in=['authors', 'operators']))\n"
        "    UserUsage.objects.update_or_create(user=user, defaults={'limits': limits})\n"
        "    print('TOKEN', name, create_token(user, 'corpus')[1])\n"
    )
    for line in corpus.shell(code).splitlines():
        if line.startswith("TOKEN "):
            _, name, token = line.split()
            corpus.clients[name] = _api(token)
            if browser:
                assert password is not None
                corpus.clients[f"{name}_browser"] = sign_in(corpus.server.url, name, password)


def usage(corpus: Any, name: str) -> dict[str, Any]:
    """What the database holds for ``name``: the stored total and the sums it stands for."""
    code = (
        "import json\n"
        "from django.db.models import Sum\n"
        "from editor.models import Document, DraftRevision, UserUsage\n"
        f"row = UserUsage.objects.get(user__username={name!r})\n"
        f"revisions = DraftRevision.objects.filter(created_by__username={name!r})\n"
        "print('USAGE', json.dumps({'stored_bytes': row.stored_bytes, "
        "'revision_bytes': revisions.aggregate(t=Sum('size'))['t'] or 0, "
        "'revisions': revisions.count(), "
        f"'documents': Document.objects.filter(created_by__username={name!r}).count()}}))\n"
    )
    found: dict[str, Any] = json.loads(corpus.shell(code).split("USAGE ")[-1])
    return found


def refused(answer: Any, status: int, code: str, setting: str) -> dict[str, Any]:
    """The refusal a quota or a rate answers: its status, code, and the message naming it."""
    assert answer.status_code == status, (answer.status_code, answer.text[:500])
    error: dict[str, Any] = answer.json()["error"]
    assert error["code"] == code, error
    assert f"({setting})" in error["message"], error["message"]
    assert error["details"]["setting"] == setting
    if status == 429:
        assert 1 <= int(answer.headers["Retry-After"]) <= 3600
        assert "resets at" in error["message"]
        assert error["details"]["resets_at"]
    else:
        assert "does not reset with time" in error["message"]
    return error
