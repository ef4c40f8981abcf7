"""Branch nodes (spec 04, *Node kinds*): expression cases, `on`, decision agents, failures."""

from __future__ import annotations

from editor.graph.model import BranchCase, BranchNode, ExpressionCondition, ModelDecision, ToolNode
from tests.unit.engine.harness import Harness, graph


def expr(name: str, expression: str) -> BranchCase:
    return BranchCase(name, ExpressionCondition(expression))


def decided(name: str) -> BranchCase:
    return BranchCase(name, ModelDecision())


def routed(branch: BranchNode) -> list:
    """A document: ``branch`` with one echo node per case, each on its labelled edge."""
    targets = [ToolNode(f"to_{case.name}", "echo") for case in branch.cases]
    edges = [(branch.id, f"to_{case.name}", case.name) for case in branch.cases]
    return graph(branch, *targets, edges=edges)


def test_a_branch_takes_the_first_true_case_and_passes_the_value_through(h: Harness) -> None:
    branch = BranchNode(
        "b", (expr("low", "score < 5"), expr("any", "score >= 0"), expr("high", "score > 5"))
    )
    run_id = h.run(routed(branch), {"score": 9})
    events = h.events(run_id)
    assert events[:3] == [
        ("NodeEntered", {"node": "b"}),
        ("BranchTaken", {"node": "b", "case": "any"}),
        ("NodeExited", {"node": "b", "output": {"score": 9}}),
    ]
    # the run's output is the last output produced: the echo behind the case taken
    assert h.output(run_id) == {"score": 9}


def test_cases_are_evaluated_against_the_on_reference(h: Harness) -> None:
    branch = BranchNode("b", (expr("big", "n > 10"), expr("small", "n <= 10")), on="review")
    run_id = h.run(routed(branch), {"review": {"n": 3}, "other": 1})
    assert h.of(run_id, "BranchTaken") == [{"node": "b", "case": "small"}]
    # the output is still the whole routed value
    assert h.output(run_id) == {"review": {"n": 3}, "other": 1}


def test_a_missing_on_value_makes_every_comparison_false(h: Harness) -> None:
    branch = BranchNode("b", (expr("yes", "n == 1"), expr("not_yes", "!(n == 1)")), on="absent")
    run_id = h.run(routed(branch), {"n": 1})
    assert h.of(run_id, "BranchTaken") == [{"node": "b", "case": "not_yes"}]


def test_no_matching_case_fails_before_node_entered(h: Harness) -> None:
    branch = BranchNode("b", (expr("a", "x == 1"), expr("c", "x == 2")))
    run_id = h.run(routed(branch), {"x": 3})
    assert h.events(run_id) == [
        (
            "RunFailed",
            {"error": "branch node `b`: no case condition matched the routed value", "node": "b"},
        )
    ]


def test_a_decision_agent_picks_the_case_with_its_trimmed_reply(h: Harness) -> None:
    agent = h.scripted("  no \n")
    branch = BranchNode("b", (decided("yes"), decided("no")), agent_hash=agent)
    run_id = h.run(routed(branch), {"q": 1})
    assert h.kinds(run_id)[1:] == [
        "NodeEntered",
        "ModelCallRequested",
        "ModelCallCompleted",
        "BranchTaken",
        "NodeExited",
        "NodeEntered",  # to_no (ids ascending: to_no before to_yes)
        "ToolCallRequested",
        "ToolCallCompleted",
        "NodeExited",
        "NodeSkipped",  # to_yes
        "RunCompleted",
    ]
    assert h.of(run_id, "BranchTaken") == [{"node": "b", "case": "no"}]
    assert h.output(run_id) == {"q": 1}


def test_a_decision_agent_reply_that_is_no_case_fails_after_node_entered(h: Harness) -> None:
    agent = h.scripted("maybe")
    branch = BranchNode("b", (decided("a"), decided("b")), agent_hash=agent)
    run_id = h.run(routed(branch), {})
    assert h.kinds(run_id) == [
        "GraphRunStarted",
        "NodeEntered",
        "ModelCallRequested",
        "ModelCallCompleted",
        "RunFailed",
    ]
    assert h.error(run_id) == (
        "branch node `b`: the decision agent replied `maybe`, which is not one of the cases [a, b]"
    )


def test_a_json_decision_reply_is_compared_as_its_json_text(h: Harness) -> None:
    agent = h.scripted('{"pick": "a"}')
    branch = BranchNode("b", (decided("a"), decided("b"), decided("c")), agent_hash=agent)
    run_id = h.run(routed(branch), {})
    assert h.error(run_id) == (
        'branch node `b`: the decision agent replied `{"pick":"a"}`, which is not one of the '
        "cases [a, b, c]"
    )


def test_a_decision_agent_reply_that_is_a_json_string_is_trimmed(h: Harness) -> None:
    agent = h.scripted('" yes "')
    branch = BranchNode("b", (decided("yes"), decided("no")), agent_hash=agent)
    run_id = h.run(routed(branch), 1)
    assert h.of(run_id, "BranchTaken") == [{"node": "b", "case": "yes"}]
