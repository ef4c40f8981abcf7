"""The critic-panel rounds (seed 004): panel_prompts → critics → panel_collect, in a fold."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from editor.engine.errors import ToolError
from editor.engine.ports import ModelRequest, ToolContext
from editor.graph import parse_expression
from editor.providers import EchoProvider
from editor.tools import build_registry

CONTEXT = ToolContext("run", "node", "key", 5.0)
REGISTRY = build_registry()
PANEL = {"subject": "Is the study sound?", "critics": ["methodologist", "red-team"]}
STOP_WHEN = parse_expression("converged == true")

Critic = Callable[[Any], Any]


def prompts(value: Any) -> dict[str, Any]:
    return REGISTRY.get("panel_prompts").func(value, CONTEXT)


def collect(replies: list[Any]) -> dict[str, Any]:
    return REGISTRY.get("panel_collect").func(replies, CONTEXT)


def echo_critic(prompt: Any) -> Any:
    """The `critic` agent on the echo model, as the engine runs it: the routed value as the
    compact JSON user message, the reply parsed back when it is JSON."""
    text = json.dumps(prompt, separators=(",", ":"), ensure_ascii=False)
    request = ModelRequest(
        "echo", "You are a critic.", ({"role": "user", "content": text},), (), {}, 0, "key", 5.0
    )
    return json.loads(EchoProvider().complete(request).content)


def conceding_critic(prompt: Any) -> Any:
    """Critiques a prompt, concedes to a critique."""
    kinds = {"prompt": "critique", "critique": "concession"}
    return {**prompt, "kind": kinds.get(prompt["kind"], prompt["kind"])}


def run_rounds(max_rounds: int, critic: Critic = echo_critic) -> tuple[dict[str, Any], int]:
    """The rounds template's fold: each pass is prompts → map of critic → collect."""
    value: Any = PANEL
    for passes in range(1, max_rounds + 1):
        value = collect([critic(prompt) for prompt in prompts(value)["prompts"]])
        if STOP_WHEN.evaluate(value):
            return value, passes
    return value, max_rounds


def summary(transcript: list[dict[str, Any]]) -> list[tuple[int, str, str, str]]:
    return [(m["round"], m["kind"], m["sender"], m["recipient"]) for m in transcript]


def test_round_one_sends_the_subject_from_system_to_every_critic() -> None:
    sent = prompts(PANEL)
    assert sent["round"] == 1
    assert [(p["kind"], p["sender"], p["recipient"], p["text"]) for p in sent["prompts"]] == [
        ("prompt", "system", "methodologist", "Is the study sound?"),
        ("prompt", "system", "red-team", "Is the study sound?"),
    ]


def test_a_parallel_panel_yields_one_critique_per_critic() -> None:
    replies = [echo_critic(prompt) for prompt in prompts(PANEL)["prompts"]]
    assert [reply["kind"] for reply in replies] == ["critique", "critique"]
    assert [reply["recipient"] for reply in replies] == ["methodologist", "red-team"]


def test_three_echo_rounds_give_two_critiques_then_four_rebuttals_and_never_converge() -> None:
    value, passes = run_rounds(3)
    assert passes == 3
    assert value["converged"] is False
    assert value["round"] == 3
    assert summary(value["transcript"]) == [
        (1, "critique", "methodologist", "system"),
        (1, "critique", "red-team", "system"),
        (2, "rebuttal", "methodologist", "red-team"),
        (2, "rebuttal", "red-team", "methodologist"),
        (3, "rebuttal", "methodologist", "red-team"),
        (3, "rebuttal", "red-team", "methodologist"),
    ]
    assert {m["text"] for m in value["transcript"]} == {"Is the study sound?"}


def test_two_echo_rounds_give_four_messages() -> None:
    value, passes = run_rounds(2)
    assert (passes, len(value["transcript"]), value["converged"]) == (2, 4, False)


def test_a_conceding_panel_converges_after_round_two() -> None:
    value, passes = run_rounds(5, conceding_critic)
    assert passes == 2
    assert value["converged"] is True
    assert [m["kind"] for m in value["transcript"]] == [
        "critique",
        "critique",
        "concession",
        "concession",
    ]


def test_round_one_never_converges_even_without_rebuttals() -> None:
    value = collect([echo_critic(prompt) for prompt in prompts(PANEL)["prompts"]])
    assert value["converged"] is False


def test_later_rounds_forward_the_other_critics_messages_keeping_their_kind() -> None:
    first = collect([echo_critic(prompt) for prompt in prompts(PANEL)["prompts"]])
    second = prompts(first)
    assert second["round"] == 2
    assert [(p["kind"], p["sender"], p["recipient"]) for p in second["prompts"]] == [
        ("critique", "red-team", "methodologist"),
        ("critique", "methodologist", "red-team"),
    ]


def test_each_critic_hears_every_other_critic_in_transcript_order() -> None:
    panel = {"subject": "s", "critics": ["a", "b", "c"]}
    first = collect([echo_critic(p) for p in prompts(panel)["prompts"]])
    second = prompts(first)["prompts"]
    assert [(p["recipient"], p["sender"]) for p in second] == [
        ("a", "b"),
        ("a", "c"),
        ("b", "a"),
        ("b", "c"),
        ("c", "a"),
        ("c", "b"),
    ]


def test_plain_text_replies_are_critiques_by_the_critic_that_was_asked() -> None:
    sent = prompts(PANEL)["prompts"]
    value = collect([echo_critic(sent[0]), "The sample is too small."])
    assert value["transcript"][1] == {
        "kind": "critique",
        "sender": "red-team",
        "recipient": "system",
        "text": "The sample is too small.",
        "round": 1,
    }


def test_collect_explains_when_no_reply_carries_the_panel_state() -> None:
    with pytest.raises(ToolError, match="none of the 2 critic replies carries the panel state"):
        collect(["one", "two"])


def test_collect_refuses_a_reply_count_that_does_not_match_the_prompts() -> None:
    sent = prompts(PANEL)["prompts"]
    with pytest.raises(ToolError, match="got 1 replies for the 2 prompts of round 1"):
        collect([echo_critic(sent[0])])


def test_a_one_critic_panel_converges_at_once_as_nobody_is_left_to_answer() -> None:
    value = collect(
        [echo_critic(p) for p in prompts({"subject": "s", "critics": ["solo"]})["prompts"]]
    )
    assert value["converged"] is True


def test_prompts_refuse_a_panel_without_critics_or_with_repeated_ones() -> None:
    with pytest.raises(ToolError, match="critics"):
        prompts({"subject": "s", "critics": []})
    with pytest.raises(ToolError, match="different from each other"):
        prompts({"subject": "s", "critics": ["a", "a"]})
