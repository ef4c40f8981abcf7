"""Tokenising condition expressions and references (spec 03, *Lexer*).

The whole text is turned into tokens before the parser sees any of them, so a
lexical error anywhere in the text wins over a syntax error earlier in it.
Every token records the 0-based character (code point) position where it
starts; errors carry the position the spec names.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from editor.graph.errors import ExpressionError
from editor.graph.jsonio import number_from_text
from editor.graph.text import WHITE_SPACE

__all__ = ["Token", "TokenKind", "tokenize"]

_DIGITS = frozenset("0123456789")
_IDENT_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_IDENT_CONTINUE = _IDENT_START | _DIGITS
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r"}


class TokenKind(enum.Enum):
    """What a token is; the value is how the token reads in messages and tests."""

    IDENT = "identifier"
    NUMBER = "number"
    STRING = "string"
    TRUE = "true"
    FALSE = "false"
    NULL = "null"
    DOT = "."
    LPAREN = "("
    RPAREN = ")"
    BANG = "!"
    AND = "&&"
    OR = "||"
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="


_KEYWORDS = {"true": TokenKind.TRUE, "false": TokenKind.FALSE, "null": TokenKind.NULL}
_SINGLE = {"(": TokenKind.LPAREN, ")": TokenKind.RPAREN, ".": TokenKind.DOT}
# A character that is a token alone, or a longer token when `=` follows it.
_WITH_EQUALS = {
    "!": (TokenKind.BANG, TokenKind.NE),
    "<": (TokenKind.LT, TokenKind.LE),
    ">": (TokenKind.GT, TokenKind.GE),
}
# A character that only makes a token when doubled; alone it is an error.
_DOUBLED = {
    "=": (TokenKind.EQ, "a lone `=`; did you mean `==`?"),
    "&": (TokenKind.AND, "a lone `&`; did you mean `&&`?"),
    "|": (TokenKind.OR, "a lone `|`; did you mean `||`?"),
}


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind, its start position and, for literals and names, its value.

    ``value`` is the identifier's name, the string's decoded text or the
    number (``int`` or ``float``, read as spec 01 reads JSON numbers);
    ``None`` for every other kind.
    """

    kind: TokenKind
    position: int
    value: str | int | float | None = None


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens, skipping Unicode ``White_Space``.

    Raises :class:`ExpressionError` at the first lexical error. The length
    limit is the caller's business: it is checked before lexing.
    """
    tokens: list[Token] = []
    length = len(text)
    index = 0
    while index < length:
        char = text[index]
        following = text[index + 1] if index + 1 < length else ""
        if char in WHITE_SPACE:
            index += 1
        elif char in _SINGLE:
            tokens.append(Token(_SINGLE[char], index))
            index += 1
        elif char in _WITH_EQUALS:
            alone, with_equals = _WITH_EQUALS[char]
            if following == "=":
                tokens.append(Token(with_equals, index))
                index += 2
            else:
                tokens.append(Token(alone, index))
                index += 1
        elif char in _DOUBLED:
            kind, message = _DOUBLED[char]
            if following != char:
                raise ExpressionError(message, index)
            tokens.append(Token(kind, index))
            index += 2
        elif char == '"':
            value, index_after = _read_string(text, index)
            tokens.append(Token(TokenKind.STRING, index, value))
            index = index_after
        elif char in _DIGITS or (char == "-" and following in _DIGITS):
            number, index_after = _read_number(text, index)
            tokens.append(Token(TokenKind.NUMBER, index, number))
            index = index_after
        elif char in _IDENT_START:
            end = index + 1
            while end < length and text[end] in _IDENT_CONTINUE:
                end += 1
            name = text[index:end]
            keyword = _KEYWORDS.get(name)
            if keyword is None:
                tokens.append(Token(TokenKind.IDENT, index, name))
            else:
                tokens.append(Token(keyword, index))
            index = end
        else:
            raise ExpressionError(f"an unexpected character `{char}`", index)
    return tokens


def _read_string(text: str, start: int) -> tuple[str, int]:
    """Read the string whose opening quote is at ``start``; return it and the index after it."""
    length = len(text)
    parts: list[str] = []
    index = start + 1
    while index < length:
        char = text[index]
        if char == '"':
            return "".join(parts), index + 1
        if char == "\\":
            index += 1
            if index >= length:
                break
            escaped = text[index]
            replacement = _ESCAPES.get(escaped)
            if replacement is None:
                raise ExpressionError(f"an unsupported string escape `\\{escaped}`", index)
            parts.append(replacement)
        else:
            parts.append(char)
        index += 1
    raise ExpressionError("an unterminated string literal", start)


def _read_number(text: str, start: int) -> tuple[int | float, int]:
    """Read the number starting at ``start``; return its value and the index after it.

    The lexer takes an optional ``-``, digits, and a fraction only when a digit
    follows the ``.``; the text must then be a valid JSON number whose value
    fits a double, else it is ``a malformed number``.
    """
    length = len(text)
    index = start + 1 if text[start] == "-" else start
    digits_start = index
    while index < length and text[index] in _DIGITS:
        index += 1
    leading_zero = text[digits_start] == "0" and index - digits_start > 1
    if index + 1 < length and text[index] == "." and text[index + 1] in _DIGITS:
        index += 2
        while index < length and text[index] in _DIGITS:
            index += 1
    number_text = text[start:index]
    if leading_zero:
        raise ExpressionError(f"a malformed number `{number_text}`", start)
    try:
        return number_from_text(number_text), index
    except ValueError:
        raise ExpressionError(f"a malformed number `{number_text}`", start) from None
