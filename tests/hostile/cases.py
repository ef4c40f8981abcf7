"""Reading the corpus: one attack per file under ``cases/``, its steps and what it expects.

An attack is a JSON file (``cases/NN-name.json``), or a Python module (``cases/NN-name.py``)
defining ``CASE``, the same object built in code, for documents too large or too regular to
write by hand. README.md describes the format; :func:`matches` is the little language of
the ``expect`` objects.
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Bounds", "Case", "load_cases", "matches", "substitute"]

CASES = Path(__file__).resolve().parent / "cases"


@dataclass(frozen=True)
class Bounds:
    """What the attack may cost at most, measured while it runs (README.md, *Bounds*)."""

    seconds: float = 30.0
    worker_rss_mib: float = 250.0
    worker_threads: int = 40
    server_rss_mib: float = 300.0
    server_threads: int = 40
    #: How much the web process's memory may grow during the attack (``None``: not checked).
    server_growth_mib: float | None = None
    #: `dot` processes the web process may run at once (GATEHOUSE_GRAPHVIZ_MAX_PROCESSES).
    server_dot: int = 2


@dataclass(frozen=True)
class Case:
    name: str
    found: tuple[int, ...]
    attack: str
    steps: list[dict[str, Any]]
    bounds: Bounds = Bounds()
    #: Settings of the worker for this attack alone (a worker is started with them).
    worker: dict[str, str] = field(default_factory=dict)


_KEYS = {"found", "attack", "steps", "bounds", "worker"}


def _case(name: str, data: dict[str, Any]) -> Case:
    unknown = set(data) - _KEYS
    assert not unknown, f"{name}: unknown keys {sorted(unknown)} (README.md lists them)"
    found = data["found"]
    return Case(
        name=name,
        found=tuple(found if isinstance(found, list) else [found]),
        attack=data["attack"],
        steps=list(data["steps"]),
        bounds=Bounds(**data.get("bounds", {})),
        worker={key: str(value) for key, value in data.get("worker", {}).items()},
    )


def _load(path: Path) -> Case:
    if path.suffix == ".json":
        return _case(path.stem, json.loads(path.read_text(encoding="utf-8")))
    spec = importlib.util.spec_from_file_location(f"hostile_case_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return _case(path.stem, module.CASE)


def load_cases() -> list[Case]:
    """Every attack, those run by the shared worker first, then by file name."""
    paths = [path for path in CASES.iterdir() if path.suffix in (".json", ".py")]
    cases = [_load(path) for path in paths if not path.name.startswith("_")]
    return sorted(
        cases,
        key=lambda case: (bool(case.worker), json.dumps(case.worker, sort_keys=True), case.name),
    )


# --- Placeholders --------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")


def substitute(value: Any, names: dict[str, Any]) -> Any:
    """``value`` with every ``{{name}}`` replaced by ``names[name]``; a string that is exactly
    one placeholder takes the named value as it is (a number stays a number)."""
    if isinstance(value, dict):
        return {substitute(key, names): substitute(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute(item, names) for item in value]
    if not isinstance(value, str):
        return value
    whole = _PLACEHOLDER.fullmatch(value)
    if whole:
        return _named(whole.group(1), names)
    return _PLACEHOLDER.sub(lambda found: str(_named(found.group(1), names)), value)


def _named(name: str, names: dict[str, Any]) -> Any:
    assert name in names, f"no value for {{{{{name}}}}} yet (known: {sorted(names)})"
    return names[name]


# --- Expectations --------------------------------------------------------------------------------


def _texts(expected: Any) -> list[str]:
    return expected if isinstance(expected, list) else [expected]


def _operator(operator: str, argument: Any, actual: Any, where: str) -> list[str]:
    if operator == "$contains":
        if not isinstance(actual, str):
            return [f"{where}: expected text, found {type(actual).__name__}"]
        return [f"{where}: {text!r} not in {actual[:500]!r}" for text in _texts(argument)
                if text not in actual]  # fmt: skip
    if operator == "$excludes":
        text_of = actual if isinstance(actual, str) else json.dumps(actual, ensure_ascii=False)
        return [f"{where}: {text!r} must not appear" for text in _texts(argument)
                if text in text_of]  # fmt: skip
    if operator == "$startswith":
        if isinstance(actual, str) and actual.startswith(argument):
            return []
        return [f"{where}: {str(actual)[:300]!r} does not start with {argument!r}"]
    if operator == "$length":
        if isinstance(actual, list | str | dict) and len(actual) == argument:
            return []
        return [f"{where}: expected length {argument}, found {actual!r:.300}"]
    if operator == "$at_most":
        if isinstance(actual, int | float) and not isinstance(actual, bool) and actual <= argument:
            return []
        return [f"{where}: expected at most {argument}, found {actual!r:.300}"]
    if operator == "$ends_with":
        if isinstance(actual, list) and actual[len(actual) - len(argument) :] == argument:
            return []
        return [f"{where}: expected to end with {argument!r}, found {actual!r:.500}"]
    if operator == "$present":
        return []
    if operator == "$all":
        return [problem for each in argument for problem in matches(each, actual, where)]
    if operator == "$lines":
        if isinstance(actual, str) and len(actual.strip().splitlines()) == argument:
            return []
        return [f"{where}: expected {argument} line(s), found {str(actual)[-1000:]!r}"]
    raise AssertionError(f"unknown operator {operator} at {where} (README.md lists them)")


def matches(expected: Any, actual: Any, where: str = "$") -> list[str]:
    """What in ``actual`` does not match ``expected`` (empty: all of it matches).

    An object matches when each of its keys does (other keys may be there too); ``{"$absent":
    true}`` as a key's value says that key must not be there. A list matches a list of the same
    length, item by item. An object of one ``$``-key is an operator (README.md). Anything else
    must be equal, of the same JSON type.
    """
    if isinstance(expected, dict) and len(expected) == 1 and next(iter(expected)).startswith("$"):
        [(operator, argument)] = expected.items()
        return _operator(operator, argument, actual, where)
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, found {actual!r:.300}"]
        problems: list[str] = []
        for key, item in expected.items():
            if item == {"$absent": True}:
                if key in actual:
                    problems.append(f"{where}.{key}: must be absent, found {actual[key]!r:.300}")
            elif key not in actual:
                problems.append(f"{where}.{key}: missing (keys: {sorted(actual)})")
            else:
                problems += matches(item, actual[key], f"{where}.{key}")
        return problems
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {len(expected)} items, found {actual!r:.500}"]
        return [
            p for n, item in enumerate(expected) for p in matches(item, actual[n], f"{where}[{n}]")
        ]
    if type(expected) is not type(actual) and not (
        isinstance(expected, int | float) and isinstance(actual, int | float)
        and not isinstance(expected, bool) and not isinstance(actual, bool)
    ):  # fmt: skip
        return [f"{where}: expected {expected!r:.300}, found {actual!r:.300}"]
    if expected != actual:
        return [f"{where}: expected {expected!r:.300}, found {actual!r:.300}"]
    return []
