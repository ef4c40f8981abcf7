"""The permissions behind the roles (``editor.roles.RoleBackend``): a person's own and their
groups' read in one query, with what Django's ``ModelBackend`` answers."""

from __future__ import annotations

import pytest
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from editor.roles import RoleBackend, groups_and_roles
from editor.services.access import can_approve, can_author, can_operate

pytestmark = pytest.mark.django_db


def _fresh(user: User) -> User:
    return User.objects.get(pk=user.pk)  # no cached permissions


def _person(name: str, *groups: str, own: tuple[str, ...] = ()) -> User:
    user = User.objects.create_user(name, password="a-long-enough-password-1")
    for group in groups:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    for codename in own:
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return user


def test_a_person_s_roles_come_from_their_groups_and_their_own_permissions_in_one_query() -> None:
    desk = Group.objects.create(name="desk")
    desk.permissions.add(Permission.objects.get(codename="operate"))
    person = _person("gil", "approvers", "desk", own=("author",))

    user = _fresh(person)
    with CaptureQueriesContext(connection) as captured:
        roles = (can_author(user), can_operate(user), can_approve(user))
        again = can_approve(user)

    assert roles == (True, True, True)
    assert again
    assert len(captured.captured_queries) == 1
    assert RoleBackend().get_all_permissions(_fresh(person)) == ModelBackend().get_all_permissions(
        _fresh(person)
    )


@pytest.mark.parametrize(
    ("groups", "own", "expected"),
    [
        ((), (), (False, False, False)),
        (("approvers",), (), (False, False, True)),
        (("authors", "operators"), (), (True, True, False)),
        ((), ("operate",), (False, True, False)),
    ],
)
def test_each_role_is_held_exactly_as_granted(
    groups: tuple[str, ...], own: tuple[str, ...], expected: tuple[bool, bool, bool]
) -> None:
    user = _fresh(_person("hal", *groups, own=own))

    assert (can_author(user), can_operate(user), can_approve(user)) == expected


def test_an_inactive_person_holds_no_role_and_a_superuser_holds_every_one() -> None:
    idle = _person("ida", "approvers")
    idle.is_active = False
    idle.save()
    boss = User.objects.create_superuser("root", password="a-long-enough-password-1")

    assert RoleBackend().get_all_permissions(_fresh(idle)) == set()
    assert not can_approve(_fresh(idle))
    assert {
        "editor.author",
        "editor.operate",
        "editor.approve",
    } <= RoleBackend().get_all_permissions(_fresh(boss))


def test_a_person_signs_in_with_django_s_password_check(client: object) -> None:
    _person("joy", "approvers")

    answer = client.post(  # type: ignore[attr-defined]
        "/accounts/login/", {"username": "joy", "password": "a-long-enough-password-1"}
    )

    # Django's password check signs them in (sessions name it); the role backend only reads.
    assert answer.status_code == 302
    backend = client.session["_auth_user_backend"]  # type: ignore[attr-defined]
    assert backend == "django.contrib.auth.backends.ModelBackend"
    assert (
        RoleBackend().authenticate(None, username="joy", password="a-long-enough-password-1")
        is None
    )


def test_a_person_s_groups_and_roles_are_read_in_one_query_and_kept_for_the_request() -> None:
    desk = Group.objects.create(name="desk")  # a group without permissions counts too
    Group.objects.create(name="elsewhere")
    person = _person("kim", "approvers", "desk", own=("operate",))

    user = _fresh(person)
    with CaptureQueriesContext(connection) as captured:
        groups = groups_and_roles(user)
        roles = (can_author(user), can_operate(user), can_approve(user))

    assert groups == {"approvers", "desk"}
    assert roles == (False, True, True)
    assert len(captured.captured_queries) == 1
    assert desk.permissions.count() == 0


def test_groups_and_roles_hold_for_people_without_either() -> None:
    nobody = _fresh(_person("lee"))
    boss = _fresh(User.objects.create_superuser("chief", password="a-long-enough-password-1"))
    boss.groups.add(Group.objects.get(name="authors"))

    assert groups_and_roles(nobody) == frozenset()
    assert (can_author(nobody), can_operate(nobody), can_approve(nobody)) == (False,) * 3
    assert groups_and_roles(boss) == {"authors"}
    assert can_operate(boss) and can_approve(boss)
