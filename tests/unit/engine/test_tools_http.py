"""http_request against a local server on 127.0.0.1, and the requests it refuses."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from editor.engine.errors import ToolError
from editor.engine.ports import ToolContext
from editor.tools import MAX_BODY_BYTES, build_registry
from editor.tools import http as http_tool

CONTEXT = ToolContext("run", "node", "idem-123", 5.0)


class LocalServer:
    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name.replace("_", "-"), value)
                self.end_headers()
                if self.command != "HEAD":
                    with contextlib.suppress(OSError):  # the client gave up
                        self.wfile.write(body)

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode()
                server.seen.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": body,
                    }
                )
                if self.path == "/json":
                    self._answer(200, b'{"ok": true, "n": [1, 2]}', "application/json")
                elif self.path == "/text":
                    self._answer(200, "héllo".encode("latin-1"), "text/plain; charset=latin-1")
                elif self.path == "/redirect":
                    self._answer(302, b"", "text/plain", Location="/json")
                elif self.path == "/big":
                    self._answer(200, b"x" * (MAX_BODY_BYTES + 1), "text/plain")
                elif self.path == "/not-json":
                    self._answer(200, b"{oops", "application/problem+json")
                elif self.path == "/slow":
                    server.release.wait(10)
                    self._answer(200, b"late", "text/plain")
                else:
                    self._answer(201, json.dumps({"echo": body}).encode(), "application/json")

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def entry(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer()
    local.thread.start()
    yield local
    local.release.set()
    local.httpd.shutdown()
    local.httpd.server_close()
    local.thread.join(timeout=5)


def request(allow: list[str], value: dict[str, Any], context: ToolContext = CONTEXT) -> Any:
    return build_registry(http_allow=allow).get("http_request").func(value, context)


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Names in the returned dict resolve to the address given; others as usual."""
    names: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in names and ":" in names[host]:
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (names[host], port, 0, 0))]
        if host in names:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[host], port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names


def test_a_get_to_an_allowed_address_returns_status_headers_and_json(server: LocalServer) -> None:
    answer = request([server.entry], {"method": "GET", "url": server.url("/json")})
    assert answer["status"] == 200
    assert answer["body"] == {"ok": True, "n": [1, 2]}
    assert answer["headers"]["content-type"] == "application/json"


def test_a_post_sends_a_json_body_and_the_idempotency_key(server: LocalServer) -> None:
    answer = request(
        [server.entry],
        {
            "method": "POST",
            "url": server.url("/items?x=1"),
            "body": {"name": "é"},
            "headers": {"X-Trace": "t1"},
        },
    )
    assert answer == {"status": 201, "headers": answer["headers"], "body": {"echo": '{"name":"é"}'}}
    seen = server.seen[0]
    assert seen["path"] == "/items?x=1"
    assert seen["headers"]["Content-Type"] == "application/json"
    assert seen["headers"]["Idempotency-Key"] == "idem-123"
    assert seen["headers"]["X-Trace"] == "t1"


def test_a_text_answer_is_decoded_in_its_charset(server: LocalServer) -> None:
    answer = request([server.entry], {"method": "GET", "url": server.url("/text")})
    assert answer["body"] == "héllo"


def test_a_redirect_is_returned_as_it_is_not_followed(server: LocalServer) -> None:
    answer = request([server.entry], {"method": "GET", "url": server.url("/redirect")})
    assert answer["status"] == 302
    assert answer["headers"]["location"] == "/json"
    assert [seen["path"] for seen in server.seen] == ["/redirect"]


def test_a_host_name_connects_to_the_checked_address_and_is_sent_as_host(
    server: LocalServer, fake_dns: dict[str, str]
) -> None:
    fake_dns["service.test"] = "127.0.0.1"
    allow = [f"service.test:{server.port}", server.entry]
    answer = request(allow, {"method": "GET", "url": server.url("/json", "service.test")})
    assert answer["status"] == 200
    assert server.seen[0]["headers"]["Host"] == f"service.test:{server.port}"


def test_an_allowed_name_that_resolves_to_a_private_address_is_refused(
    fake_dns: dict[str, str],
) -> None:
    fake_dns["public.test"] = "10.0.0.5"
    with pytest.raises(
        ToolError, match=r"`public.test` resolved to 10.0.0.5, which is not a public"
    ):
        request(["public.test"], {"method": "GET", "url": "http://public.test/"})


@pytest.mark.parametrize(
    "address",
    [
        "::127.0.0.1",  # IPv4-compatible (deprecated), loopback
        "::8.8.8.8",  # IPv4-compatible, whatever it embeds
        "::ffff:10.0.0.5",  # IPv4-mapped
        "::ffff:0:10.0.0.5",  # SIIT's IPv4-translated
        "64:ff9b::10.0.0.5",  # NAT64 of a private address
        "64:ff9b::127.0.0.1",  # NAT64 of loopback
        "64:ff9b:1::8.8.8.8",  # local-use NAT64
        "2002:a00:5::1",  # 6to4 of 10.0.0.5
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "fec0::1",  # site-local (deprecated)
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
    ],
)
def test_an_ipv6_address_carrying_a_private_or_local_one_is_refused(
    fake_dns: dict[str, str], address: str
) -> None:
    fake_dns["public.test"] = address
    with pytest.raises(ToolError, match="which is not a public address"):
        request(["public.test"], {"method": "GET", "url": "http://public.test/"})


@pytest.mark.parametrize(
    "address", ["64:ff9b::8.8.8.8", "2002:808:808::1", "::ffff:0:8.8.8.8", "2606:4700::1111"]
)
def test_an_ipv6_address_reaching_a_public_one_is_public(address: str) -> None:
    assert http_tool._is_public(ipaddress.ip_address(address))


def test_an_allowed_name_that_resolves_to_loopback_is_refused(server: LocalServer) -> None:
    with pytest.raises(ToolError, match="which is not a public address; list"):
        request(
            [f"localhost:{server.port}"], {"method": "GET", "url": server.url("/", "localhost")}
        )
    assert server.seen == []


def test_a_host_or_port_not_on_the_allow_list_is_refused(server: LocalServer) -> None:
    with pytest.raises(
        ToolError, match=f"`127.0.0.1:{server.port}` is not in GATEHOUSE_HTTP_ALLOW"
    ):
        request(["127.0.0.1:1"], {"method": "GET", "url": server.url("/json")})
    with pytest.raises(ToolError, match="is not in GATEHOUSE_HTTP_ALLOW"):
        request([server.entry], {"method": "GET", "url": "http://example.org/"})
    assert server.seen == []


def test_an_entry_without_a_port_allows_only_the_default_port(server: LocalServer) -> None:
    with pytest.raises(ToolError, match="is not in GATEHOUSE_HTTP_ALLOW"):
        request(["127.0.0.1"], {"method": "GET", "url": server.url("/json")})


def test_the_disabled_tool_refuses_every_url() -> None:
    with pytest.raises(ToolError, match="is not in GATEHOUSE_HTTP_ALLOW"):
        request([], {"method": "GET", "url": "http://127.0.0.1/"})


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://127.0.0.1/", "is not an http or https URL"),
        ("http://user:pw@127.0.0.1/", "carries user info"),
        ("http://127.0.0.1:99999/", "is not a valid URL"),
    ],
)
def test_urls_that_are_not_plain_http_are_refused(url: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        request(["127.0.0.1"], {"method": "GET", "url": url})


def test_a_host_header_cannot_be_given(server: LocalServer) -> None:
    with pytest.raises(ToolError, match="the header `Host` is set by the tool"):
        request(
            [server.entry],
            {"method": "GET", "url": server.url("/json"), "headers": {"Host": "elsewhere"}},
        )


def test_an_unknown_method_is_refused_by_the_input_schema() -> None:
    with pytest.raises(ToolError, match="input_schema"):
        request(["127.0.0.1"], {"method": "BREW", "url": "http://127.0.0.1/"})


def test_a_slow_server_fails_the_call_after_the_context_timeout(server: LocalServer) -> None:
    with pytest.raises(ToolError, match=r"did not answer within 0\.2 s"):
        request(
            [server.entry],
            {"method": "GET", "url": server.url("/slow")},
            ToolContext("run", "node", "key", 0.2),
        )


def test_a_body_over_the_cap_fails_the_call(server: LocalServer) -> None:
    with pytest.raises(ToolError, match=f"larger than {MAX_BODY_BYTES} bytes"):
        request([server.entry], {"method": "GET", "url": server.url("/big")})


def test_a_json_answer_that_is_not_json_fails_the_call(server: LocalServer) -> None:
    with pytest.raises(ToolError, match="says it is JSON but is not"):
        request([server.entry], {"method": "GET", "url": server.url("/not-json")})


def test_a_refused_connection_fails_the_call() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ToolError, match="failed"):
        request([f"127.0.0.1:{port}"], {"method": "GET", "url": f"http://127.0.0.1:{port}/"})


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_https_verifies_the_certificate_against_the_host_name(
    tmp_path: Path, fake_dns: dict[str, str]
) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=service.test",
            "-addext",
            "subjectAltName=DNS:service.test",
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    server_names: list[str | None] = []
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    tls.sni_callback = lambda sock, name, context: server_names.append(name)
    listener = tls.wrap_socket(socket.create_server(("127.0.0.1", 0)), server_side=True)
    port = listener.getsockname()[1]

    def accept_once() -> None:
        with contextlib.suppress(OSError):  # the client refuses the self-signed certificate
            connection, _ = listener.accept()
            connection.close()

    thread = threading.Thread(target=accept_once, daemon=True)
    thread.start()
    fake_dns["service.test"] = "127.0.0.1"
    try:
        with pytest.raises(ToolError, match="CERTIFICATE_VERIFY_FAILED"):
            request(
                [f"service.test:{port}", f"127.0.0.1:{port}"],
                {"method": "GET", "url": f"https://service.test:{port}/"},
            )
    finally:
        thread.join(timeout=5)
        listener.close()
    assert server_names == ["service.test"]
