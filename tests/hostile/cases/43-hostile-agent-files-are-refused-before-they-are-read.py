"""Found here (issue 20): agent files in TOML that ``tomllib`` cannot read in bounded time and
memory, or reads into values JSON has no form for."""

import threading
from typing import Any

from tests.hostile.stored_agents import no_agent_was_stored, note_stored_agents

DEEP_KEY = "a" + ".a" * 30_000 + " = 1\n"
TOML = {"Content-Type": "application/toml"}


def four_at_once(corpus: Any) -> None:
    """Four 60 KB files whose dotted key is 30,000 parts deep, sent at once: each is refused
    at once, naming the limit, and the web process's memory stays within the corpus's bound
    (they used to take 24 GB together)."""
    answers: list[Any] = []
    lock = threading.Lock()

    def send() -> None:
        try:
            answer = corpus.request("POST", "/v1/agents", headers=TOML, data=DEEP_KEY)
        except AssertionError as failed:  # a 500, or no answer in time: the attack's failure
            answer = failed
        with lock:
            answers.append(answer)

    senders = [threading.Thread(target=send, daemon=True) for _ in range(4)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(corpus.left())
        assert not sender.is_alive(), "a deep agent file was not answered in time"
    assert len(answers) == len(senders), answers
    for answer in answers:
        if isinstance(answer, AssertionError):
            raise answer
        assert answer.status_code == 400, answer.text[:1000]
        error = answer.json()["error"]
        assert error["code"] == "invalid_agent"
        (problem,) = error["details"]["errors"]
        assert "a key has more than 16 parts" in problem["message"], problem
        assert "(line 1)" in problem["message"], problem


def refused(body: str, message: Any, field: str = "", *more: dict[str, Any]) -> dict[str, Any]:
    return {
        "do": "request",
        "method": "POST",
        "path": "/v1/agents",
        "headers": TOML,
        "body": 'model = "echo"\n' + body,
        "expect": {
            "status": 400,
            "json": {
                "error": {
                    "code": "invalid_agent",
                    "details": {"errors": [{"message": message, "field": field}, *more]},
                }
            },
        },
    }


CASE = {
    "found": [],
    "attack": (
        "Agent files built to break tomllib: a dotted key 30,000 parts deep (four at once took "
        "24 GB and the kernel killed the server), arrays and inline tables nested 100,000 and "
        "30,000 deep, an integer of 200,000 digits, `nan`, `inf` and dates in an "
        "`output_schema`: the first held a thread for a minute, the others answered 500"
    ),
    "bounds": {"server_growth_mib": 60},
    "steps": [
        {"do": "python", "call": note_stored_agents},
        {"do": "python", "call": four_at_once},
        refused(
            "[output_schema]\n" + "x = " + "[" * 100_000 + "]" * 100_000 + "\n",
            {"$contains": ["values nest more than 127 levels deep", "(line 3)"]},
        ),
        refused(
            "[output_schema]\n" + "x = " + "{a = " * 30_000 + "1" + "}" * 30_000 + "\n",
            {"$contains": ["values nest more than 127 levels deep", "(line 3)"]},
        ),
        refused(
            "[budgets]\nsteps = " + "1" * 200_000 + "\n",
            {"$contains": ["is longer than the 64 a number or a date may have", "(line 3)"]},
        ),
        refused(
            "[output_schema]\nmaximum = nan\n",
            "`output_schema.maximum` is `nan`, a number JSON cannot hold: write a finite number",
            "output_schema.maximum",
        ),
        refused(
            "[output_schema]\nminimum = -inf\n",
            {"$startswith": "`output_schema.minimum` is `-inf`"},
            "output_schema.minimum",
        ),
        refused(
            "[output_schema.properties.when]\ndefault = 1979-05-27T07:32:00Z\n",
            {"$startswith": "`output_schema.properties.when.default` is a TOML date-time"},
            "output_schema.properties.when.default",
        ),
        refused(
            "[output_schema]\nexamples = [1979-05-27, 07:32:00]\n",
            {"$startswith": "`output_schema.examples[0]` is a TOML date"},
            "output_schema.examples[0]",
            {"field": "output_schema.examples[1]", "message": {"$contains": "a TOML time"}},
        ),
        {"do": "python", "call": no_agent_was_stored},
    ],
}
