"""Found here (issue 20, item 1): under ASGI the whole request body was spooled to a temporary
file before the 8 MiB cap was checked: 395 MiB per request, on every path, chunked bodies too."""

import json
from typing import Any

from tests.hostile.raw_http import MIB, send_chunked, send_declared

#: What the attacker sends, and the most the server may have taken before it stopped reading:
#: the cap (8 MiB) plus what the sockets' buffers hold on the way.
ATTACK_BYTES = 64 * MIB
STOPPED_BEFORE = 32 * MIB


def chunked_bodies_are_cut_at_the_cap(corpus: Any) -> None:
    for path, expect_json in (("/v1/graphs", True), ("/healthz", False), ("/import/", False)):
        answer = send_chunked(
            corpus.server.url,
            path,
            ATTACK_BYTES,
            server_pid=corpus.server.serving_pid,
            headers={"Content-Type": "application/json"},
        )
        assert answer.status == 413, f"POST {path}: {answer.text[:500]!r}"
        assert not answer.took_everything, f"POST {path}: the server read all 64 MiB"
        assert answer.sent < STOPPED_BEFORE, f"POST {path}: the server read {answer.sent} bytes"
        assert answer.temporary_files == [], f"POST {path} spooled {answer.temporary_files}"
        assert "connection: close" in answer.head, answer.head
        if expect_json:
            body = answer.raw.split(b"\r\n\r\n", 1)[1]
            # Chunked framing around the JSON: its first line is the chunk's size.
            error = json.loads(body.split(b"\r\n", 1)[1].rsplit(b"\r\n0\r\n", 1)[0])
            assert error["error"]["code"] == "payload_too_large", error
        else:
            assert "Too large" in answer.text, answer.text[:500]
            assert "content-security-policy:" in answer.head, answer.head


def a_declared_length_over_the_cap_is_answered_before_any_byte(corpus: Any) -> None:
    # Nothing of the body is sent: before, the server waited to read all of it.
    for path in ("/v1/graphs", "/graphs/anything/edit/json/"):
        answer = send_declared(corpus.server.url, path, ATTACK_BYTES)
        assert answer.status == 413, f"POST {path}: {answer.text[:500]!r}"
        assert "x-frame-options: deny" in answer.head, answer.head


CASE = {
    "found": [],
    "attack": (
        "Anyone, signed in or not, streams a 64 MiB chunked body (no Content-Length) to the "
        "API, to /healthz and to a page, or declares 64 MiB and sends nothing: the server used "
        "to spool every byte to a temporary file before the cap was checked (395 MiB measured)"
    ),
    "bounds": {"seconds": 30, "server_growth_mib": 48},
    "steps": [
        {"do": "python", "call": chunked_bodies_are_cut_at_the_cap},
        {"do": "python", "call": a_declared_length_over_the_cap_is_answered_before_any_byte},
    ],
}
