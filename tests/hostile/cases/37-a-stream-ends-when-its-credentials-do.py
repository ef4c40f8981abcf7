"""Found here (issue 20, *also*): a stream kept flowing after its API token was revoked, its
session signed out or its user deactivated."""

from typing import Any

import requests

from tests.hostile.steps import sign_in

NAP = '{"tool_calls": [{"name": "nap", "arguments": {"seconds": 4}}]}'
NAPPER = {
    "name": "long-napper",
    "model": "scripted",
    "prompt": "Rest.",
    "tools": ["nap"],
    "options": {"replies": [NAP, NAP, NAP, NAP, "done"]},
}
NAPS = {
    "schema_version": 1,
    "nodes": [{"kind": "agent", "payload": {"id": "a", "agent_hash": "{{agent}}"}}],
    "edges": [],
}


def _frames_until_end(answer: Any, corpus: Any, after: Any) -> list[str]:
    """The stream's lines until its ``event: end`` (calling ``after`` once the stream is open),
    within the attack's time."""
    lines: list[str] = []
    called = False
    for line in answer.iter_lines(decode_unicode=True):
        if not called:
            after()
            called = True
        lines.append(line)
        if len(lines) > 1 and lines[-2] == "event: end":
            return lines
        assert corpus.left() > 0, "the stream did not end"
    raise AssertionError(f"the stream closed without event: end: {lines[-5:]}")


def revoked_token(corpus: Any) -> None:
    """A token of mallory's reads the events of a run still running, then is revoked: the
    stream sends ``event: end`` with the reason, well before the run ends."""
    made = corpus.shell(
        "from django.contrib.auth import get_user_model\n"
        "from editor.services.tokens import create_token\n"
        "token, raw = create_token(get_user_model().objects.get(username='mallory'), 'x')\n"
        "print('TOKEN', token.pk, raw)\n"
    )
    token_id, raw = made.split("TOKEN ")[-1].split()
    url = f"{corpus.server.url}/v1/runs/{corpus.names['run']}/events"
    with requests.get(
        url,
        headers={"Authorization": f"Bearer {raw}", "Accept": "text/event-stream"},
        stream=True,
        timeout=corpus.left(),
    ) as answer:
        assert answer.status_code == 200

        def revoke() -> None:
            corpus.shell(
                "from django.utils import timezone\nfrom editor.models import ApiToken\n"
                f"ApiToken.objects.filter(pk={token_id}).update(revoked_at=timezone.now())\n"
            )

        lines = _frames_until_end(answer, corpus, revoke)
    assert lines[-1] == 'data: {"reason":"credentials_revoked"}', lines[-3:]
    assert corpus.run_json()["status"]["state"] == "running", "the run ended first"


def signed_out_and_deactivated(corpus: Any) -> None:
    """A page's stream ends when its session signs out, and when its user is deactivated."""
    corpus.shell(
        "from django.contrib.auth import get_user_model\n"
        f"get_user_model().objects.create_user('leaving', password={corpus.users.password!r})\n"
    )
    for ending in ("sign out", "deactivate"):
        browser = sign_in(corpus.server.url, "leaving", corpus.users.password)
        with browser.get(
            f"{corpus.server.url}/live/", stream=True, timeout=corpus.left()
        ) as answer:
            assert answer.status_code == 200

            def end(ending: str = ending, browser: Any = browser) -> None:
                if ending == "sign out":
                    # Another tab signs out: the same session, gone.
                    other = requests.Session()
                    other.cookies.update(browser.cookies)
                    other.post(
                        f"{corpus.server.url}/accounts/logout/",
                        headers={"X-CSRFToken": browser.cookies["csrftoken"]},
                        timeout=corpus.left(),
                    )
                else:
                    corpus.shell(
                        "from django.contrib.auth import get_user_model\n"
                        "get_user_model().objects.filter(username='leaving')"
                        ".update(is_active=False)\n"
                    )

            lines = _frames_until_end(answer, corpus, end)
        assert lines[-1] == 'data: {"reason":"credentials_revoked"}', (ending, lines[-3:])


CASE = {
    "found": [],
    "attack": (
        "Streams opened with a token that is then revoked, a session that then signs out, a "
        "user then deactivated: each stream used to flow on for as long as it was open"
    ),
    "bounds": {"seconds": 45},
    "steps": [
        {
            "do": "request",
            "method": "POST",
            "path": "/v1/agents",
            "json": NAPPER,
            "expect": {"status": 201},
            "save": {"agent": "agent"},
        },
        {"do": "store_graph", "graph": NAPS},
        {"do": "start_run", "input": {}},
        {"do": "wait_run", "until": ["running"]},
        {"do": "python", "call": revoked_token},
        {"do": "python", "call": signed_out_and_deactivated},
    ],
}
