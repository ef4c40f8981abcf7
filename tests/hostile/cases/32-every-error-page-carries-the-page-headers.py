"""Found here (issue 20, item 6): the 413 page, and the server's own answer to a request it
cannot parse, had no Content-Security-Policy and no X-Frame-Options: a page another site may
frame, in a browser that sniffs, on the paths an attacker can reach without signing in."""

from typing import Any

from tests.hostile.raw_http import connect, send_declared

PAGE_HEADERS = (
    "content-security-policy",
    "x-frame-options",
    "x-content-type-options",
    "referrer-policy",
    "cross-origin-opener-policy",
)


def missing(headers: Any) -> list[str]:
    names = {name.lower() for name in headers}
    return [name for name in PAGE_HEADERS if name not in names]


def error_pages_carry_the_headers(corpus: Any) -> None:
    answers = {
        "400": corpus.request("GET", "/", client="anonymous", headers={"Host": "evil.example"}),
        "403": corpus.request("POST", "/agents/", client="browser_nobody", data={"name": "x"}),
        "404": corpus.request("GET", "/no-such-page/", client="browser"),
        "405": corpus.request("PUT", "/healthz", client="browser"),
        "413": corpus.request("POST", "/healthz", client="anonymous", data="x" * 4096),
        "401": corpus.request("GET", "/v1/graphs", client="anonymous"),
    }
    for status, answer in answers.items():
        assert str(answer.status_code) == status, f"{status}: {answer.status_code}"
        assert not missing(answer.headers), f"the {status} lacks {missing(answer.headers)}"
        assert answer.headers["X-Frame-Options"] == "DENY"

    # A page whose body is refused before it is read (the handler's answer, not a view's).
    refused = send_declared(corpus.server.url, "/import/", 64 << 20)
    assert refused.status == 413, refused.text[:300]
    head = dict(line.split(": ", 1) for line in refused.head.split("\r\n")[1:] if ": " in line)
    assert not missing(head), f"the 413 lacks {missing(head)}"

    # A request line the server cannot parse: uvicorn's own 400, before the app.
    connection = connect(corpus.server.url)
    connection.sendall(b"GET /healthz?\xff HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    raw = connection.recv(65536).decode("latin1")
    connection.close()
    assert raw.startswith("HTTP/1.1 400"), raw[:300]
    head = dict(line.split(": ", 1) for line in raw.split("\r\n\r\n")[0].split("\r\n")[1:])
    assert not missing(head), f"the server's own 400 lacks {missing(head)}: {raw!r}"


CASE = {
    "found": [],
    "attack": (
        "Error pages as an anonymous client reaches them (400, 403, 404, 405, 413, the "
        "server's 400 for a request it cannot parse), checked for the headers every page has"
    ),
    "steps": [{"do": "python", "call": error_pages_carry_the_headers}],
}
