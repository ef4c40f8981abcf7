"""Found here (issue 20, *any author can kill the web process*): case 43's dotted key, written
as a table header instead (``[a.a.a…]``, ``[[a.a.a…]]``): ``tomllib`` builds each part of a
header as it does a dotted key's, at the same quadratic cost."""

import threading
from typing import Any

from tests.hostile.stored_agents import no_agent_was_stored, note_stored_agents

TOML = {"Content-Type": "application/toml"}
PARTS = 30_000
TABLE = 'model = "echo"\n[' + ".".join(["a"] * PARTS) + "]\nx = 1\n"
ARRAY_OF_TABLES = 'model = "echo"\n[[' + ".".join(["a"] * PARTS) + "]]\nx = 1\n"
QUOTED = 'model = "echo"\n[' + ".".join(['"a"'] * PARTS) + "]\nx = 1\n"
#: One header a level deeper than the one before, 300 levels (each one alone is small).
STAIRS = 'model = "echo"\n' + "".join(f"[{'.'.join(['t'] * n)}]\n" for n in range(1, 301))
TOO_MANY_PARTS = "a key has more than 16 parts, the most an agent file's key may have (line 2)"


def four_at_once(corpus: Any) -> None:
    """Four deep headers at once, two of each kind: each refused at once, naming the limit
    and the line; the web process stays within the corpus's memory bound."""
    answers: list[Any] = []
    lock = threading.Lock()

    def send(text: str) -> None:
        answer = corpus.request("POST", "/v1/agents", headers=TOML, data=text)
        with lock:
            answers.append(answer)

    senders = [threading.Thread(target=send, args=(text,), daemon=True)
               for text in (TABLE, ARRAY_OF_TABLES, TABLE, ARRAY_OF_TABLES)]  # fmt: skip
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(corpus.left())
        assert not sender.is_alive(), "a deep header was not answered in time"
    for answer in answers:
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
        "Agent files whose table headers are 30,000 parts deep (`[a.a.…]`, `[[a.a.…]]`, "
        "quoted parts), four at once, and 300 headers each a level deeper than the last: "
        "tomllib's cost is quadratic in a header's parts as in a dotted key's"
    ),
    "bounds": {"server_growth_mib": 60},
    "steps": [
        {"do": "python", "call": note_stored_agents},
        {"do": "python", "call": four_at_once},
        refused(QUOTED, TOO_MANY_PARTS),
        refused(
            STAIRS, "a key has more than 16 parts, the most an agent file's key may have (line 18)"
        ),
        {"do": "python", "call": no_agent_was_stored},
    ],
}
