"""The one place where Gatehouse compiles the JSON Schemas it evaluates: closed worlds.

Every schema the server checks values against (node input and output schemas, a gate's
approval schema on resume, a fold's accumulator, a tool's own schemas) and every schema it
validates (E6 and E10 of spec 02 as extended) goes through this module:

* Draft 2020-12, evaluated with a ``referencing`` registry that retrieves nothing: local
  ``#…`` references work; nothing is ever read from a file or the network (jsonschema's
  default would fetch any ``http(s)``/``file`` URI it meets, with no time limit);
* ``pattern``, ``patternProperties`` (and the keywords that consult them) on RE2, which runs
  in time linear in the text (:mod:`.patterns`);
* before a schema is used it is read once for what would make evaluation reach outside,
  loop, explode or switch dialect (:mod:`.analysis`); such a schema is refused at validation,
  and at run time (a graph stored before these checks) it raises :class:`SchemaUnusable`
  with a reason a person can read, instead of fetching, hanging or crashing;
* a check costs what its caller allows (:mod:`.costs`): with ``seconds``, it stops at that
  deadline (:class:`CheckTooSlow`); its messages are at most 1,000 characters and it reports
  at most 100 violations; ``uniqueItems`` and ``enum`` run in linear time;
* compiled schemas are memoised by a digest of their canonical text in a cache bounded in
  entries and in the text they stand for (:mod:`.memo`).
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError, UnknownType, ValidationError
from jsonschema.validators import extend
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from editor.graph.closed_schemas import costs
from editor.graph.closed_schemas.analysis import (
    DIALECT,
    MAX_DEPTH,
    MAX_EXPANSION,
    Finding,
    analyse,
    count_subschemas,
    may_have_findings,
)
from editor.graph.closed_schemas.costs import MAX_ERRORS, MAX_MESSAGE
from editor.graph.closed_schemas.memo import CacheInfo, DigestMemo
from editor.graph.closed_schemas.patterns import KEYWORDS, PatternUnsupported
from editor.graph.errors import GraphError
from editor.graph.jsonio import MAX_DEPTH as MAX_JSON_DEPTH
from editor.graph.jsonio import canonical_json

__all__ = [
    "DIALECT",
    "MAX_DEPTH",
    "MAX_ERRORS",
    "MAX_EXPANSION",
    "MAX_MESSAGE",
    "CheckTooSlow",
    "CompiledSchema",
    "Finding",
    "SchemaUnusable",
    "analyse",
    "compile_schema",
    "compiled_cache_info",
    "count_subschemas",
    "may_have_findings",
    "meta_schema_problem",
    "schema_findings",
]

_COMPILED_CACHE_SIZE = 1024
#: The canonical text the compiled schemas kept may stand for, in all (typical schemas are
#: well under a kilobyte; a few megabyte-sized ones push the others out).
_COMPILED_CACHE_BYTES = 16 << 20
_FINDINGS_CACHE_SIZE = 4096

#: Draft 2020-12 with RE2 patterns, linear ``uniqueItems`` and ``enum``, and every keyword
#: bounded (:mod:`.costs`); not registered under the dialect's URI, so no other schema ever
#: picks it up by its ``$schema``.
# types-jsonschema declares `extend` without annotations (its return is a validator class).
_ClosedValidator = extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    validators={
        name: costs.bounded(keyword)
        for name, keyword in {
            **Draft202012Validator.VALIDATORS,
            **KEYWORDS,
            **costs.KEYWORDS,
        }.items()
    },
)
#: Nothing to retrieve from: an unknown URI is unresolvable, never fetched.
_NOTHING = Registry()

#: The meta-schema check without ``format: regex``: Python's ``re`` would judge patterns that
#: RE2 runs; E10 compiles every pattern with RE2 instead and gives its reason.
_META_FORMATS = FormatChecker(formats=())
_META_FORMATS.checkers = {
    name: check
    for name, check in Draft202012Validator.FORMAT_CHECKER.checkers.items()
    if name != "regex"
}

#: Extra stack frames for a schema or value nested near the reader's cap: jsonschema recurses
#: about eight frames per level.
_EXTRA_FRAMES = 16 * (MAX_JSON_DEPTH + 1)
_RECURSION_LIMIT_LOCK = threading.Lock()


class SchemaUnusable(GraphError, ValueError):
    """A schema that cannot be evaluated here; ``str()`` is the reason, about ``it``."""


class CheckTooSlow(GraphError):
    """Checking a value took longer than its caller allowed; ``seconds`` is that limit."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the value could not be checked against the schema within {seconds:g} s")
        self.seconds = seconds


def with_deeper_stack[T](work: Callable[[], T]) -> T:
    """``work()``, retried once with a raised recursion limit when the stack runs out.

    A schema or value near the 127-level nesting cap needs about a thousand frames, Python's
    default limit, so without the retry it would fail under any caller.
    """
    try:
        return work()
    except RecursionError:
        with _RECURSION_LIMIT_LOCK:
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(limit + _EXTRA_FRAMES)
            try:
                return work()
            finally:
                sys.setrecursionlimit(limit)


def meta_schema_problem(schema: Any) -> str | None:
    """jsonschema's best-match message when ``schema`` breaks the Draft 2020-12 meta-schema."""
    try:
        with_deeper_stack(lambda: Draft202012Validator.check_schema(schema, _META_FORMATS))
    except SchemaError as error:
        return error.message
    except RecursionError:
        return "the schema nests too deeply to be checked"
    return None


_FINDINGS: DigestMemo[tuple[Finding, ...]] = DigestMemo(_FINDINGS_CACHE_SIZE)


def _findings(text: bytes) -> tuple[Finding, ...]:
    return _FINDINGS.get(text, lambda: analyse(json.loads(text)) if may_have_findings(text) else ())


def schema_findings(schema: Any, key: bytes | None = None) -> tuple[Finding, ...]:
    """Why ``schema`` cannot be evaluated in a closed world (empty: it can).

    Memoised by the schema's canonical bytes (``key``, when the caller has them already).
    """
    return _findings(canonical_json(schema) if key is None else key)


class CompiledSchema:
    """A schema ready to check values against, or the reason it cannot be."""

    __slots__ = ("_problem", "_validator")

    def __init__(self, schema: Any, *, read: bool = True) -> None:
        """``read=False`` skips the closed-world reading, for a caller that knows from the
        canonical bytes that there is nothing to find (:func:`may_have_findings`)."""
        self._validator: Any = None
        self._problem: str | None = None
        if schema is _NOT_JSON:
            self._problem = "it cannot be written as JSON"
            return
        if not isinstance(schema, dict | bool):
            self._problem = "it is not a JSON Schema (an object or a boolean)"
            return
        try:
            findings = analyse(schema) if read else ()
            if not findings:
                # The root resolver given directly: passing ``registry=`` would make jsonschema
                # combine it with every bundled meta-schema on each compile (5 µs), and a
                # schema here has no use for them (its references are all local).
                resolver = _NOTHING.resolver_with_root(DRAFT202012.create_resource(schema))
                self._validator = _ClosedValidator(schema, _resolver=resolver)
        except Exception as error:  # a stored value no schema reader would accept
            self._problem = f"it cannot be read as a schema ({type(error).__name__})"
            return
        if findings:
            self._problem = findings[0].describe("it")

    @property
    def problem(self) -> str | None:
        """Why the schema cannot be used, or ``None`` when it can."""
        return self._problem

    def errors(self, value: Any, *, seconds: float | None = None) -> list[ValidationError]:
        """The violations of the schema by ``value`` (the first :data:`MAX_ERRORS` found);
        :class:`SchemaUnusable` when the schema cannot be used (its reason), or when checking
        fails in a way a value cannot cause with a sound schema (a stored schema that breaks
        the meta-schema, say); :class:`CheckTooSlow` when ``seconds`` pass first."""
        if self._problem is not None:
            raise SchemaUnusable(self._problem)
        validator = self._validator

        def check() -> list[ValidationError]:
            with costs.within(seconds):
                return list(itertools.islice(validator.iter_errors(value), MAX_ERRORS))

        try:
            return with_deeper_stack(check)
        except costs.CheckTooSlow:
            raise CheckTooSlow(seconds or 0.0) from None
        except RecursionError:
            raise SchemaUnusable("the value nests too deeply to be checked against it") from None
        except UnknownType as error:
            raise SchemaUnusable(f"it names an unknown type `{error.type}`") from None
        except (Unresolvable, PatternUnsupported) as error:  # stopped by the analysis
            raise SchemaUnusable(f"it cannot be resolved here: {error}") from None
        except Exception as error:  # a keyword value the meta-schema refuses, say
            detail = str(error).splitlines()[0][:200] if str(error) else ""
            raise SchemaUnusable(
                f"checking a value against it failed ({type(error).__name__}"
                f"{': ' + detail if detail else ''})"
            ) from None


#: Compiled schemas hold their schema, parsed: the memo also bounds the text they stand for.
_COMPILED: DigestMemo[CompiledSchema] = DigestMemo(_COMPILED_CACHE_SIZE, _COMPILED_CACHE_BYTES)


def _compile_text(text: bytes) -> CompiledSchema:
    return _COMPILED.get(
        text, lambda: CompiledSchema(json.loads(text), read=may_have_findings(text))
    )


def compile_schema(schema: Any, key: bytes | None = None) -> CompiledSchema:
    """``schema`` compiled for the closed world, memoised by its canonical bytes.

    The value compiled is read back from those bytes, so later changes to ``schema`` (a
    caller's dict) cannot reach the cached validator.
    """
    if key is None:
        try:
            key = canonical_json(schema)
        except (TypeError, ValueError):  # built in code: a lone surrogate, a NaN, a set
            return CompiledSchema(_NOT_JSON)
    return _compile_text(key)


#: What :func:`compile_schema` compiles in place of a value that is not JSON at all.
_NOT_JSON: Any = object()


def compiled_cache_info() -> CacheInfo:
    """Hits, misses and size of the compiled-schema cache (bounded), as functools reports a
    cache's."""
    return _COMPILED.info()
