"""A linear pre-scan of TOML text that bounds what ``tomllib`` would be asked to build.

``tomllib`` costs time and memory quadratic in the depth of a dotted key (a 60 KB key 30,000
parts deep took gigabytes), recurses once per nested array or inline table (100,000 ``[``
raise ``RecursionError``) and converts integers of any length (a million digits raise
``ValueError`` past Python's 4,300-digit limit). So before it runs, :func:`scan_toml` reads
the text once, in time linear in its length, and refuses:

* a key deeper than :data:`MAX_DEPTH` levels, counting a table header's parts
  (``[a.b.c]``), a dotted key's parts (``a.b.c = 1``) and the arrays and inline tables its
  value opens (``a = [[{b = 1}]]`` is four levels), the way the JSON value it stands for
  would nest;
* a dotted key or header of more than :data:`MAX_KEY_PARTS` parts;
* more than :data:`MAX_ENTRIES` keys and nested values in all (each part of a dotted key
  and each array or inline table counts: each may become a table of its own, so this bounds
  the memory of what is built, about a kilobyte each, whatever the text's shape);
* a bare value (a number, a date, ``true``) longer than :data:`MAX_BARE_VALUE` characters.

The scan is a small tokenizer: it knows TOML's comments and its four kinds of strings (basic,
literal, and the multi-line form of each), so nothing inside a string or a comment is counted.
It does not check the rest of the grammar: what it lets through, ``tomllib`` still reads and
may refuse. Where it expects a key and finds something no TOML key starts with, the text is
not TOML and it says so with the line.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "MAX_BARE_VALUE",
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "MAX_KEY_PARTS",
    "TomlTooComplex",
    "scan_toml",
]

#: The deepest a value may nest, as in JSON documents (``editor.graph.jsonio.MAX_DEPTH``).
MAX_DEPTH = 127
#: The most parts one dotted key or table header may have (``tomllib``'s cost is quadratic
#: in it, per key).
MAX_KEY_PARTS = 16
#: The most key parts and arrays or inline tables one text may have in all (an agent file
#: has a few dozen; 10,000 tables are about 10 MB).
MAX_ENTRIES = 10_000
#: The longest bare value: a 64-bit integer is at most 20 characters (more with ``_``), a
#: date-time with an offset and fractional seconds about 35.
MAX_BARE_VALUE = 64

_BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_BARE_VALUE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+.:")
_BLANK = " \t"


@dataclass(frozen=True, slots=True)
class TomlTooComplex(ValueError):
    """Why the text is refused before it is parsed, and the line (1-based) where."""

    message: str
    line: int

    def __str__(self) -> str:
        return f"{self.message} (line {self.line})"


class _Scanner:
    __slots__ = ("entries", "line", "position", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self.line = 1
        self.entries = 0

    def count(self, entries: int) -> None:
        self.entries += entries
        if self.entries > MAX_ENTRIES:
            raise self.refuse(
                f"the file has more than {MAX_ENTRIES} keys, arrays and inline tables, "
                "the most an agent file may have"
            )

    def refuse(self, message: str) -> TomlTooComplex:
        return TomlTooComplex(message, self.line)

    def skip_blanks(self) -> None:
        text, position = self.text, self.position
        while position < len(text) and text[position] in _BLANK:
            position += 1
        self.position = position

    def skip_comment(self) -> None:
        end = self.text.find("\n", self.position)
        self.position = len(self.text) if end < 0 else end

    def skip_string(self) -> None:
        """Past the string starting at ``position`` (a quote); an unterminated one runs to
        the end (``tomllib`` refuses it)."""
        text, position = self.text, self.position
        quote = text[position]
        if text.startswith(quote * 3, position):
            self.position = position + 3
            self._skip_multi_line(quote)
            return
        position += 1
        while position < len(text):
            char = text[position]
            if char == quote:
                self.position = position + 1
                return
            if char == "\n":
                break  # tomllib refuses a newline in a one-line string
            if char == "\\" and quote == '"':
                position += 1
            position += 1
        self.position = position

    def _skip_multi_line(self, quote: str) -> None:
        text, position = self.text, self.position
        closing = quote * 3
        while position < len(text):
            char = text[position]
            if char == "\n":
                self.line += 1
            elif char == "\\" and quote == '"':
                if position + 1 < len(text) and text[position + 1] == "\n":
                    self.line += 1
                position += 2
                continue
            elif text.startswith(closing, position):
                position += 3
                # Up to two more quotes are content just before the closing ones.
                extra = 0
                while extra < 2 and position < len(text) and text[position] == quote:
                    position += 1
                    extra += 1
                self.position = position
                return
            position += 1
        self.position = position

    def key_parts(self) -> int:
        """Reads a (dotted) key at ``position``; how many parts it has."""
        text = self.text
        parts = 0
        while True:
            self.skip_blanks()
            start = self.position
            if start < len(text) and text[start] in "\"'":
                if text.startswith(text[start] * 3, start):
                    raise self.refuse("a key cannot be a multi-line string")
                self.skip_string()
            else:
                position = start
                while position < len(text) and text[position] in _BARE_KEY:
                    position += 1
                if position == start:
                    found = repr(text[start]) if start < len(text) else "the end of the file"
                    raise self.refuse(f"expected a key, found {found}")
                self.position = position
            parts += 1
            if parts > MAX_KEY_PARTS:
                raise self.refuse(
                    f"a key has more than {MAX_KEY_PARTS} parts, "
                    "the most an agent file's key may have"
                )
            self.skip_blanks()
            if self.position < len(text) and text[self.position] == ".":
                self.position += 1
                continue
            self.count(parts)
            return parts

    def bare_value(self) -> None:
        text, start = self.text, self.position
        position = start
        while position < len(text) and text[position] in _BARE_VALUE:
            position += 1
        if position - start > MAX_BARE_VALUE:
            raise self.refuse(
                f"a value of {position - start} characters ({text[start : start + 12]}…) is "
                f"longer than the {MAX_BARE_VALUE} a number or a date may have"
            )
        self.position = max(position, start + 1)


def _too_deep(scanner: _Scanner) -> TomlTooComplex:
    return scanner.refuse(
        f"values nest more than {MAX_DEPTH} levels deep (table headers, dotted keys, arrays "
        "and inline tables together), the most an agent file may have"
    )


def scan_toml(text: str) -> None:
    """Refuse (:class:`TomlTooComplex`) TOML text ``tomllib`` would take too long or too much
    memory to read, or could not read without crashing; see the module's docstring."""
    scanner = _Scanner(text)
    # The open arrays (``[``) and inline tables (``{``), each with the depth of its items.
    open_values: list[tuple[str, int]] = []
    header_depth = 0
    depth = 0  # of the value being read
    expect_key = True
    while scanner.position < len(text):
        char = text[scanner.position]
        if char == "\n":
            scanner.line += 1
            scanner.position += 1
            if not open_values:
                expect_key = True
            continue
        if char in " \t\r":
            scanner.position += 1
            continue
        if char == "#":
            scanner.skip_comment()
            continue
        if expect_key:
            if not open_values and char == "[":
                scanner.position += 1
                of_tables = text.startswith("[", scanner.position)
                scanner.position += of_tables
                # An array of tables is one level more: the array, then its table.
                header_depth = scanner.key_parts() + of_tables
                if header_depth > MAX_DEPTH:
                    raise _too_deep(scanner)
                closing = "]]" if of_tables else "]"
                if not text.startswith(closing, scanner.position):
                    raise scanner.refuse(f"expected `{closing}` closing a table header")
                scanner.position += len(closing)
                continue
            if open_values and char == "}":
                depth = open_values.pop()[1] - 1
                scanner.position += 1
                expect_key = False
                continue
            base = open_values[-1][1] - 1 if open_values else header_depth
            depth = base + scanner.key_parts()
            if depth > MAX_DEPTH:
                raise _too_deep(scanner)
            expect_key = False
            continue
        if char in "\"'":
            scanner.skip_string()
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise _too_deep(scanner)
            scanner.count(1)
            open_values.append((char, depth))
            scanner.position += 1
            expect_key = char == "{"
        elif char in "]}":
            if open_values:
                depth = open_values.pop()[1] - 1
            scanner.position += 1
        elif char == ",":
            if open_values:
                kind, items = open_values[-1]
                expect_key = kind == "{"
                depth = items if kind == "[" else depth
            scanner.position += 1
        elif char in _BARE_VALUE:
            scanner.bare_value()
        else:
            scanner.position += 1  # `=` and whatever tomllib refuses
    return None
