"""Where a chat notice may connect: the address checked is the address connected to, and no redirect is followed.

A game's chat address is chosen by whoever creates the game, and the worker posts to it (ARCHITECTURE §9: the
service must not be a way into its own network). Checking the name once and letting the HTTP library
resolve it again to connect is not enough: a name can answer a public address to the check and
``127.0.0.1`` to the connection, and a public hook can answer ``307`` to an internal one. So, while
:func:`guarded` is in force:

- every connection urllib3 opens (apprise posts through ``requests``) resolves the name once, refuses it if
  any of its addresses is refused (:func:`refusal`), and connects to those very addresses (the socket's
  peer is checked to be the address approved);
- ``requests`` follows no redirect: the ``3xx`` answer is kept as the answer, and noted, so the notice
  fails as "redirect refused";
- the HTTP status of each answer is noted, so that the host is told "the chat service answered 500" and
  never the far side's text.

Both hooks are installed once per process, on urllib3's ``create_connection`` and on
``requests.Session.get_redirect_target`` (the method ``requests`` documents for deciding redirects), and
change nothing outside :func:`guarded`: the guard is a context variable, which apprise copies into the
thread it posts from.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

#: Cloud metadata services outside the link-local range (which is refused whatever the settings): AWS's
#: IPv6 one, Alibaba's, Oracle's older one.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(text) for text in ("fd00:ec2::254", "100.100.100.200", "192.0.0.192")
)

#: NAT64 prefixes (RFC 6052, RFC 8215): an address in them reaches the IPv4 address in its last 32 bits.
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))


class AddressRefused(OSError):
    """A connection the guard refused; urllib3 reports it as a failed connection, which apprise logs."""


@dataclass
class Guard:
    """The rules of one send, and what happened during it."""

    private_hosts: bool = False
    loopback: bool = False
    refused: list[str] = field(default_factory=list)
    redirected: bool = False
    statuses: list[int] = field(default_factory=list)


_guard: ContextVar[Guard | None] = ContextVar("smallworld_chat_guard", default=None)
_installed = False
_install_lock = threading.Lock()


def refusal(text: str, *, private_hosts: bool = False, loopback: bool = False) -> str | None:
    """Why a notice may not be sent to this address (a few words), or ``None`` when it may.

    Link-local (metadata services), multicast, unspecified and reserved addresses are always refused;
    private networks (RFC 1918, IPv6 unique-local, carrier-grade NAT, documentation ranges) unless
    ``CHAT_PRIVATE_HOSTS``; loopback unless ``CHAT_LOOPBACK_FOR_TESTS``, which production refuses. An IPv6
    address that carries an IPv4 one (mapped, NAT64, 6to4, Teredo) is judged by the IPv4 one too.

    >>> refusal("93.184.215.14") is None
    True
    >>> refusal("::ffff:127.0.0.1")
    'a loopback address'
    >>> refusal("169.254.169.254", private_hosts=True, loopback=True)
    'a cloud metadata or link-local address'
    >>> refusal("100.64.0.1"), refusal("100.64.0.1", private_hosts=True)
    ('a private or reserved address', None)
    >>> refusal("0.0.0.0"), refusal("::")
    ('an unspecified address', 'an unspecified address')
    """
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return "not an IP address"
    if isinstance(address, ipaddress.IPv6Address):
        for embedded in _embedded_ipv4(address):
            reason = refusal(str(embedded), private_hosts=private_hosts, loopback=loopback)
            if reason:
                return reason
        if address.ipv4_mapped is not None:
            return None
    if address in METADATA_ADDRESSES or address.is_link_local:
        return "a cloud metadata or link-local address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_loopback:
        return None if loopback else "a loopback address"
    if address.is_reserved:
        return "a reserved address"
    if not address.is_global or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local):
        return None if private_hosts else "a private or reserved address"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    found: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if any(address in network for network in _NAT64):
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


@contextmanager
def guarded(*, private_hosts: bool, loopback: bool) -> Iterator[Guard]:
    """Within the block, HTTP from this context (and the threads apprise copies it into) is guarded."""
    _install()
    guard = Guard(private_hosts=private_hosts, loopback=loopback)
    token = _guard.set(guard)
    try:
        yield guard
    finally:
        _guard.reset(token)


def _install() -> None:
    global _installed
    if _installed:
        return
    with _install_lock:
        if _installed:
            return
        import requests
        import urllib3.util.connection

        original_connect = urllib3.util.connection.create_connection
        original_redirect = requests.Session.get_redirect_target

        def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
            guard = _guard.get()
            if guard is None:
                return original_connect(address, *args, **kwargs)
            return _connect_checked(guard, address, *args, **kwargs)

        def get_redirect_target(self: Any, resp: requests.Response) -> str | None:
            guard = _guard.get()
            if guard is None:
                return original_redirect(self, resp)
            guard.statuses.append(resp.status_code)
            if resp.is_redirect:
                guard.redirected = True
            return None

        urllib3.util.connection.create_connection = create_connection
        requests.Session.get_redirect_target = get_redirect_target  # type: ignore[method-assign]
        _installed = True


def _connect_checked(
    guard: Guard,
    address: tuple[str, int],
    timeout: Any = None,
    source_address: tuple[str, int] | None = None,
    socket_options: Any = None,
) -> socket.socket:
    """urllib3's ``create_connection``, with the check between the one resolution and the connection."""
    from urllib3.util.connection import allowed_gai_family

    host, port = address
    host = host.strip("[]")
    answers = socket.getaddrinfo(host, port, allowed_gai_family(), socket.SOCK_STREAM)
    for *_, sockaddr in answers:
        reason = refusal(str(sockaddr[0]), private_hosts=guard.private_hosts, loopback=guard.loopback)
        if reason:
            # One refused answer refuses the name: another try could be handed that one.
            guard.refused.append(f"{host} is {reason} ({str(sockaddr[0]).split('%', 1)[0]})")
            raise AddressRefused(f"the chat's server {host} is {reason}")
    error: OSError | None = None
    for family, kind, proto, _name, sockaddr in answers:
        sock = None
        try:
            sock = socket.socket(family, kind, proto)
            for option in socket_options or ():
                sock.setsockopt(*option)
            if timeout is None or isinstance(timeout, int | float):  # else urllib3's "the default" marker
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            if ipaddress.ip_address(sock.getpeername()[0]) != ipaddress.ip_address(str(sockaddr[0]).split("%")[0]):
                raise AddressRefused("the connection reached another address than the one approved")
            return sock
        except OSError as failed:
            error = failed
            if sock is not None:
                sock.close()
    raise error or OSError(f"{host} has no address")
