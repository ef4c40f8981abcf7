"""An idle worker looks at the queue every ``GATEHOUSE_WORKER_POLL_MS`` (django-tasks-db's own
default is a second, most of what a person waits between starting a run and seeing it move);
``--interval`` still wins."""

from __future__ import annotations

from pytest_django import Settings

from editor.management.commands.db_worker import Command


def test_an_idle_worker_polls_as_often_as_the_setting_says(settings: Settings) -> None:
    settings.GATEHOUSE_WORKER_POLL_MS = 250
    parser = Command().create_parser("manage.py", "db_worker")
    assert parser.parse_args([]).interval == 0.25


def test_the_interval_given_on_the_command_line_wins(settings: Settings) -> None:
    settings.GATEHOUSE_WORKER_POLL_MS = 250
    parser = Command().create_parser("manage.py", "db_worker")
    assert parser.parse_args(["--interval", "2"]).interval == 2
