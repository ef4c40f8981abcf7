"""``http_request``: the one built-in with an effect outside the run (``write``).

It is disabled unless ``GATEHOUSE_HTTP_ALLOW`` lists ``host[:port]`` entries. The rules:

* The URL (``http`` or ``https``, no user info) must name an allowed host and port. An entry
  without a port allows the scheme's default port only (80 for http, 443 for https); host
  names compare case-insensitively; IPv6 entries are written in brackets (``[::1]:8080``).
* The host is resolved **before** connecting, and every address it resolves to is checked:
  a loopback, private, link-local, site-local, multicast, unspecified or otherwise
  non-global address is refused (and so is an IPv6 address carrying such an IPv4 address:
  ``::ffff:10.0.0.1``, ``::127.0.0.1``, NAT64's ``64:ff9b::a00:1``, 6to4's ``2002:a00:1::``)
  unless that address itself is listed with the port (``127.0.0.1:8080``). So an
  allow-listed *name* is trusted to be a public service, and cannot be pointed at the
  machine's own network by its DNS answer; an operator who means an internal service lists
  its address.
* The connection goes to the checked address (the name is only the ``Host`` header and the
  TLS server name), so the address cannot change between the check and the connection.
* No redirect is followed: a 3xx comes back as it is. The call gives up after the tool
  context's ``timeout``; a response body over :data:`MAX_BODY_BYTES` fails the call.
* The body is decoded as JSON when the response's content type is JSON (``application/json``
  or ``…+json``; an empty body is ``null``), else as text in its charset (UTF-8 by default).
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import socket
import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from editor.engine.errors import ToolError
from editor.engine.ports import ToolContext, ToolEffect, ToolSpec
from editor.tools.checked import compact_json, with_input_check

__all__ = [
    "MAX_BODY_BYTES",
    "AllowEntry",
    "check_allowed_url",
    "http_request_tool",
    "parse_allow_list",
]

MAX_BODY_BYTES = 1 << 20
DEFAULT_PORTS = {"http": 80, "https": 443}
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_FORBIDDEN_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "method": {"enum": list(METHODS)},
        "url": {"type": "string"},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "body": {},
    },
    "required": ["method", "url"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "status": {"type": "integer"},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "body": {},
    },
    "required": ["status", "headers", "body"],
}


@dataclass(frozen=True, slots=True)
class AllowEntry:
    host: str  # lower case; an IPv6 address without brackets
    port: int | None  # None: the scheme's default port

    def allows(self, host: str, port: int, scheme: str) -> bool:
        wanted = self.port if self.port is not None else DEFAULT_PORTS[scheme]
        return self.host == host and wanted == port


def parse_allow_list(entries: Sequence[str]) -> tuple[AllowEntry, ...]:
    """``GATEHOUSE_HTTP_ALLOW``'s entries; a malformed one raises :class:`ValueError`."""
    parsed = []
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        try:
            split = urlsplit(f"//{entry}")
            host, port = split.hostname, split.port
        except ValueError as error:
            raise ValueError(f"GATEHOUSE_HTTP_ALLOW: `{raw}` is not host[:port]: {error}") from None
        if not host or split.path or split.query or split.fragment or split.username:
            raise ValueError(f"GATEHOUSE_HTTP_ALLOW: `{raw}` is not host[:port]")
        parsed.append(AllowEntry(_normal_host(host), port))
    return tuple(parsed)


def _normal_host(host: str) -> str:
    host = host.lower().rstrip(".")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


#: IPv6 ranges whose last 32 bits are an IPv4 address the packets reach: public only when
#: that address is (NAT64's well-known prefix, RFC 6052; SIIT's translated form, RFC 2765).
_V4_IN_LOW_BITS = (
    ipaddress.IPv6Network("64:ff9b::/96"),
    ipaddress.IPv6Network("::ffff:0:0:0/96"),
)
#: IPv6 ranges never public, whatever they embed: IPv4-compatible addresses (deprecated by
#: RFC 4291; ``::127.0.0.1``), local-use NAT64 (RFC 8215), site-local (deprecated by RFC 3879)
#: and Teredo (its relays reach an address of the client's choosing). Python's
#: ``is_global`` counts the first three as public.
_NEVER_PUBLIC = (
    ipaddress.IPv6Network("::/96"),
    ipaddress.IPv6Network("64:ff9b:1::/48"),
    ipaddress.IPv6Network("fec0::/10"),
    ipaddress.IPv6Network("2001::/32"),
)


def _is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether ``address`` is a public unicast address, looking through every form of IPv6
    that carries an IPv4 address (mapped, NAT64, SIIT, 6to4) to the address it reaches."""
    if isinstance(address, ipaddress.IPv6Address):
        if any(address in network for network in _NEVER_PUBLIC):
            return False
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and any(address in network for network in _V4_IN_LOW_BITS):
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return _is_public(embedded)
    return address.is_global and not address.is_multicast


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to a checked address while naming the host in the ``Host`` header."""

    def __init__(self, address: str, host: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """As :class:`_PinnedHTTPConnection`, over TLS verified against the host name."""

    def __init__(self, address: str, host: str, port: int, timeout: float) -> None:
        self._tls = ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=self._tls)
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


class HttpRequest:
    """The tool's function, bound to the allow list."""

    def __init__(self, allow: tuple[AllowEntry, ...]) -> None:
        self.allow = allow

    def __call__(self, value: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        scheme, host, port, target = self._target(value["url"])
        address = self._checked_address(scheme, host, port)
        headers = {"Idempotency-Key": context.idempotency_key}
        for name, header in value.get("headers", {}).items():
            if name.lower() in _FORBIDDEN_HEADERS:
                raise ToolError(f"the header `{name}` is set by the tool and cannot be given")
            headers[name] = header
        body = self._body(value, headers)
        connection_class = _PinnedHTTPSConnection if scheme == "https" else _PinnedHTTPConnection
        connection = connection_class(address, host, port, context.timeout)
        deadline = time.monotonic() + context.timeout
        try:
            connection.request(value["method"], target, body=body, headers=headers)
            response = connection.getresponse()
            raw = self._read(response, deadline, value["method"])
            return {
                "status": response.status,
                "headers": self._headers(response),
                "body": self._decode(response, raw),
            }
        except TimeoutError:
            raise ToolError(f"{value['url']} did not answer within {context.timeout:g} s") from None
        except (OSError, http.client.HTTPException, ValueError) as error:
            raise ToolError(f"the request to {value['url']} failed: {error}") from None
        finally:
            connection.close()

    def _target(self, url: str) -> tuple[str, str, int, str]:
        try:
            split = urlsplit(url)
            port = split.port
        except ValueError as error:
            raise ToolError(f"`{url}` is not a valid URL: {error}") from None
        scheme = split.scheme.lower()
        if scheme not in DEFAULT_PORTS or not split.hostname:
            raise ToolError(f"`{url}` is not an http or https URL")
        if split.username is not None or split.password is not None:
            raise ToolError(f"`{url}` carries user info; send credentials in a header instead")
        host = _normal_host(split.hostname)
        port = port if port is not None else DEFAULT_PORTS[scheme]
        if not any(entry.allows(host, port, scheme) for entry in self.allow):
            raise ToolError(
                f"`{_host_port(host, port)}` is not in GATEHOUSE_HTTP_ALLOW, so `{url}` "
                "may not be requested"
            )
        target = split.path or "/"
        if split.query:
            target += "?" + split.query
        return scheme, host, port, target

    def _checked_address(self, scheme: str, host: str, port: int) -> str:
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as error:
            raise ToolError(f"the host `{host}` cannot be resolved: {error}") from None
        addresses = list(dict.fromkeys(str(info[4][0]).split("%")[0] for info in found))
        if not addresses:
            raise ToolError(f"the host `{host}` resolved to no address")
        for text in addresses:
            address = ipaddress.ip_address(text)
            listed = any(entry.allows(str(address), port, scheme) for entry in self.allow)
            if not _is_public(address) and not listed:
                raise ToolError(
                    f"`{host}` resolved to {address}, which is not a public address; list "
                    f"`{_host_port(str(address), port)}` in GATEHOUSE_HTTP_ALLOW to allow it"
                )
        return addresses[0]

    @staticmethod
    def _body(value: dict[str, Any], headers: dict[str, str]) -> bytes | None:
        if "body" not in value or value["body"] is None:
            return None
        given = {name.lower() for name in headers}
        if isinstance(value["body"], str):
            if "content-type" not in given:
                headers["Content-Type"] = "text/plain; charset=utf-8"
            return value["body"].encode("utf-8")
        if "content-type" not in given:
            headers["Content-Type"] = "application/json"
        return compact_json(value["body"]).encode("utf-8")

    @staticmethod
    def _read(response: http.client.HTTPResponse, deadline: float, method: str) -> bytes:
        if method == "HEAD":
            return b""
        chunks: list[bytes] = []
        size = 0
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError
            chunk = response.read1(64 * 1024)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise ToolError(f"the response body is larger than {MAX_BODY_BYTES} bytes")
            chunks.append(chunk)

    @staticmethod
    def _headers(response: http.client.HTTPResponse) -> dict[str, str]:
        headers: dict[str, str] = {}
        for name, header in response.getheaders():
            key = name.lower()
            headers[key] = f"{headers[key]}, {header}" if key in headers else header
        return headers

    @staticmethod
    def _decode(response: http.client.HTTPResponse, raw: bytes) -> Any:
        content_type = response.headers.get_content_type()
        charset = response.headers.get_content_charset() or "utf-8"
        if content_type == "application/json" or content_type.endswith("+json"):
            if not raw.strip():
                return None
            try:
                return json.loads(raw.decode(charset))
            except (ValueError, LookupError) as error:
                raise ToolError(f"the response says it is JSON but is not: {error}") from None
        try:
            return raw.decode(charset, errors="replace")
        except LookupError:
            return raw.decode("utf-8", errors="replace")


def check_allowed_url(url: str, allow: tuple[AllowEntry, ...]) -> None:
    """Raise :class:`ToolError` unless ``http_request`` itself could reach ``url``: an http(s)
    URL without user info, its host and port in ``GATEHOUSE_HTTP_ALLOW``, and every address the
    host resolves to public unless listed (what the MCP catalogue's HTTP servers must pass)."""
    checker = HttpRequest(allow)
    scheme, host, port, _ = checker._target(url)
    checker._checked_address(scheme, host, port)


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def http_request_tool(http_allow: Sequence[str]) -> ToolSpec:
    allow = parse_allow_list(http_allow)
    return ToolSpec(
        "http_request",
        "Sends one HTTP request ({method, url, headers?, body?}) to a host listed in "
        "GATEHOUSE_HTTP_ALLOW and returns {status, headers, body}. No redirects are followed; "
        "non-public addresses are refused unless listed by address.",
        with_input_check(INPUT_SCHEMA, HttpRequest(allow)),
        ToolEffect.WRITE,
        INPUT_SCHEMA,
        OUTPUT_SCHEMA,
        enabled=bool(allow),
    )
