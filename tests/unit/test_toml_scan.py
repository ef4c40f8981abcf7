"""The pre-scan of agent files (``editor.graph.toml_scan``) and what ``read_agent_toml`` refuses.

Each hostile shape is refused by the scan, before ``tomllib`` is asked to read it (the tests
make ``tomllib`` fail if it is); every agent file of the reference's own examples
(``../shared/reference/examples/``, beside the checkout, read where they are) passes the scan.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from editor.graph import InvalidAgentDefinition
from editor.graph.agent_files import MAX_AGENT_FILE_BYTES, read_agent_toml
from editor.graph.toml_scan import (
    MAX_BARE_VALUE,
    MAX_DEPTH,
    MAX_ENTRIES,
    MAX_KEY_PARTS,
    TomlTooComplex,
    scan_toml,
)
from tests.reference_examples import EXAMPLES, needs_examples

#: The reference's examples, beside the checkout (as ``.ci/run`` has them), never copied in.
REFERENCE_FILES = sorted(EXAMPLES.glob("**/*.toml"))

HOSTILE = {
    "a dotted key 30,000 parts deep": "a" + ".a" * 30_000 + " = 1\n",
    "a table header 30,000 parts deep": "[" + "a." * 30_000 + "a]\n",
    "an array of tables 30,000 parts deep": "[[" + "a." * 30_000 + "a]]\n",
    "arrays nested 100,000 deep": "a = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "inline tables nested 50,000 deep": "a = " + "{b = " * 50_000 + "1" + "}" * 50_000 + "\n",
    "a million-digit integer": "a = " + "1" * 1_000_000 + "\n",
    "a 200,000-digit float": "a = 0." + "1" * 200_000 + "\n",
    "twenty thousand one-part keys": "".join(f"k{i} = 1\n" for i in range(20_000)),
}


@pytest.fixture
def no_tomllib(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str) -> object:
        raise AssertionError("tomllib was asked to read what the scan should have refused")

    monkeypatch.setattr(tomllib, "loads", refuse)


@pytest.mark.parametrize("shape", list(HOSTILE))
def test_each_hostile_shape_is_refused_by_the_scan(shape: str) -> None:
    with pytest.raises(TomlTooComplex):
        scan_toml(HOSTILE[shape])


@pytest.mark.parametrize("shape", list(HOSTILE))
@pytest.mark.usefixtures("no_tomllib")
def test_an_agent_file_of_each_hostile_shape_is_refused_before_tomllib_reads_it(
    shape: str,
) -> None:
    text = HOSTILE[shape][:MAX_AGENT_FILE_BYTES]

    with pytest.raises(InvalidAgentDefinition) as refused:
        read_agent_toml(text)

    (error,) = refused.value.errors
    assert error["code"] in ("malformed_definition", "agent_file_too_large")
    assert "(line " in error["message"] or error["code"] == "agent_file_too_large"


@pytest.mark.usefixtures("no_tomllib")
def test_a_file_over_the_cap_is_refused_by_its_size() -> None:
    body = ("# " + "x" * 70 + "\n") * (MAX_AGENT_FILE_BYTES // 72 + 1)

    with pytest.raises(InvalidAgentDefinition) as refused:
        read_agent_toml(body.encode())

    (error,) = refused.value.errors
    assert error["code"] == "agent_file_too_large"
    assert f"over the {MAX_AGENT_FILE_BYTES}-byte cap" in error["message"]


def test_the_refusal_says_which_limit_and_on_which_line() -> None:
    with pytest.raises(TomlTooComplex) as refused:
        scan_toml('model = "echo"\n\n[output_schema]\n' + "a." * 40 + "a = 1\n")

    assert refused.value.line == 4
    assert f"more than {MAX_KEY_PARTS} parts" in str(refused.value)


@pytest.mark.parametrize(
    "text",
    [
        "a = " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1),
        "[" + ".".join(["t"] * MAX_KEY_PARTS) + "]\n" + ".".join(["k"] * MAX_KEY_PARTS) + " = 1",
        "a = " + "9" * MAX_BARE_VALUE,
        "".join(f"k{i} = 1\n" for i in range(MAX_ENTRIES)),
    ],
    ids=["depth", "key parts", "bare value", "entries"],
)
def test_a_file_at_each_limit_passes(text: str) -> None:
    scan_toml(text)


@pytest.mark.parametrize(
    "text",
    [
        "a = " + "[" * MAX_DEPTH + "]" * MAX_DEPTH,
        "[" + ".".join(["t"] * 100) + "]\n" + ".".join(["k"] * 30) + " = {x = 1}",
        "a = " + "9" * (MAX_BARE_VALUE + 1),
        "".join(f"k{i} = 1\n" for i in range(MAX_ENTRIES + 1)),
    ],
    ids=["depth", "key parts", "bare value", "entries"],
)
def test_a_file_one_past_each_limit_is_refused(text: str) -> None:
    with pytest.raises(TomlTooComplex):
        scan_toml(text)


def test_headers_keys_and_nested_values_add_up_to_the_depth() -> None:
    header = ".".join(["t"] * 16)
    keys = ".".join(["k"] * 16)
    nested = "{v = " * 100 + "1" + "}" * 100

    with pytest.raises(TomlTooComplex) as refused:
        scan_toml(f"[{header}]\n{keys} = {nested}\n")

    assert f"more than {MAX_DEPTH} levels" in str(refused.value)


@pytest.mark.parametrize(
    "text",
    [
        'a = "[[[[ {{{{ a.b.c.d # not a comment"\n',
        "a = 'C:\\[[[[\\'\nb = '{{{{'\n",
        'a = """\n[[[[\n{{{{ "" \\""" ]]]\n"""\n',
        "a = '''\n[[[[\n{{{{ '' ]]]\n'''\n",
        'a = """quotes at the end"""""\nb = 1\n',
        'a = 1 # [[[[ {{{{ """ unterminated\nb = 2\n',
        '"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r" = 1\n',
        "[ 'x.y.z' . \"w\" ]\nv = 1\n",
        "a = [\n  [1, 2], # [[[\n  [3],\n]\n",
        "t = { a = [1, {b = 'c'}], d.e = 2 }\n",
        "[[items]]\nn = 1\n[[items]]\nn = 2\n",
        "d = 1979-05-27T07:32:00.999999-07:00\n",
        "x = {}\ny = []\n",
    ],
)
def test_valid_toml_with_brackets_and_quotes_in_strings_and_comments_passes(text: str) -> None:
    tomllib.loads(text)  # it is TOML

    scan_toml(text)


def test_a_string_full_of_brackets_does_not_count_as_nesting() -> None:
    scan_toml('prompt = """' + "[" * 100_000 + '"""\n')


def test_a_key_where_no_key_can_be_is_refused_with_its_line() -> None:
    with pytest.raises(TomlTooComplex) as refused:
        scan_toml('model = "echo"\n% = 1\n')

    assert refused.value.line == 2
    assert "expected a key" in str(refused.value)


@pytest.mark.parametrize("path", REFERENCE_FILES, ids=lambda path: path.name)
def test_every_agent_file_of_the_reference_passes_the_scan(path: Path) -> None:
    text = path.read_text(encoding="utf-8")

    scan_toml(text)
    read_agent_toml(text)


@needs_examples()
def test_the_reference_files_are_there() -> None:
    assert len(REFERENCE_FILES) >= 6


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        (
            '[output_schema.properties.when]\ntype = "string"\ndefault = 1979-05-27T07:32:00Z\n',
            "output_schema.properties.when.default",
            "a TOML date-time",
        ),
        (
            "[output_schema]\nexamples = [1, 1979-05-27]\n",
            "output_schema.examples[1]",
            "a TOML date",
        ),
        ("[budgets]\nsteps = 07:32:00\n", "budgets.steps", "a TOML time"),
        ("[output_schema]\nmaximum = nan\n", "output_schema.maximum", "`nan`"),
        ("[output_schema]\nminimum = -inf\n", "output_schema.minimum", "`-inf`"),
        ("[budgets]\ntokens = 99999999999999999999\n", "budgets.tokens", "64 bits"),
    ],
)
def test_a_value_json_has_no_form_for_is_refused_with_its_key_path(
    text: str, field: str, words: str
) -> None:
    with pytest.raises(InvalidAgentDefinition) as refused:
        read_agent_toml('model = "echo"\n' + text)

    (error,) = refused.value.errors
    assert error["code"] == "not_json_value"
    assert error["field"] == field
    assert error["message"].startswith(f"`{field}` is ")
    assert words in error["message"]
