"""``manage.py audit_events``: unknown event kinds and unmodeled fields in the stored log.

Prints a table of each event kind this version does not model, and each payload field of a
modeled kind that it does not model, with how many stored events carry it. Exits 0 when there
are none, 1 when there are some (spec 07, *Management commands*).
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand

from editor.services.audit import audit_stored_events

EXIT_FINDINGS = 1


class Command(BaseCommand):
    help = (
        "Report the stored events' unknown kinds and unmodeled payload fields, with counts; "
        "exit 1 when there are any."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        report = audit_stored_events()
        if report.clean:
            self.stdout.write(
                f"{report.events} events audited: no unknown event kinds, no unmodeled fields."
            )
            return
        rows = [("unknown kind", kind, "", count) for kind, count in report.unknown_kinds.items()]
        rows += [
            ("unmodeled field", kind, name, count)
            for (kind, name), count in report.unmodeled.items()
        ]
        rows.sort(key=lambda row: (row[0] != "unknown kind", row[1], row[2]))
        header = ("finding", "kind", "field", "events")
        table = [
            header,
            *((finding, kind, name, str(count)) for finding, kind, name, count in rows),
        ]
        widths = [max(len(row[column]) for row in table) for column in range(3)]
        for finding, kind, name, count in table:
            line = "  ".join(
                [finding.ljust(widths[0]), kind.ljust(widths[1]), name.ljust(widths[2]), count]
            )
            self.stdout.write(line)
        self.stdout.write(
            f"{report.events} events audited: {sum(report.unknown_kinds.values())} of an unknown "
            f"kind, {len(report.unmodeled)} unmodeled field(s)."
        )
        self.stdout.flush()
        sys.exit(EXIT_FINDINGS)
