"""Names whose DNS answer an attacker chose, for the processes that run ``http_request``.

An operator allows a *name* in ``GATEHOUSE_HTTP_ALLOW``; whoever controls that name's DNS
decides the address it resolves to, and may answer an IPv6 form that carries a loopback or
private address, or is private itself. This module stands in for such a DNS server in the
process that loads it: named in ``GATEHOUSE_TOOL_MODULES`` (it registers no tool), it makes the
names of :data:`ANSWERS` resolve to those addresses, and leaves every other name to the system's
resolver. The hostile corpus (case 39) and the load test's attacker give it to their workers.

Each address carries 127.0.0.1 (or is site-local), where the tests' outside world listens.
"""

from __future__ import annotations

import socket
from typing import Any

__all__ = ["ANSWERS", "register"]

#: What the attacker's DNS answers for each name (AAAA records).
ANSWERS = {
    # IPv4-compatible (deprecated by RFC 4291): the IPv4 address in the low 32 bits.
    "compatible.rebinding.test": "::127.0.0.1",
    # NAT64's well-known prefix (RFC 6052): a translator sends it to 127.0.0.1.
    "nat64.rebinding.test": "64:ff9b::7f00:1",
    # 6to4 (RFC 3056): the IPv4 address in bits 16 to 47.
    "sixtofour.rebinding.test": "2002:7f00:1::",
    # Site-local (deprecated by RFC 3879): a private network's.
    "site-local.rebinding.test": "fec0::1",
}

_system_getaddrinfo = socket.getaddrinfo


def _getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.lower().rstrip(".") if isinstance(host, str) else host
    if name in ANSWERS:
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (ANSWERS[name], port, 0, 0))]
    return _system_getaddrinfo(host, port, *args, **kwargs)


def register(registry: Any) -> None:
    """No tool: the names of :data:`ANSWERS` resolve as the attacker's DNS answers them."""
    socket.getaddrinfo = _getaddrinfo
