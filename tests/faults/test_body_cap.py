"""The request body cap filled against a real server (gunicorn): a body one byte under the cap
is taken, one over it (or far over it) is refused with ``413`` before anything parses it, in
the API (``payload_too_large``) and on a page form alike; nothing is half-written and the
server stays healthy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import urlencode

import requests

from tests.faults.processes import Api, PrivatePostgres, Processes, signed_in

CAP = 64 * 1024


def draft_body(size: int, marker: str) -> bytes:
    """A ``PUT …/draft`` body of exactly ``size`` bytes: a document padded with spaces."""
    text = json.dumps({"schema_version": 1, "nodes": [], "edges": [], "marker": marker})
    empty = json.dumps({"text": text}).encode()
    body = json.dumps({"text": text + " " * (size - len(empty))}).encode()
    assert len(body) == size
    return body


def form_body(size: int, fields: dict[str, str], marker: str) -> bytes:
    """A url-encoded form of exactly ``size`` bytes whose ``text`` is padded with spaces."""
    text = json.dumps({"schema_version": 1, "nodes": [], "edges": [], "marker": marker})
    empty = urlencode({**fields, "text": text}).encode()
    body = urlencode({**fields, "text": text + " " * (size - len(empty))}).encode()
    assert len(body) == size
    return body


def stored_draft(postgres: PrivatePostgres, slug: str) -> tuple[int, str]:
    with postgres.connect() as connection:
        row = connection.execute(
            "SELECT d.revision, d.text FROM editor_draft d JOIN editor_document doc "
            "ON d.document_id = doc.id WHERE doc.slug = %s",
            (slug,),
        ).fetchone()
    assert row is not None
    return row


def graph_count(postgres: PrivatePostgres) -> int:
    with postgres.connect() as connection:
        (count,) = connection.execute("SELECT count(*) FROM editor_frozengraph").fetchone()
    return count


def chunks(size: int) -> Iterator[bytes]:
    """A body sent without a Content-Length (chunked), ``size`` bytes in all."""
    sent = 0
    while sent < size:
        piece = min(16 * 1024, size - sent)
        sent += piece
        yield b" " * piece


def test_bodies_at_and_over_the_cap_are_taken_or_refused_cleanly_and_the_server_stays_up(
    postgres: PrivatePostgres, processes: Processes, token: str
) -> None:
    server = processes.server(workers=2, env={"GATEHOUSE_MAX_BODY_BYTES": str(CAP)})
    api = Api(server, token)
    created = api.request("POST", "/documents", json={"title": "Body cap"})
    assert created.status_code == 201, created.text
    slug = created.json()["slug"]
    draft = f"/documents/{slug}/draft"

    def put(body: bytes | Iterator[bytes], revision: int) -> requests.Response:
        return api.request(
            "PUT",
            draft,
            data=body,
            headers={"If-Match": f'"{revision}"', "Content-Type": "application/json"},
        )

    # The API: one byte under the cap is saved; one byte over, or far over, is refused.
    revision = api.request("GET", draft).json()["revision"]
    under = put(draft_body(CAP - 1, "under"), revision)
    assert under.status_code == 200, under.text
    revision = under.json()["revision"]
    saved = stored_draft(postgres, slug)
    assert saved[0] == revision
    assert '"marker": "under"' in saved[1]

    for size in (CAP + 1, 4 * CAP):
        refused = put(draft_body(size, "over"), revision)
        assert refused.status_code == 413
        assert refused.json()["error"]["code"] == "payload_too_large"
        assert refused.json()["error"]["details"] == {"limit": CAP}
    graphs = graph_count(postgres)
    refused = api.request("POST", "/graphs", data=b"[" + b" " * CAP + b"]")
    assert refused.status_code == 413
    assert refused.json()["error"]["code"] == "payload_too_large"
    # Sent without a length (chunked), the body is not read at all: a 4xx, never a 500.
    unmeasured = put(chunks(2 * CAP), revision)
    assert 400 <= unmeasured.status_code < 500, unmeasured.text
    assert stored_draft(postgres, slug) == saved
    assert graph_count(postgres) == graphs

    # A page form (the editor's JSON tab): under the cap it saves; over it, a plain 413 page.
    browser = signed_in(server.url)
    form = f"{server.url}/graphs/{slug}/edit/json/"
    fields = {"csrfmiddlewaretoken": browser.cookies["csrftoken"], "revision": str(revision)}
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Referer": form}
    over = browser.post(form, data=form_body(CAP + 1, fields, "page-over"), headers=headers)
    assert over.status_code == 413
    assert "Traceback" not in over.text
    assert stored_draft(postgres, slug) == saved
    taken = browser.post(form, data=form_body(CAP - 1, fields, "page-under"), headers=headers)
    assert taken.status_code == 200, taken.text[:500]
    revision, text = stored_draft(postgres, slug)
    assert revision == saved[0] + 1
    assert '"marker": "page-under"' in text

    # The server is still well, and still serves ordinary requests.
    assert server.healthy()
    assert all(process.poll() is None for process in processes.started)
    assert api.request("GET", draft).json()["revision"] == revision
