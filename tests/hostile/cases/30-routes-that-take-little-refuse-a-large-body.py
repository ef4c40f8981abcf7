"""Found here (issue 20, item 1): every route took a body up to the document cap (8 MiB), even
those that take a few kilobytes: an agent file, the sign-in and password forms, ``/healthz``."""

from typing import Any

from tests.hostile.raw_http import send_chunked

KIB = 1024
AGENT_CAP = 272 * KIB  # an agent file's 256 KiB and 16 KiB for the form around it


def over(corpus: Any, method: str, path: str, client: str, **kwargs: Any) -> Any:
    answer = corpus.request(method, path, client=client, **kwargs)
    assert answer.status_code == 413, f"{method} {path}: {answer.status_code} {answer.text[:300]}"
    assert answer.headers.get("X-Frame-Options") == "DENY", answer.headers
    assert "Content-Security-Policy" in answer.headers, answer.headers
    return answer


def small_routes_take_small_bodies(corpus: Any) -> None:
    agent = over(
        corpus,
        "POST",
        "/v1/agents",
        "api",
        data="# " + "x" * (300 * KIB),
        headers={"Content-Type": "application/toml"},
    )
    assert agent.json()["error"] == {
        "code": "payload_too_large",
        "message": f"the request body is larger than the limit of {AGENT_CAP} bytes",
        "details": {"limit": AGENT_CAP},
    }
    page = over(corpus, "POST", "/agents/", "browser", data={"definition": "x" * (300 * KIB)})
    assert "272 KiB" in page.text or f"{AGENT_CAP:,} bytes" in page.text, page.text[:2000]
    form = {"username": "nobody", "password": "p" * (20 * KIB)}
    over(corpus, "POST", "/accounts/login/", "anonymous", data=form)
    over(corpus, "POST", "/account/password/", "browser_nobody", data=form)
    over(corpus, "GET", "/healthz", "anonymous", data="x" * (2 * KIB))
    over(corpus, "POST", "/healthz", "anonymous", data="x" * (2 * KIB))
    # A chunked body (no Content-Length) is cut at the same cap. Far more than the sockets'
    # buffers hold, so that a server slow to answer cannot look as if it had read it all.
    chunked = send_chunked(
        corpus.server.url, "/accounts/login/", 16 * 1024 * KIB, chunk=16 * KIB,
        server_pid=corpus.server.serving_pid,
    )  # fmt: skip
    assert chunked.status == 413, chunked.text[:500]
    assert not chunked.took_everything, f"the server read all {chunked.sent} bytes"

    # Within its cap, an agent file is read and judged as before: not a 413.
    within = corpus.request(
        "POST", "/v1/agents", data="# " + "x" * (200 * KIB),
        headers={"Content-Type": "application/toml"},
    )  # fmt: skip
    assert within.status_code != 413, within.text[:500]
    health = corpus.request("GET", "/healthz", client="anonymous")
    assert health.status_code == 200


CASE = {
    "found": [],
    "attack": (
        "Bodies of hundreds of kilobytes to the routes that take a few: a 300 KiB agent file "
        "(API and Agents page), 20 KiB sign-in and password forms, a body on /healthz; each "
        "was read whole (up to 8 MiB) before anything looked at it"
    ),
    "steps": [{"do": "python", "call": small_routes_take_small_bodies}],
}
