"""The health check: `/healthz`."""

from django.test import Client


def test_it_answers_ok_as_json_without_a_session(client: Client) -> None:
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"status": "ok"}


def test_it_is_never_cached(client: Client) -> None:
    response = client.get("/healthz")

    assert "no-cache" in response["Cache-Control"]


def test_it_refuses_a_post(client: Client) -> None:
    assert client.post("/healthz").status_code == 405
