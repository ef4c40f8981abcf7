"""The role groups of spec 06: *authors*, *operators* and *approvers*.

Each group holds one permission of :class:`editor.models.Role`; a superuser
holds them all. The data migration ``0002_roles`` creates the groups, and
``post_migrate`` keeps them there after a database is flushed. :class:`RoleBackend`
reads a person's permissions, their roles among them, in one query;
:func:`groups_and_roles` reads their groups with them (the inbox needs both).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission
from django.db.models import CharField, Value

__all__ = ["ROLES", "RoleBackend", "ensure_role_groups", "groups_and_roles"]

#: Group name → the codenames of the permissions it grants.
ROLES: dict[str, tuple[str, ...]] = {
    "authors": ("author",),
    "operators": ("operate",),
    "approvers": ("approve",),
}


def ensure_role_groups(using: str = "default") -> None:
    """Create the role groups, with their permissions, where they are missing."""
    for name, codenames in ROLES.items():
        group, _ = Group.objects.using(using).get_or_create(name=name)
        permissions = Permission.objects.using(using).filter(
            content_type__app_label="editor", codename__in=codenames
        )
        group.permissions.add(*permissions)


class RoleBackend(ModelBackend):
    """Django's ``ModelBackend`` for permissions only: a person's own and their groups' read in
    one query instead of two (every page that checks a role asks once a request). It signs no
    one in: ``ModelBackend``, listed after it, checks passwords, so sessions keep naming the
    backend that signed them in, and when this one answers no to ``has_perm``, ``ModelBackend``
    answers from the permissions this one kept (no query)."""

    def authenticate(
        self, request: Any, username: Any = None, password: Any = None, **kw: Any
    ) -> None:
        return None

    def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if not hasattr(user_obj, _CACHE):
            if user_obj.is_superuser:
                every = Permission.objects.values_list("content_type__app_label", "codename")
                setattr(user_obj, _CACHE, {f"{app}.{code}" for app, code in every.order_by()})
            else:
                _read_groups_and_roles(user_obj)
        cached: set[str] = getattr(user_obj, _CACHE)
        return cached


#: Where Django's ModelBackend keeps a user's permissions for the rest of a request (its
#: ``get_all_permissions``); RoleBackend keeps them there too.
_CACHE = "_perm_cache"


def groups_and_roles(user: Any) -> frozenset[str]:
    """The names of ``user``'s groups, read with their permissions in one query: the
    permissions are kept where ``has_perm`` reads them for the rest of the request (so a role
    check after this asks nothing). A superuser's groups alone (their role checks ask nothing).
    """
    if hasattr(user, _CACHE) or user.is_superuser or not user.is_active:
        return frozenset(user.groups.values_list("name", flat=True))
    return _read_groups_and_roles(user)


def _read_groups_and_roles(user: Any) -> frozenset[str]:
    """``user``'s groups; their permissions and the user's own kept (one query)."""
    fields = ("permissions__content_type__app_label", "permissions__codename")
    held = Group.objects.filter(user=user).values_list("name", *fields).order_by()
    own = Permission.objects.filter(user=user).values_list(
        Value(None, output_field=CharField()), "content_type__app_label", "codename"
    )
    groups, permissions = set(), set()
    for name, app_label, codename in held.union(own.order_by(), all=True):
        if name is not None:
            groups.add(name)
        if codename is not None:
            permissions.add(f"{app_label}.{codename}")
    setattr(user, _CACHE, permissions)
    return frozenset(groups)
