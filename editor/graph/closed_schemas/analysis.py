"""What makes a schema unsafe to evaluate, found by reading it once (no value involved).

* a ``$ref`` or ``$dynamicRef`` that does not start with ``#``: it names something outside
  the schema, which the server never fetches;
* a local reference that points to no schema in it;
* a reference that leads back to itself: every cycle is refused, including those guarded by a
  keyword that descends into the value (a tree schema), because the cost of evaluating a
  recursive schema can double with each level of the value and cannot be bounded by reading
  the schema (docs/graph-core.md);
* references that multiply the schema (a definition that uses the next one twice, forty times
  over, is 2⁴⁰ subschemas evaluated against one value), or nest it past the depth a check can
  follow;
* a ``pattern`` or ``patternProperties`` key RE2 cannot compile;
* a ``$schema`` other than Draft 2020-12's, or one below the top: jsonschema would switch to
  that dialect's own validator, whose patterns run on Python's ``re``.

References are resolved by ``referencing``, as jsonschema resolves them during evaluation
(``$id`` changes the base of the fragments below it), with a registry that retrieves nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from editor.graph.closed_schemas.patterns import pattern_error

__all__ = [
    "DIALECT",
    "MAX_DEPTH",
    "MAX_EXPANSION",
    "Finding",
    "analyse",
    "count_subschemas",
    "may_have_findings",
]

DIALECT = "https://json-schema.org/draft/2020-12/schema"
_DIALECTS = frozenset({DIALECT, DIALECT + "#"})
#: Subschemas references may add to a schema once every reference is written out in place.
MAX_EXPANSION = 10_000
#: Schema levels a check may descend through, references followed (the JSON depth cap + 1).
MAX_DEPTH = 128
_SATURATED = 1 << 62

#: A ``referencing`` resolver (the library does not export its class).
Resolver = Any

#: Keywords whose value is a schema (or a list or map of schemas) applied to the value or to
#: a part of it.
_EVALUATED_ONE = frozenset(
    {
        "additionalProperties",
        "contains",
        "else",
        "if",
        "items",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_EVALUATED_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_EVALUATED_MAP = frozenset({"dependentSchemas", "patternProperties", "properties"})
#: Keywords that hold schemas nothing evaluates unless a reference points into them.
_HELD_ONE = frozenset({"contentSchema"})
_HELD_MAP = frozenset({"$defs", "definitions"})


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason a schema cannot be evaluated: a ``code`` and the keys that locate it."""

    code: str
    keys: dict[str, Any]

    def describe(self, subject: str) -> str:
        """The reason as a sentence about ``subject`` (``"`input_schema`"``, ``"it"``)."""
        keys = self.keys
        path = keys.get("path")
        if self.code == "schema_reference_not_local":
            return (
                f"{subject} refers outside itself at `{path}`: `{keys['reference']}` "
                "(only local `#…` references are allowed)"
            )
        if self.code == "schema_reference_dangling":
            return (
                f"{subject} has a reference `{keys['reference']}` at `{path}` that points to "
                "no schema in it"
            )
        if self.code == "schema_reference_recursive":
            return (
                f"{subject} has a reference `{keys['reference']}` at `{path}` that leads back "
                "to itself (recursive schemas are not supported)"
            )
        if self.code == "schema_references_too_large":
            return (
                f"{subject} grows by more than {keys['max']} subschemas once its references "
                "are followed"
            )
        if self.code == "schema_references_too_deep":
            return (
                f"{subject} nests deeper than {keys['max']} levels once its references are followed"
            )
        if self.code == "schema_pattern_unsupported":
            return (
                f"{subject} has a pattern at `{path}` that cannot be used: {keys['error']} "
                "(patterns run on RE2, which has no backreferences or lookaround)"
            )
        return (
            f"{subject} declares `$schema` `{keys['dialect']}` at `{path}`; only Draft "
            "2020-12 is supported, declared at the top of the schema"
        )


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


@dataclass(slots=True)
class _Reference:
    order: int
    keyword: str
    path: str
    reference: str
    resolver: Resolver
    source: int
    targets: list[int] = field(default_factory=list)


@dataclass(slots=True)
class _Walk:
    """The schema read as a graph: one node per schema object, edges to the subschemas it
    evaluates and to the targets of its references. Findings carry the order in which their
    keyword was read (depth first, keys sorted as in the canonical form)."""

    root: Any
    findings: list[tuple[int, Finding]] = field(default_factory=list)
    index: dict[int, int] = field(default_factory=dict)  # id(schema object) -> node
    children: list[list[int]] = field(default_factory=list)
    anchors: dict[str, list[int]] = field(default_factory=dict)  # $dynamicAnchor -> nodes
    references: list[_Reference] = field(default_factory=list)
    order: int = 0
    _paths: dict[int, str] | None = None

    def tick(self) -> int:
        self.order += 1
        return self.order

    def find(self, order: int, code: str, **keys: Any) -> None:
        self.findings.append((order, Finding(code, keys)))

    def path_of(self, target: Any) -> str:
        """The JSON Pointer of an object anywhere in the schema (for reference targets)."""
        if self._paths is None:
            self._paths = {}
            stack: list[tuple[Any, str]] = [(self.root, "")]
            while stack:
                value, path = stack.pop()
                self._paths.setdefault(id(value), path)
                if isinstance(value, dict):
                    stack.extend((item, f"{path}/{_escape(key)}") for key, item in value.items())
                elif isinstance(value, list):
                    stack.extend((item, f"{path}/{n}") for n, item in enumerate(value))
        return self._paths.get(id(target), "")

    def read(self, schema: dict[str, Any], path: str, resolver: Resolver) -> int:
        """The node of one schema object, reading it (and what it holds) the first time."""
        found = self.index.get(id(schema))
        if found is not None:
            return found
        number = self.index[id(schema)] = len(self.children)
        self.children.append([])
        for keyword in sorted(schema):
            value = schema[keyword]
            here = f"{path}/{_escape(keyword)}"
            if keyword == "$schema":
                if not isinstance(value, str) or value not in _DIALECTS or number != 0:
                    self.find(self.tick(), "schema_dialect_unsupported", path=here, dialect=value)
            elif keyword in ("$ref", "$dynamicRef"):
                self._reference(number, keyword, value, here, resolver)
            elif keyword == "$dynamicAnchor" and isinstance(value, str):
                self.anchors.setdefault(value, []).append(number)
            elif keyword == "pattern" and isinstance(value, str):
                self._pattern(value, here)
            for key, child, child_path, evaluated in _subschemas(keyword, value, here):
                if keyword == "patternProperties":
                    self._pattern(key, child_path)
                if isinstance(child, dict):
                    inner = resolver
                    if "$id" in child:  # only an `$id` moves the base of references
                        inner = resolver.in_subresource(DRAFT202012.create_resource(child))
                    child_number = self.read(child, child_path, inner)
                    if evaluated:
                        self.children[number].append(child_number)
        return number

    def _pattern(self, pattern: str, path: str) -> None:
        order = self.tick()
        error = pattern_error(pattern)
        if error is not None:
            self.find(order, "schema_pattern_unsupported", path=path, pattern=pattern, error=error)

    def _reference(
        self, number: int, keyword: str, value: Any, path: str, resolver: Resolver
    ) -> None:
        order = self.tick()
        if not isinstance(value, str):
            self.find(order, "schema_reference_dangling", path=path, reference=str(value))
        elif not value.startswith("#"):
            self.find(order, "schema_reference_not_local", path=path, reference=value)
        else:
            self.references.append(_Reference(order, keyword, path, value, resolver, number))

    def resolve(self, reference: _Reference) -> None:
        try:
            resolved = reference.resolver.lookup(reference.reference)
        except Unresolvable:
            target: Any = None
        except Exception:
            target = None
        else:
            target = resolved.contents
        if isinstance(target, bool):
            return
        if not isinstance(target, dict):
            self.find(
                reference.order,
                "schema_reference_dangling",
                path=reference.path,
                reference=reference.reference,
            )
            return
        # A target outside the schema positions read so far is read as a schema from here.
        number = self.index.get(id(target))
        if number is None:
            number = self.read(target, self.path_of(target), resolved.resolver)
        reference.targets.append(number)

    def run(self) -> None:
        if not isinstance(self.root, dict):
            return
        resource = DRAFT202012.create_resource(self.root)
        self.read(self.root, "", Registry().resolver_with_root(resource))
        resolved = 0
        while resolved < len(self.references):  # reading a target may add references
            self.resolve(self.references[resolved])
            resolved += 1
        for reference in self.references:
            fragment = reference.reference[1:]
            if reference.keyword == "$dynamicRef" and fragment and not fragment.startswith("/"):
                # The dynamic scope decides at run time; any anchor of that name may be it.
                reference.targets.extend(self.anchors.get(fragment, ()))


def _subschemas(keyword: str, value: Any, path: str) -> Iterator[tuple[str, Any, str, bool]]:
    """The schemas under one keyword: (map key, schema, its path, whether it is evaluated)."""
    if keyword in _EVALUATED_ONE or keyword in _HELD_ONE:
        yield "", value, path, keyword in _EVALUATED_ONE
    elif keyword in _EVALUATED_LIST:
        if isinstance(value, list):
            for n, item in enumerate(value):
                yield "", item, f"{path}/{n}", True
    elif (keyword in _EVALUATED_MAP or keyword in _HELD_MAP) and isinstance(value, dict):
        for key in sorted(value):
            yield key, value[key], f"{path}/{_escape(key)}", keyword in _EVALUATED_MAP


def _edges(walk: _Walk) -> list[list[int]]:
    edges = [list(children) for children in walk.children]
    for reference in walk.references:
        edges[reference.source].extend(reference.targets)
    return edges


def _components(edges: list[list[int]]) -> list[int]:
    """Tarjan's strongly connected components, iteratively: the component of each node."""
    count = len(edges)
    low = [0] * count
    number = [-1] * count
    component = [-1] * count
    stack: list[int] = []
    on_stack = [False] * count
    counter = 0
    found = 0
    for start in range(count):
        if number[start] != -1:
            continue
        work = [(start, 0)]
        number[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack[start] = True
        while work:
            node, position = work[-1]
            if position < len(edges[node]):
                work[-1] = (node, position + 1)
                target = edges[node][position]
                if number[target] == -1:
                    number[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack[target] = True
                    work.append((target, 0))
                elif on_stack[target]:
                    low[node] = min(low[node], number[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == number[node]:
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component[member] = found
                    if member == node:
                        break
                found += 1
    return component


def _recursive(walk: _Walk, edges: list[list[int]]) -> bool:
    component = _components(edges)
    any_cycle = False
    for reference in walk.references:
        source = reference.source
        if any(component[target] == component[source] for target in reference.targets):
            any_cycle = True
            walk.find(
                reference.order,
                "schema_reference_recursive",
                path=reference.path,
                reference=reference.reference,
            )
    return any_cycle


def _measure(walk: _Walk, edges: list[list[int]]) -> None:
    """Refuse references that multiply the schema or nest it too deeply (it is acyclic)."""
    count = len(edges)
    expanded = [0] * count  # subschemas evaluated from a node, references written out
    depth = [0] * count  # schema levels below a node, references followed
    done = [False] * count
    work = [(0, False)]
    while work:
        node, ready = work.pop()
        if done[node]:
            continue
        if not ready:
            work.append((node, True))
            work.extend((target, False) for target in edges[node] if not done[target])
            continue
        done[node] = True
        expanded[node] = min(_SATURATED, 1 + sum(expanded[target] for target in edges[node]))
        depth[node] = 1 + max((depth[target] for target in edges[node]), default=0)
    order = walk.tick()
    # Every schema object written counts once: only repeats are the references' doing.
    if expanded[0] - count > MAX_EXPANSION:
        walk.find(order, "schema_references_too_large", max=MAX_EXPANSION)
    if depth[0] > MAX_DEPTH:
        walk.find(order, "schema_references_too_deep", max=MAX_DEPTH)


#: Keywords (as written in canonical JSON) without which :func:`analyse` finds nothing.
_TELLTALES = (b'"$ref"', b'"$dynamicRef"', b'"$schema"', b'"pattern')


def may_have_findings(canonical: bytes) -> bool:
    """Whether a schema's canonical bytes name any keyword :func:`analyse` looks at; when
    they do not, there is nothing to find and the reading can be skipped. (The canonical
    writer escapes neither ``$`` nor letters, so a keyword always appears as written.)"""
    return any(telltale in canonical for telltale in _TELLTALES)


def analyse(schema: Any) -> tuple[Finding, ...]:
    """Every reason ``schema`` cannot be evaluated in a closed world, in schema order.

    ``schema`` is a JSON value (as parsed); any shape is accepted, so that a stored schema
    that breaks the meta-schema is analysed too.
    """
    walk = _Walk(schema)
    walk.run()
    if walk.references:  # without them the schema is a tree: no cycle, no growth
        edges = _edges(walk)
        if not _recursive(walk, edges):
            _measure(walk, edges)
    walk.findings.sort(key=lambda item: item[0])
    return tuple(finding for _, finding in walk.findings)


#: Keywords whose value maps names to schemas for the meta-schema (Draft 2020-12 still describes
#: the old ``dependencies`` there: a map of schemas or lists of names).
_COUNTED_MAP = _EVALUATED_MAP | _HELD_MAP | {"dependencies"}
_COUNTED_ONE = _EVALUATED_ONE | _HELD_ONE


def count_subschemas(schema: Any, limit: int) -> int:
    """How many schemas ``schema`` is made of, itself included: the objects and booleans in
    schema positions, each of which the meta-schema check visits once (about half a
    millisecond each). Counting stops once it passes ``limit``."""
    count = 0
    stack = [schema]
    while stack:
        value = stack.pop()
        count += 1
        if count > limit:
            return count
        if not isinstance(value, dict):
            continue
        for keyword, item in value.items():
            if keyword in _COUNTED_ONE:
                children = [item]
            elif keyword in _EVALUATED_LIST and isinstance(item, list):
                children = item
            elif keyword in _COUNTED_MAP and isinstance(item, dict):
                children = list(item.values())
            else:
                continue
            stack.extend(child for child in children if isinstance(child, dict | bool))
    return count
