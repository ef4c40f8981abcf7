"""The parser of condition expressions and references (spec 03).

It reads the grammar of spec 03 without recursion: open parentheses live on an
explicit stack, so nesting as deep as the 512-character limit allows costs no
Python stack (callers may already be deep in theirs), and it reports the same
error, at the same token, as a recursive-descent parser would. It builds the
nodes of :mod:`~editor.graph.expressions.syntax`; memoising and the objects
callers hold are :mod:`~editor.graph.expressions.compiled`'s.
"""

from __future__ import annotations

from typing import cast

from editor.graph.errors import ExpressionError
from editor.graph.expressions.lexer import Token, TokenKind, tokenize
from editor.graph.expressions.syntax import (
    And,
    Compare,
    Condition,
    Literal,
    Not,
    Operand,
    Or,
    Path,
    Segment,
    Truthy,
)

__all__ = ["MAX_LENGTH", "check_length", "parse_condition", "parse_path"]

#: The longest expression or reference, in characters (code points).
MAX_LENGTH = 512

# Keyed by `TokenKind | None` because the parser looks up whatever comes next, the end included.
_COMPARISONS: dict[TokenKind | None, str] = {
    kind: kind.value
    for kind in (TokenKind.EQ, TokenKind.NE, TokenKind.LT, TokenKind.LE, TokenKind.GT, TokenKind.GE)
}
_KEYWORD_VALUES: dict[TokenKind | None, bool | None] = {
    TokenKind.TRUE: True,
    TokenKind.FALSE: False,
    TokenKind.NULL: None,
}


class _Group:
    """An open parenthesis (or the whole text) while its contents are parsed."""

    __slots__ = ("conjuncts", "disjuncts", "negations")

    def __init__(self, negations: int) -> None:
        self.negations = negations  # the `!`s written just before the `(`
        self.disjuncts: list[Condition] = []  # finished `&&` chains, joined by `||`
        self.conjuncts: list[Condition] = []  # finished terms of the current `&&` chain


class _Parser:
    """A cursor over the tokens of one text."""

    __slots__ = ("end", "index", "tokens")

    def __init__(self, tokens: list[Token], end: int) -> None:
        self.tokens = tokens
        self.index = 0
        self.end = end  # the text's length: the position of "end of input"

    def peek(self) -> TokenKind | None:
        return self.tokens[self.index].kind if self.index < len(self.tokens) else None

    def position(self) -> int:
        return self.tokens[self.index].position if self.index < len(self.tokens) else self.end

    def fail(self, what: str) -> ExpressionError:
        return ExpressionError(what, self.position())

    def expect_end(self) -> None:
        if self.index < len(self.tokens):
            raise self.fail("an unexpected trailing token; the expression already ended")

    def condition(self) -> Condition:
        """``or``, parsed with an explicit stack of open parentheses."""
        groups = [_Group(0)]
        while True:
            # A unary position: `!`s and `(`s, then a comparison.
            negations = 0
            while (kind := self.peek()) is TokenKind.BANG or kind is TokenKind.LPAREN:
                self.index += 1
                if kind is TokenKind.BANG:
                    negations += 1
                else:
                    groups.append(_Group(negations))
                    negations = 0
            node = _negate(self.comparison(), negations)
            # Close every group that ends here; stop at a `&&` or `||` that continues one.
            while True:
                group = groups[-1]
                group.conjuncts.append(node)
                if self.peek() is TokenKind.AND:
                    self.index += 1
                    break
                group.disjuncts.append(_join(And, group.conjuncts))
                group.conjuncts = []
                if self.peek() is TokenKind.OR:
                    self.index += 1
                    break
                node = _join(Or, group.disjuncts)
                if len(groups) == 1:
                    return node
                if self.peek() is not TokenKind.RPAREN:
                    raise self.fail("a missing closing `)`")
                self.index += 1
                groups.pop()
                node = _negate(node, group.negations)

    def comparison(self) -> Condition:
        left = self.operand()
        operator = _COMPARISONS.get(self.peek())
        if operator is None:
            return Truthy(left)
        self.index += 1
        return Compare(left, operator, self.operand())

    def operand(self) -> Operand:
        kind = self.peek()
        if kind is TokenKind.IDENT:
            return self.path()
        if kind in _KEYWORD_VALUES:
            self.index += 1
            return Literal(_KEYWORD_VALUES[kind])
        if kind is TokenKind.NUMBER or kind is TokenKind.STRING:
            self.index += 1
            return Literal(self.tokens[self.index - 1].value)
        raise self.fail("a value or path where one was required")

    def path(self) -> Path:
        segments: list[Segment] = [_name(self.tokens[self.index])]
        self.index += 1
        while self.peek() is TokenKind.DOT:
            self.index += 1
            kind = self.peek()
            if kind is TokenKind.IDENT:
                segments.append(_name(self.tokens[self.index]))
            elif kind is TokenKind.NUMBER:
                index = self.tokens[self.index].value
                if not isinstance(index, int) or index < 0:
                    raise self.fail("a path segment that is not a non-negative integer index")
                segments.append(index)
            else:
                raise self.fail("a missing path segment after `.`")
            self.index += 1
        return Path(tuple(segments))


def _name(token: Token) -> str:
    """An identifier's name: the lexer gives every ``IDENT`` token its text as ``value``."""
    return cast(str, token.value)


def _negate(node: Condition, times: int) -> Condition:
    for _ in range(times):
        node = Not(node)
    return node


def _join(kind: type[And] | type[Or], terms: list[Condition]) -> Condition:
    return terms[0] if len(terms) == 1 else kind(tuple(terms))


def check_length(text: str, noun: str) -> None:
    """Refuse a text that is not a ``str`` (``TypeError``) or longer than :data:`MAX_LENGTH`."""
    if not isinstance(text, str):
        raise TypeError(f"the {noun} must be a str, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"{noun} is {len(text)} characters long, which exceeds the {MAX_LENGTH}-character limit"
        )


def parse_condition(text: str) -> Condition:
    """Parse an expression into its tree, without memoising; raises :class:`ExpressionError`."""
    check_length(text, "expression")
    parser = _Parser(tokenize(text), len(text))
    root = parser.condition()
    parser.expect_end()
    return root


def parse_path(text: str) -> tuple[Segment, ...]:
    """Parse a reference into its segments, without memoising; raises :class:`ExpressionError`.

    One operand, then the end of the text; only then is a literal refused.
    """
    check_length(text, "reference")
    parser = _Parser(tokenize(text), len(text))
    operand = parser.operand()
    parser.expect_end()
    if isinstance(operand, Literal):
        raise ExpressionError("a reference must be a path into the routed value, not a literal")
    return operand.segments
