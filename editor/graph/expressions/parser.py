"""The syntax tree of condition expressions and references, and their parser (spec 03).

The parser reads the grammar of spec 03 without recursion: open parentheses
live on an explicit stack, so nesting as deep as the 512-character limit allows
costs no Python stack (callers may already be deep in theirs), and it reports
the same error, at the same token, as a recursive-descent parser would.
``&&``/``||`` chains become one n-ary node each; each ``!`` is one node.
Nodes are immutable and compare by structure.

:func:`parse_expression` and :func:`parse_reference` are the front doors: they
check the length limit, memoise by text (failures included) and wrap the tree
in :class:`Expression` or :class:`Reference`.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from editor.graph.errors import ExpressionError
from editor.graph.expressions.lexer import Token, TokenKind, tokenize

if TYPE_CHECKING:
    from editor.graph.expressions.evaluator import Missing

__all__ = [
    "MAX_LENGTH",
    "And",
    "Compare",
    "Condition",
    "Expression",
    "Literal",
    "Node",
    "Not",
    "Operand",
    "Or",
    "Path",
    "Reference",
    "Segment",
    "Truthy",
    "parse_condition",
    "parse_expression",
    "parse_path",
    "parse_reference",
    "render",
]

#: The longest expression or reference, in characters (code points).
MAX_LENGTH = 512

type Segment = str | int
type Scalar = str | int | float | bool | None

_COMPARISONS = {
    kind: kind.value
    for kind in (TokenKind.EQ, TokenKind.NE, TokenKind.LT, TokenKind.LE, TokenKind.GT, TokenKind.GE)
}
_KEYWORD_VALUES = {TokenKind.TRUE: True, TokenKind.FALSE: False, TokenKind.NULL: None}
_CACHE_SIZE = 4096


class Node:
    """Base of the syntax tree. Equality, hashing and ``repr`` go through :func:`render`."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return render(self) == render(other)  # type: ignore[arg-type]

    def __hash__(self) -> int:
        return hash((type(self).__name__, render(self)))  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({render(self)})"  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Literal(Node):
    """A string, number, ``true``, ``false`` or ``null`` written in the text."""

    value: Scalar


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Path(Node):
    """Dot-separated segments from the root of the value: keys (str) and indexes (int)."""

    segments: tuple[Segment, ...]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Compare(Node):
    """``left operator right``; ``operator`` is one of ``== != < <= > >=``."""

    left: Operand
    operator: str
    right: Operand


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Truthy(Node):
    """A bare operand in boolean position: true only when it is JSON ``true``."""

    operand: Operand


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Not(Node):
    """``!operand``."""

    operand: Condition


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class And(Node):
    """``a && b && …``: two or more terms, evaluated left to right, short-circuiting."""

    terms: tuple[Condition, ...]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Or(Node):
    """``a || b || …``: two or more terms, evaluated left to right, short-circuiting."""

    terms: tuple[Condition, ...]


type Operand = Literal | Path
type Condition = Compare | Truthy | Not | And | Or


def render(node: Condition | Operand) -> str:
    """Write ``node`` back as text, without recursion, showing how the parser grouped it.

    ``&&``/``||`` groups are always parenthesised and a negated comparison is
    written ``!(…)``; the text parses back to an equal tree (length permitting).
    """
    parts: list[str] = []
    pending: list[Any] = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, Literal):
            parts.append(_literal_text(item.value))
        elif isinstance(item, Path):
            parts.append(_path_text(item.segments))
        elif isinstance(item, Truthy):
            pending.append(item.operand)
        elif isinstance(item, Compare):
            pending.extend((item.right, f" {item.operator} ", item.left))
        elif isinstance(item, Not):
            if isinstance(item.operand, Compare):
                pending.extend((")", item.operand, "!("))
            else:
                pending.extend((item.operand, "!"))
        else:
            joiner = " && " if isinstance(item, And) else " || "
            pending.append(")")
            for index in range(len(item.terms) - 1, -1, -1):
                pending.append(item.terms[index])
                pending.append(joiner if index else "(")
    return "".join(parts)


def _path_text(segments: tuple[Segment, ...]) -> str:
    parts = [str(segments[0])]
    for previous, segment in itertools.pairwise(segments):
        # `0.1` would lex as one number: an index that follows an index needs a space first.
        separator = " ." if isinstance(previous, int) and isinstance(segment, int) else "."
        parts.append(f"{separator}{segment}")
    return "".join(parts)


def _literal_text(value: Scalar) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # The language has no exponents: write the shortest round-trip digits out in full.
        text = format(Decimal(repr(value)), "f")
        return text if "." in text else text + ".0"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


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
        operator = _COMPARISONS.get(self.peek())  # type: ignore[arg-type]
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
            return Literal(_KEYWORD_VALUES[kind])  # type: ignore[index]
        if kind is TokenKind.NUMBER or kind is TokenKind.STRING:
            self.index += 1
            return Literal(self.tokens[self.index - 1].value)
        raise self.fail("a value or path where one was required")

    def path(self) -> Path:
        segments: list[Segment] = [self.tokens[self.index].value]  # type: ignore[list-item]
        self.index += 1
        while self.peek() is TokenKind.DOT:
            self.index += 1
            kind = self.peek()
            if kind is TokenKind.IDENT:
                segments.append(self.tokens[self.index].value)  # type: ignore[arg-type]
            elif kind is TokenKind.NUMBER:
                index = self.tokens[self.index].value
                if not isinstance(index, int) or index < 0:
                    raise self.fail("a path segment that is not a non-negative integer index")
                segments.append(index)
            else:
                raise self.fail("a missing path segment after `.`")
            self.index += 1
        return Path(tuple(segments))


def _negate(node: Condition, times: int) -> Condition:
    for _ in range(times):
        node = Not(node)
    return node


def _join(kind: type[And] | type[Or], terms: list[Condition]) -> Condition:
    return terms[0] if len(terms) == 1 else kind(tuple(terms))


def _check_length(text: str, noun: str) -> None:
    if not isinstance(text, str):
        raise TypeError(f"the {noun} must be a str, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"{noun} is {len(text)} characters long, which exceeds the {MAX_LENGTH}-character limit"
        )


def parse_condition(text: str) -> Condition:
    """Parse an expression into its tree, without memoising; raises :class:`ExpressionError`."""
    _check_length(text, "expression")
    parser = _Parser(tokenize(text), len(text))
    root = parser.condition()
    parser.expect_end()
    return root


def parse_path(text: str) -> tuple[Segment, ...]:
    """Parse a reference into its segments, without memoising; raises :class:`ExpressionError`.

    One operand, then the end of the text; only then is a literal refused.
    """
    _check_length(text, "reference")
    parser = _Parser(tokenize(text), len(text))
    operand = parser.operand()
    parser.expect_end()
    if isinstance(operand, Literal):
        raise ExpressionError("a reference must be a path into the routed value, not a literal")
    return operand.segments


@dataclass(frozen=True, slots=True)
class Expression:
    """A parsed condition. Equal when the trees are equal, whatever the spacing."""

    text: str = field(compare=False)
    root: Condition

    def evaluate(self, value: Any) -> bool:
        """Whether the condition holds for ``value`` (a JSON value); never raises."""
        from editor.graph.expressions.evaluator import evaluate_condition

        return evaluate_condition(self.root, value)

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"


@dataclass(frozen=True, slots=True)
class Reference:
    """A parsed reference: a path into the routed value. Equal when the segments are."""

    text: str = field(compare=False)
    segments: tuple[Segment, ...]

    def resolve(self, value: Any) -> Any | Missing:
        """The value the path names inside ``value``, or ``MISSING``; never raises."""
        from editor.graph.expressions.evaluator import resolve_segments

        return resolve_segments(self.segments, value)

    def __repr__(self) -> str:
        return f"Reference({self.text!r})"


def parse_expression(text: str) -> Expression:
    """Parse a condition expression, memoised; raises :class:`ExpressionError`."""
    _check_length(text, "expression")
    result = _memoised_parse(Expression, text)
    if isinstance(result, Expression):
        return result
    raise ExpressionError(*result)


def parse_reference(text: str) -> Reference:
    """Parse a reference (a bare path), memoised; raises :class:`ExpressionError`."""
    _check_length(text, "reference")
    result = _memoised_parse(Reference, text)
    if isinstance(result, Reference):
        return result
    raise ExpressionError(*result)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _memoised_parse(
    kind: type[Expression] | type[Reference], text: str
) -> Expression | Reference | tuple[str, int | None]:
    """The parsed object, or the error's ``(what, position)`` to raise afresh each time."""
    try:
        if kind is Expression:
            return Expression(text, parse_condition(text))
        return Reference(text, parse_path(text))
    except ExpressionError as error:
        return (error.what, error.position)
