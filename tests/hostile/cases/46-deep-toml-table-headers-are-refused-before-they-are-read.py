"""Found here (issue 20, *six other TOML shapes answer 500*): case 43's deep nesting, written
as a table header instead (``[output_schema.a.a…]``, ``[[output_schema.a.a…]]``): ``tomllib``
reads a 30,000-part header in a second, and the schema it nests 30,000 levels deep then broke
the agent's reading with a ``RecursionError`` (``500``)."""

import threading
from typing import Any

from tests.hostile.stored_agents import no_agent_was_stored, note_stored_agents

TOML = {"Content-Type": "application/toml"}
PARTS = 30_000
#: An output schema whose table header nests it 30,000 levels deep, as a table and as an array
#: of tables, with bare and quoted parts.
DEEP = ".".join(["output_schema", *["a"] * PARTS])
TABLE = f'model = "echo"\n[{DEEP}]\nx = 1\n'
ARRAY_OF_TABLES = f'model = "echo"\n[[{DEEP}]]\nx = 1\n'
QUOTED = 'model = "echo"\n[output_schema.' + ".".join(['"a"'] * PARTS) + "]\nx = 1\n"
#: One header a level deeper than the one before, 300 levels (each one alone is small).
STAIRS = 'model = "echo"\n' + "".join(
    f"[{'.'.join(['output_schema', *['t'] * n])}]\n" for n in range(1, 301)
)
TOO_MANY_PARTS = "a key has more than 16 parts, the most an agent file's key may have (line 2)"


def four_at_once(corpus: Any) -> None:
    """Four deep headers at once, two of each kind: each refused at once, naming the limit
    and the line; the web process stays within the corpus's memory bound."""
    answers: list[Any] = []
    lock = threading.Lock()

    def send(text: str) -> None:
        try:
            answer = corpus.request("POST", "/v1/agents", headers=TOML, data=text)
        except AssertionError as failed:  # a 500, or no answer in time: the attack's failure
            answer = failed
        with lock:
            answers.append(answer)

    senders = [threading.Thread(target=send, args=(text,), daemon=True)
               for text in (TABLE, ARRAY_OF_TABLES, TABLE, ARRAY_OF_TABLES)]  # fmt: skip
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(corpus.left())
        assert not sender.is_alive(), "a deep header was not answered in time"
    assert len(answers) == len(senders), answers
    for answer in answers:
        if isinstance(answer, AssertionError):
            raise answer
        assert answer.status_code == 400, answer.text[:1000]
        error = answer.json()["error"]
        assert error["code"] == "invalid_agent", error
        (problem,) = error["details"]["errors"]
        assert TOO_MANY_PARTS in problem["message"], problem


def refused(body: str, message: str) -> dict[str, Any]:
    return {
        "do": "request",
        "method": "POST",
        "path": "/v1/agents",
        "headers": TOML,
        "body": body,
        "expect": {
            "status": 400,
            "json": {
                "error": {
                    "code": "invalid_agent",
                    "details": {"errors": [{"message": {"$contains": message}}]},
                }
            },
        },
    }


CASE = {
    "found": [],
    "attack": (
        "Agent files whose output schema a table header nests 30,000 levels deep "
        "(`[output_schema.a.a.…]`, `[[output_schema.a.a.…]]`, quoted parts), four at once, "
        "and 300 headers each a level deeper than the last: the deep ones answered 500 "
        "(a RecursionError reading the schema)"
    ),
    "bounds": {"server_growth_mib": 60},
    "steps": [
        {"do": "python", "call": note_stored_agents},
        {"do": "python", "call": four_at_once},
        refused(QUOTED, TOO_MANY_PARTS),
        refused(
            STAIRS, "a key has more than 16 parts, the most an agent file's key may have (line 17)"
        ),
        {"do": "python", "call": no_agent_was_stored},
    ],
}
