"""The fake Messages server the tests share (``tests/fake_anthropic.py``) selects as the
reference's scripted model does: the conversation whose name is in the system prompt, or whose
``when`` is in the body; the turn by message count; a miss or an ambiguity is a 500."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import Any

import pytest

from tests.fake_anthropic import FakeAnthropic, load_script
from tests.reference_examples import EXAMPLES, needs_examples


def text_turn(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}


def body(system: Any, count: int = 1, user: str = "{}") -> dict[str, Any]:
    return {"system": system, "messages": [{"role": "user", "content": user}] * count}


def answer(fake: FakeAnthropic, request: dict[str, Any]) -> tuple[int, Any]:
    return fake.answer(request, json.dumps(request))


def test_the_name_in_the_system_prompt_picks_the_conversation_and_the_count_the_turn() -> None:
    fake = FakeAnthropic(
        {"writer": [text_turn("one"), text_turn("two")], "planner": [text_turn("p")]}
    )

    assert answer(fake, body("You are the writer."))[1]["content"][0]["text"] == "one"
    assert answer(fake, body("You are the writer.", 3))[1]["content"][0]["text"] == "two"
    assert answer(fake, body([{"type": "text", "text": "the planner"}]))[0] == 200
    status, miss = answer(fake, body("You are the writer.", 5))
    assert (status, miss["error"]["type"]) == (500, "demo_script")
    assert miss["error"]["message"] == "no scripted response for 5 messages"


def test_no_match_and_two_matches_are_500s_naming_the_conversations() -> None:
    fake = FakeAnthropic({"writer": [text_turn("w")], "ghostwriter": [text_turn("g")]})

    status, none = answer(fake, body("You are the editor."))
    assert (status, none["error"]["type"]) == (500, "demo_script_no_conversation")
    assert "ghostwriter, writer" in none["error"]["message"]
    status, both = answer(fake, body("You are the ghostwriter."))
    assert (status, both["error"]["type"]) == (500, "demo_script_ambiguous_conversation")


def test_a_when_needle_selects_on_the_body() -> None:
    fake = FakeAnthropic({"pass-0": {"when": "ADJ-7741", "turns": [text_turn("first")]}})

    assert answer(fake, body("tailor", user='{"id":"ADJ-7741"}'))[1]["content"][0]["text"] == (
        "first"
    )
    assert answer(fake, body("tailor", user='{"id":"other"}'))[0] == 500


def test_an_array_is_one_conversation_whatever_the_prompt() -> None:
    fake = FakeAnthropic([text_turn("only")])

    assert answer(fake, body("anything"))[1]["content"][0]["text"] == "only"


@pytest.mark.parametrize(
    "script",
    [[], {}, "text", {"a": []}, {"a": {"whn": "x", "turns": [{}]}}, {"a": {"when": ""}}, [1]],
)
def test_a_script_that_could_never_answer_is_refused_when_loaded(script: Any) -> None:
    with pytest.raises(ValueError):
        load_script(script)


@needs_examples()
def test_every_example_script_of_the_reference_loads() -> None:
    scripts = sorted(EXAMPLES.glob("*/model-script.json"))

    assert scripts
    for path in scripts:
        assert load_script(json.loads(path.read_text())), path


def test_play_swaps_the_script_of_a_running_fake() -> None:
    fake = FakeAnthropic({"small-claims": [text_turn("first desk")]})

    fake.play({"small-claims": [text_turn("second desk")]})

    assert answer(fake, body("the small-claims settler"))[1]["content"][0]["text"] == (
        "second desk"
    )
    with pytest.raises(ValueError):
        fake.play({})


def _post(url: str, request: dict[str, Any], out: list[Any]) -> None:
    data = json.dumps(request).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=30) as reply:
        out.append(json.loads(reply.read()))


def test_a_stall_after_a_release_holds_its_answer_again() -> None:
    with FakeAnthropic([text_turn("held")]) as fake:
        url = fake.base_url + "/v1/messages"
        for count in range(1, 3):
            fake.stall()
            out: list[Any] = []
            caller = threading.Thread(target=_post, args=(url, body("x"), out))
            caller.start()
            deadline = time.monotonic() + 10
            while len(fake.requests) < count and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(fake.requests) == count  # it arrived…
            assert caller.is_alive() and not out  # …and is held until released

            fake.release()
            caller.join(10)
            assert out[0]["content"][0]["text"] == "held"
