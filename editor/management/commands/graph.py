"""``manage.py graph``: validate a graph document, or print its hash, from the command line.

``graph validate FILE`` prints the body ``POST /v1/graphs/validate`` answers, as indented JSON,
and exits 0 when the document is valid, 1 when it is not. ``graph hash FILE`` prints the
document's hash alone and exits 0, warning on standard error when the document parses but does
not validate; it exits 1 when the document does not parse. Both exit 2 when the file cannot be
read or the command is misused. ``FILE`` may be ``-`` for standard input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from editor.graph import MalformedDocument, graph_hash, parse_document, validate, validate_document

EXIT_INVALID = 1
EXIT_UNUSABLE = 2


class Command(BaseCommand):
    help = "Validate a graph document (graph validate FILE) or print its hash (graph hash FILE)."
    # Reads a file and prints: no database, so no system or migration checks to wait for.
    requires_system_checks = ()

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="{validate,hash}")
        validate_parser = actions.add_parser(
            "validate",
            help="print the validation result as JSON; exit 0 when valid, 1 when not",
        )
        validate_parser.add_argument("file", help="the graph document (JSON), or - for stdin")
        hash_parser = actions.add_parser(
            "hash", help="print the document's hash; exit 1 when it does not parse"
        )
        hash_parser.add_argument("file", help="the graph document (JSON), or - for stdin")

    def handle(self, *args: Any, action: str, file: str, **options: Any) -> None:
        data = _read(file)
        if action == "validate":
            self._validate(data)
        else:
            self._hash(file, data)

    def _validate(self, data: bytes) -> None:
        body = validate_document(
            data,
            max_bytes=settings.GATEHOUSE_MAX_BODY_BYTES,
            max_nodes=settings.GATEHOUSE_MAX_NODES,
            max_edges=settings.GATEHOUSE_MAX_EDGES,
        )
        self.stdout.write(json.dumps(body, indent=2, ensure_ascii=False))
        if not body["valid"]:
            self.stdout.flush()
            sys.exit(EXIT_INVALID)

    def _hash(self, file: str, data: bytes) -> None:
        try:
            graph = parse_document(data)
        except MalformedDocument as error:
            raise CommandError(f"{file}: {error}", returncode=EXIT_INVALID) from None
        self.stdout.write(graph_hash(graph))
        errors = validate(
            graph, max_nodes=settings.GATEHOUSE_MAX_NODES, max_edges=settings.GATEHOUSE_MAX_EDGES
        )
        if errors:
            count = len(errors)
            self.stderr.write(
                f"warning: {file} parses but is not valid ({count} error"
                f"{'' if count == 1 else 's'}); `graph validate {file}` lists them",
                style_func=self.style.WARNING,
            )


def _read(file: str) -> bytes:
    if file == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(file).read_bytes()
    except OSError as error:
        reason = error.strerror or str(error)
        raise CommandError(f"cannot read {file}: {reason}", returncode=EXIT_UNUSABLE) from None
