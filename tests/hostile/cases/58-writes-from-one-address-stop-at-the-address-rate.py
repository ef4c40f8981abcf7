"""Found (issue 20, *nothing has a quota or a rate*): write requests from one address without a
rate, however many users (or none) sent them."""

import json
from typing import Any

from tests.hostile.own_server import LIMITED, a_loopback_address, limited_server, send
from tests.hostile.quota_users import refused

SETTING = "GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE"
RATE = int(LIMITED[SETTING])
#: Empty graphs to validate: a write request each, cheap for the server.
BODY = json.dumps({"schema_version": 1, "nodes": [], "edges": []}).encode()


def from_one_address(corpus: Any) -> None:
    """Two users' tokens and an anonymous client take turns writing from one address, to a
    server whose address rate is ``RATE`` a minute (the users' own rate is far above): past
    it every write is refused ``429`` naming the address's setting, whoever sends it; from
    another address the same users write on."""
    senders = [
        {"Authorization": f"Bearer {corpus.users.mallory_token}"},
        {"Authorization": f"Bearer {corpus.users.nobody_token}"},
        {},  # anonymous: refused 401 by the view, counted all the same
    ]
    server = limited_server(corpus)
    address = a_loopback_address()
    passed, refusals = 0, 0
    for number in range(2 * RATE + 6):  # two windows at most, should a minute end meanwhile
        headers = {"Content-Type": "application/json", **senders[number % len(senders)]}
        answer = send(server, "POST", "/v1/graphs/validate", source=address, headers=headers,
                      body=BODY, timeout=corpus.left())  # fmt: skip
        if answer.status_code in (200, 401):
            passed += 1
            continue
        error = refused(answer, 429, "rate_limited", SETTING)
        assert error["details"]["limit"] == RATE, error
        assert "write requests from your address" in error["message"], error
        refusals += 1
    assert refusals >= 6 and passed <= 2 * RATE, (passed, refusals)
    elsewhere = send(server, "POST", "/v1/graphs/validate", source=a_loopback_address(),
                     headers={"Content-Type": "application/json", **senders[0]}, body=BODY,
                     timeout=corpus.left())  # fmt: skip
    assert elsewhere.status_code == 200, elsewhere.text[:500]


CASE = {
    "found": [],
    "attack": (
        "Two users and an anonymous client write as fast as they can from one address: "
        "nothing bounded an address; now past the address's rate every write from it is "
        "refused, before its view runs, with 429 rate_limited naming "
        "GATEHOUSE_RATE_ADDRESS_WRITES_PER_MINUTE and Retry-After, whichever user sends it"
    ),
    # Most of the time is the attacks' own server starting, when this attack is the first.
    "bounds": {"seconds": 60},
    "steps": [{"do": "python", "call": from_one_address}],
}
