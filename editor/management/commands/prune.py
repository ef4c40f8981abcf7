"""``manage.py prune``: data retention. Removes the runs that finished (completed, failed or
abandoned) more than ``GATEHOUSE_FINISHED_RUN_RETENTION_DAYS`` days ago, with their event logs,
the test runs of drafts that finished more than ``GATEHOUSE_TEST_RUN_RETENTION_DAYS`` days ago
(14 unless set), and the draft revisions saved more than
``GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS`` days ago
(but the draft's current state and the revisions frozen as versions), in small transactions
that let the site keep writing (:mod:`editor.services.retention`).

Without a setting nothing of its kind is removed (kept forever). ``--dry-run`` counts instead.
Run it from cron or a systemd timer, daily say; a second prune running at the same time only
finds less to do.
"""

from __future__ import annotations

from argparse import ArgumentParser, ArgumentTypeError
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from editor.services.quotas import forget_old_counters
from editor.services.retention import (
    Batch,
    finished_cutoff,
    prune_draft_revisions,
    prune_finished_runs,
)


def _positive(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 60:
        raise ArgumentTypeError(f"must be a number of seconds from 0 to 60, not {text!r}")
    return value


class Command(BaseCommand):
    help = (
        "Remove the runs that finished more than GATEHOUSE_FINISHED_RUN_RETENTION_DAYS days "
        "ago, with their events, and the draft revisions older than "
        "GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS days, in small batches."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="count what would be removed; remove nothing"
        )
        parser.add_argument(
            "--batch-runs", type=_positive, default=500, help="most runs per transaction (500)"
        )
        parser.add_argument(
            "--batch-events",
            type=_positive,
            default=10_000,
            help="most events per transaction (10000)",
        )
        parser.add_argument(
            "--batch-revisions",
            type=_positive,
            default=1_000,
            help="most draft revisions per transaction (1000)",
        )
        parser.add_argument(
            "--pause",
            type=_seconds,
            default=0.05,
            help="seconds to wait between transactions, 0 to 60 (0.05)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            self._test_runs(options)
            self._runs(options)
            self._revisions(options)
            if not options["dry_run"]:
                # The rate counters of windows that ended (an hour at most): nothing reads them.
                forgotten = forget_old_counters()
                if options["verbosity"] > 1:
                    self.stdout.write(f"  removed {forgotten} rate counters of past windows")
        except KeyboardInterrupt:
            raise CommandError("Stopped; what was removed stays removed, run it again.") from None

    def _runs(self, options: dict[str, Any]) -> None:
        days = settings.GATEHOUSE_FINISHED_RUN_RETENTION_DAYS
        if days is None:
            self.stdout.write(
                "GATEHOUSE_FINISHED_RUN_RETENTION_DAYS is not set: finished runs are kept "
                "forever. Nothing removed."
            )
            return
        cutoff = finished_cutoff(days)
        verbosity = options["verbosity"]

        def progress(batch: Batch) -> None:
            if verbosity > 1:
                self.stdout.write(f"  removed {batch.runs} runs, {batch.events} events")

        report = prune_finished_runs(
            cutoff,
            batch_runs=options["batch_runs"],
            batch_events=options["batch_events"],
            pause=options["pause"],
            dry_run=options["dry_run"],
            on_batch=progress,
        )
        when = cutoff.strftime("%Y-%m-%d %H:%M UTC")
        if options["dry_run"]:
            self.stdout.write(
                f"{report.runs} runs finished before {when} ({report.events} events) would be "
                "removed."
            )
            return
        self.stdout.write(
            f"Removed {report.runs} runs finished before {when} ({report.events} events) in "
            f"{report.batches} batches."
        )

    def _test_runs(self, options: dict[str, Any]) -> None:
        cutoff = finished_cutoff(settings.GATEHOUSE_TEST_RUN_RETENTION_DAYS)
        report = prune_finished_runs(
            cutoff,
            batch_runs=options["batch_runs"],
            batch_events=options["batch_events"],
            pause=options["pause"],
            dry_run=options["dry_run"],
            tests_only=True,
        )
        when = cutoff.strftime("%Y-%m-%d %H:%M UTC")
        verb = "would be removed" if options["dry_run"] else "removed"
        self.stdout.write(
            f"{report.runs} test runs finished before {when} ({report.events} events) {verb}."
        )

    def _revisions(self, options: dict[str, Any]) -> None:
        days = settings.GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS
        if days is None:
            self.stdout.write(
                "GATEHOUSE_DRAFT_REVISION_RETENTION_DAYS is not set: draft revisions are kept "
                "(up to GATEHOUSE_DRAFT_HISTORY a draft). Nothing removed."
            )
            return
        cutoff = finished_cutoff(days)
        verbosity = options["verbosity"]
        batches = 0

        def progress(removed: int) -> None:
            nonlocal batches
            batches += 1
            if verbosity > 1:
                self.stdout.write(f"  removed {removed} draft revisions")

        removed = prune_draft_revisions(
            cutoff,
            batch_revisions=options["batch_revisions"],
            pause=options["pause"],
            dry_run=options["dry_run"],
            on_batch=progress,
        )
        when = cutoff.strftime("%Y-%m-%d %H:%M UTC")
        if options["dry_run"]:
            self.stdout.write(f"{removed} draft revisions saved before {when} would be removed.")
            return
        self.stdout.write(
            f"Removed {removed} draft revisions saved before {when} in {batches} batches."
        )
