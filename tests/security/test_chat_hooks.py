"""Finding 3 of issue 32: a game's chat hook was a way into the service's own network. The host was checked
once and resolved again to connect, apprise followed redirects (a ``307`` from a "public" hook made the worker
POST the notice to ``127.0.0.1:…/latest/meta-data/iam``), and the internal server's text was shown to the
host. Now the address checked is the address connected to, no redirect is followed, and the host is told a
class of failure only (``service/infra/chat_network.py``).

Real local servers (``tests/chat_receiver.py``) play the hook, the redirector and the internal service; the
name's resolution is replaced in-process by one that answers differently the second time.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from service.infra import chat, chat_network
from service.infra.chat import ChatPolicy, ChatSendError
from service.infra.config import ConfigurationError, check
from tests.chat_receiver import ChatReceiver, chat_receiver

#: The tests' allowance: the hooks and the internal service all listen on 127.0.0.1.
LOOPBACK = ChatPolicy(loopback=True, timeout=5)
#: The production policy (no loopback), with a short wait for an address that answers nothing.
STRICT = ChatPolicy(timeout=3)
PUBLIC = "2606:4700:4700::1111"  # a global address that is not this machine


@pytest.fixture
def internal() -> Iterator[ChatReceiver]:
    """A service inside the network (the cloud metadata service, say), with a secret in its error text."""
    with chat_receiver() as receiver:
        receiver.status = 500
        receiver.answer = b'{"error": "AccessKeyId=ASIAINTERNALSECRET"}'
        yield receiver


def test_a_redirect_from_the_hook_is_not_followed(internal: ChatReceiver) -> None:
    with chat_receiver() as hook:
        hook.location = f"http://127.0.0.1:{internal.port}/latest/meta-data/iam"
        with pytest.raises(ChatSendError) as failed:
            chat.send(hook.url, "Your turn", "Body", "info", LOOPBACK)
        assert len(hook.bodies) == 1  # the hook was asked once…
        assert internal.bodies == [] and internal.paths == []  # …and the internal service never
        assert str(failed.value).startswith("redirect refused")
        assert "ASIA" not in str(failed.value) and "meta-data" not in str(failed.value)


def test_a_redirect_is_refused_whatever_a_plugin_asks(internal: ChatReceiver) -> None:
    # A plugin that forgets apprise's switch and lets requests follow redirects is guarded all the same.
    with chat_receiver() as hook:
        hook.location = f"http://127.0.0.1:{internal.port}/latest/meta-data/iam"
        with chat_network.guarded(private_hosts=False, loopback=True) as guard:
            answer = requests.post(f"http://127.0.0.1:{hook.port}/hook", json={}, allow_redirects=True, timeout=5)
        assert answer.status_code == 307 and guard.redirected
        assert internal.paths == []
    # Outside a send nothing changes: requests follows the redirect as ever.
    with chat_receiver() as hook:
        hook.location = f"http://127.0.0.1:{internal.port}/elsewhere"
        requests.post(f"http://127.0.0.1:{hook.port}/hook", json={}, timeout=5)
        assert internal.paths == ["/elsewhere"]


class Rebinding:
    """A resolver for ``chat.example.net`` that answers a public address first and 127.0.0.1 afterwards."""

    def __init__(self, first: str = PUBLIC, then: str = "127.0.0.1") -> None:
        self.first, self.then = first, then
        self.asked = 0
        self.real = socket.getaddrinfo

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host != "chat.example.net":
            return self.real(host, port, *args, **kwargs)
        self.asked += 1
        address = self.first if self.asked == 1 else self.then
        family = socket.AF_INET6 if ipaddress.ip_address(address).version == 6 else socket.AF_INET
        sockaddr = (address, int(port or 0), 0, 0) if family == socket.AF_INET6 else (address, int(port or 0))
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr)]


def test_the_address_checked_is_the_address_connected_to(monkeypatch: pytest.MonkeyPatch) -> None:
    with chat_receiver() as internal:
        resolver = Rebinding()
        monkeypatch.setattr(socket, "getaddrinfo", resolver)
        with pytest.raises(ChatSendError) as failed:
            chat.send(f"json://chat.example.net:{internal.port}/hook", "Your turn", "Body", "info", STRICT)
        assert internal.bodies == []  # the second answer (127.0.0.1) was never used
        assert resolver.asked == 1  # one resolution, checked, then connected to
        assert not failed.value.permanent and "could not be reached" in str(failed.value)


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "::ffff:127.0.0.1", "169.254.169.254", "0.0.0.0", "::"])
def test_a_name_that_resolves_inside_is_refused_at_connect_time(
    monkeypatch: pytest.MonkeyPatch, internal: ChatReceiver, address: str
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", Rebinding(first=address, then=address))
    with pytest.raises(ChatSendError) as refused:
        chat.send(f"ntfy://chat.example.net:{internal.port}/game", "Your turn", "Body", "info", STRICT)
    assert refused.value.permanent and str(refused.value).startswith("address not allowed")
    assert internal.paths == []


def test_the_host_is_told_the_status_never_the_far_sides_text(internal: ChatReceiver) -> None:
    # ntfy's plugin copies the server's "error" field into its warning: the host used to read it.
    with pytest.raises(ChatSendError) as failed:
        chat.send(f"ntfy://127.0.0.1:{internal.port}/game", "Your turn", "Body", "info", LOOPBACK)
    assert internal.paths  # it did reach the server (the test's allowance)
    assert str(failed.value) == "the chat service answered 500"


def test_loopback_is_allowed_only_to_the_tests_and_never_in_production() -> None:
    assert not ChatPolicy.from_config({}).loopback
    assert not ChatPolicy.from_config({"CHAT_PRIVATE_HOSTS": True}).loopback
    assert ChatPolicy.from_config({"CHAT_LOOPBACK_FOR_TESTS": True}).loopback
    with pytest.raises(ConfigurationError, match="CHAT_LOOPBACK_FOR_TESTS"):
        check(
            {
                "ENV": "production",
                "SECRET_KEY": "a-long-random-production-key",
                "MAIL_BACKEND": "smtp",
                "SMTP_SECURITY": "none",
                "CHAT_LOOPBACK_FOR_TESTS": True,
            }
        )
    with chat_receiver() as receiver, pytest.raises(ChatSendError) as refused:
        chat.send(receiver.url, "Your turn", "Body", "info", ChatPolicy(private_hosts=True, timeout=3))
    assert refused.value.permanent and receiver.bodies == []


@pytest.mark.parametrize(
    ("address", "private_hosts", "refused"),
    [
        ("93.184.215.14", False, False),
        ("2606:4700:4700::1111", False, False),
        ("10.0.0.8", False, True),
        ("10.0.0.8", True, False),
        ("172.16.5.4", False, True),
        ("192.168.1.1", False, True),
        ("100.64.1.2", False, True),  # carrier-grade NAT
        ("fd12:3456::1", False, True),  # IPv6 unique-local
        ("fd12:3456::1", True, False),
        ("127.0.0.1", True, True),  # loopback even with private hosts
        ("::1", True, True),
        ("::ffff:127.0.0.1", True, True),
        ("::ffff:10.0.0.8", False, True),
        ("64:ff9b::7f00:1", True, True),  # NAT64 of 127.0.0.1
        ("2002:7f00:1::1", True, True),  # 6to4 of 127.0.0.1
        ("169.254.169.254", True, True),  # the metadata service
        ("fd00:ec2::254", True, True),  # AWS's IPv6 metadata service
        ("100.100.100.200", True, True),  # Alibaba's metadata service
        ("fe80::1", True, True),
        ("224.0.0.1", True, True),
        ("ff02::1", True, True),
        ("0.0.0.0", True, True),
        ("::", True, True),
        ("240.0.0.1", True, True),
        ("255.255.255.255", True, True),
    ],
)
def test_which_addresses_a_notice_may_reach(address: str, private_hosts: bool, refused: bool) -> None:
    assert (chat_network.refusal(address, private_hosts=private_hosts) is not None) is refused
