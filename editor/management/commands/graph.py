"""``manage.py graph``: validate a graph document, or print its hash, from the command line.

``graph validate FILE`` prints the body ``POST /v1/graphs/validate`` answers, as indented JSON,
and exits 0 when the document is valid, 1 when it is not. ``graph hash FILE`` prints the
document's hash alone and exits 0, warning on standard error when the document parses but does
not validate; it exits 1 when the document does not parse. Both exit 2 when the file cannot be
read or the command is misused. ``FILE`` may be ``-`` for standard input. Neither touches the
database.

``graph export HASH [-o FILE]`` prints a stored graph's canonical bytes (the export of
``GET /v1/graphs/{hash}/export``) with no trailing newline, or writes them to ``FILE``; it exits
1 when no graph has that hash. ``graph import FILE --document SLUG`` replaces the document's
draft with the file's text (creating the document when it is missing) and prints the slug; it
exits 1 when the file cannot be read as UTF-8 text or the slug is not one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from editor.graph import MalformedDocument, graph_hash, parse_document, validate, validate_document
from editor.graph.jsonio import pretty_json
from editor.services import documents
from editor.services.documents import graphs
from editor.services.errors import ServiceError, UnknownGraph

EXIT_INVALID = 1
EXIT_FAILED = 1
EXIT_UNUSABLE = 2


class Command(BaseCommand):
    help = (
        "Validate a graph document (graph validate FILE), print its hash (graph hash FILE), "
        "export a stored graph (graph export HASH) or import a draft (graph import FILE "
        "--document SLUG)."
    )
    # validate and hash read a file and print: no system or migration checks to wait for.
    requires_system_checks = ()

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(
            dest="action", required=True, metavar="{validate,hash,export,import}"
        )
        validate_parser = actions.add_parser(
            "validate",
            help="print the validation result as JSON; exit 0 when valid, 1 when not",
        )
        validate_parser.add_argument("file", help="the graph document (JSON), or - for stdin")
        hash_parser = actions.add_parser(
            "hash", help="print the document's hash; exit 1 when it does not parse"
        )
        hash_parser.add_argument("file", help="the graph document (JSON), or - for stdin")
        export_parser = actions.add_parser(
            "export", help="print a stored graph's canonical bytes; exit 1 for an unknown hash"
        )
        export_parser.add_argument("hash", help="the graph's hash, sha256:<64 hex>")
        export_parser.add_argument(
            "-o", "--output", metavar="FILE", help="write the bytes to FILE instead"
        )
        import_parser = actions.add_parser(
            "import", help="replace a document's draft with a file's text; print the slug"
        )
        import_parser.add_argument("file", help="the draft text, or - for stdin")
        import_parser.add_argument(
            "--document", required=True, metavar="SLUG", help="the document (created if missing)"
        )

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if action == "export":
            self._export(options["hash"], options["output"], to_caller=options.get("stdout"))
        elif action == "import":
            self._import(options["file"], options["document"])
        elif action == "validate":
            self._validate(_read(options["file"]))
        else:
            self._hash(options["file"], _read(options["file"]))

    def _validate(self, data: bytes) -> None:
        body = validate_document(
            data,
            max_bytes=settings.GATEHOUSE_MAX_BODY_BYTES,
            max_nodes=settings.GATEHOUSE_MAX_NODES,
            max_edges=settings.GATEHOUSE_MAX_EDGES,
        )
        self.stdout.write(pretty_json(body))
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

    def _export(self, digest: str, output: str | None, *, to_caller: Any) -> None:
        try:
            data = graphs.export_graph(digest)
        except UnknownGraph:
            raise CommandError(f"no graph {digest} is stored", returncode=EXIT_FAILED) from None
        if output is not None:
            try:
                Path(output).write_bytes(data)
            except OSError as error:
                reason = error.strerror or str(error)
                raise CommandError(
                    f"cannot write {output}: {reason}", returncode=EXIT_FAILED
                ) from None
        elif to_caller is None:
            # The bytes exactly, whatever the terminal's encoding: they are what is hashed.
            self.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            self.stdout.write(data.decode("utf-8"), ending="")

    def _import(self, file: str, slug: str) -> None:
        try:
            text = _read(file).decode("utf-8")
        except CommandError as error:
            raise CommandError(str(error), returncode=EXIT_FAILED) from None
        except UnicodeDecodeError as error:
            raise CommandError(
                f"{file} is not UTF-8 text: {error.reason} at byte {error.start}",
                returncode=EXIT_FAILED,
            ) from None
        try:
            imported, _ = documents.import_draft(slug, text)
        except ServiceError as error:
            raise CommandError(f"--document {slug}: {error}", returncode=EXIT_FAILED) from None
        self.stdout.write(imported)


def _read(file: str) -> bytes:
    if file == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(file).read_bytes()
    except OSError as error:
        reason = error.strerror or str(error)
        raise CommandError(f"cannot read {file}: {reason}", returncode=EXIT_UNUSABLE) from None
