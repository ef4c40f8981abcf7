"""The role groups of spec 06: *authors*, *operators* and *approvers*.

Each group holds one permission of :class:`editor.models.Role`; a superuser
holds them all. The data migration ``0002_roles`` creates the groups, and
``post_migrate`` keeps them there after a database is flushed.
"""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission

__all__ = ["ROLES", "ensure_role_groups"]

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
