"""What the fuzz tests feed the graph core, what they check, and the corpus they keep.

Three targets, each with the one promise the fuzzers hold it to:

* ``document``: :func:`validate_document` answers every input (bytes or text) with a body of
  the documented shape, and :func:`parse_document` raises nothing but ``MalformedDocument``;
* ``expression``: :func:`parse_expression` raises nothing but ``ExpressionError``, and a parsed
  expression evaluates to ``True`` or ``False`` on any JSON value;
* ``reference``: :func:`parse_reference` raises nothing but ``ExpressionError``, and a parsed
  reference resolves any JSON value without raising.

The corpus (``tests/unit/cases/fuzz/*.json``) holds inputs worth replaying on every run: the
hand-picked hostile ones, and those ``make fuzz`` found interesting — an input that failed a
promise, or the first input seen with a new outcome (an error code no case shows yet, say).
Each file is ``{"target", "input" | "input_base64", "value"?, "outcome", "note"}``; a regular
unit test replays them all.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from editor.graph import parse_document, validate_document
from editor.graph.errors import ExpressionError, MalformedDocument
from editor.graph.expressions import MISSING, parse_expression, parse_reference

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).parent / "cases" / "fuzz"

#: ``make fuzz`` sets these: more examples, an example database kept under ``var/``, and
#: interesting inputs written into the corpus.
FUZZING = os.environ.get("GATEHOUSE_FUZZ") == "1"
EXAMPLES = int(os.environ.get("GATEHOUSE_FUZZ_EXAMPLES", "5000" if FUZZING else "150"))


def fuzz_settings(**overrides: Any) -> settings:
    """Capped and repeatable in ``make test``; long, random and remembered in ``make fuzz``."""
    if FUZZING:
        extra: dict[str, Any] = {
            "database": DirectoryBasedExampleDatabase(str(ROOT / "var" / "fuzz" / "hypothesis"))
        }
    else:
        extra = {"derandomize": True, "database": None}
    return settings(
        max_examples=EXAMPLES,
        deadline=None,
        # The recorder fixture is meant to span every example of its test.
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.function_scoped_fixture,
        ],
        **extra,
        **overrides,
    )


# --- The targets -------------------------------------------------------------------------------


_GRAPH_HASH = re.compile(r"sha256:[0-9a-f]{64}")


def check_document(data: bytes | str) -> str:
    """Holds ``document`` to its promise; the outcome (``valid`` or the error codes)."""
    body = validate_document(data)
    assert type(body) is dict
    json.dumps(body)
    try:
        parse_document(data)
    except MalformedDocument:
        parsed = False
    else:
        parsed = True
    if body["valid"] is True:
        assert list(body) == ["valid", "graph", "summary"]
        assert _GRAPH_HASH.fullmatch(body["graph"])
        assert parsed
        return "valid"
    assert body["valid"] is False
    assert list(body) == ["valid", "errors"]
    assert body["errors"]
    codes = []
    for error in body["errors"]:
        assert list(error)[:2] == ["code", "message"]
        assert isinstance(error["code"], str)
        assert isinstance(error["message"], str)
        codes.append(error["code"])
    if not parsed:
        assert codes in (["malformed_document"], ["payload_too_large"]), codes
    return "invalid: " + " ".join(sorted(set(codes)))


def _error_outcome(error: ExpressionError) -> str:
    """The kind of error without its details: no position, no number, no odd character."""
    what = re.sub(r"(unexpected character|unsupported string escape) `.*`", r"\1", error.what)
    what = re.sub(r"`([^`]{3,})`", "`…`", what)
    return "error: " + re.sub(r"[0-9]+", "N", what)


def check_expression(text: str, value: Any) -> str:
    try:
        expression = parse_expression(text)
    except ExpressionError as error:
        return _error_outcome(error)
    assert expression.text == text
    result = expression.evaluate(value)
    assert result is True or result is False
    return f"evaluates to {str(result).lower()}"


def check_reference(text: str, value: Any) -> str:
    try:
        reference = parse_reference(text)
    except ExpressionError as error:
        return _error_outcome(error)
    resolved = reference.resolve(value)
    return "missing" if resolved is MISSING else f"resolves to {type(resolved).__name__}"


TARGETS = {"document", "expression", "reference"}


def check(target: str, data: bytes | str, value: Any = None) -> str:
    if target == "document":
        return check_document(data)
    assert isinstance(data, str)
    if target == "expression":
        return check_expression(data, value)
    return check_reference(data, value)


# --- The corpus --------------------------------------------------------------------------------


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.json"))


def read_case(path: Path) -> dict[str, Any]:
    case = json.loads(path.read_text(encoding="utf-8"))
    if "input_base64" in case:
        case["input"] = base64.b64decode(case["input_base64"])
    return case


def outcome_marks(target: str, outcome: str) -> set[tuple[str, str]]:
    """What an outcome shows: each error code of a document's verdict, else the outcome."""
    if target == "document" and outcome.startswith("invalid: "):
        return {(target, code) for code in outcome.removeprefix("invalid: ").split()}
    return {(target, outcome)}


def _known() -> set[tuple[str, str]]:
    known: set[tuple[str, str]] = set()
    for case in map(read_case, corpus_files()):
        known |= outcome_marks(case["target"], case.get("outcome", ""))
    return known


class Recorder:
    """In ``make fuzz``: remembers interesting inputs of one test and writes them to the corpus
    at its end. A failing input is written as the last one Hypothesis tried (its shrunk
    example); an input with an outcome the corpus does not have yet is written as found."""

    def __init__(self) -> None:
        self.known = _known() if FUZZING else set()
        self.new: list[tuple[str, bytes | str, Any, str]] = []
        self.failure: tuple[str, bytes | str, Any, str] | None = None

    def check(self, target: str, data: bytes | str, value: Any = None) -> str:
        if not FUZZING:
            return check(target, data, value)
        try:
            outcome = check(target, data, value)
        except BaseException as error:
            self.failure = (target, data, value, f"{type(error).__name__}: {error}"[:300])
            raise
        marks = outcome_marks(target, outcome)
        if not marks <= self.known:
            self.known |= marks
            self.new.append((target, data, value, outcome))
        return outcome

    def save(self) -> list[Path]:
        written = []
        for target, data, value, outcome in self.new:
            written.append(write_case(target, data, value, outcome, "a new outcome"))
        if self.failure is not None:
            target, data, value, problem = self.failure
            written.append(write_case(target, data, value, "", f"failed: {problem}"))
        return written


def write_case(target: str, data: bytes | str, value: Any, outcome: str, note: str) -> Path:
    case: dict[str, Any] = {"target": target}
    if isinstance(data, bytes):
        case["input_base64"] = base64.b64encode(data).decode()
    else:
        case["input"] = data
    if target != "document":
        case["value"] = value
    case["outcome"] = outcome
    case["note"] = note
    text = json.dumps(case, ensure_ascii=True, indent=1, sort_keys=False) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    CORPUS.mkdir(parents=True, exist_ok=True)
    path = CORPUS / f"{target}-{digest}.json"
    path.write_text(text, encoding="utf-8")
    return path
