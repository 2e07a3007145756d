"""service.infra.chat: which chat addresses are accepted, how they are shown back, and sending one notice."""

from __future__ import annotations

import doctest
import os
import time

import pytest

from service.infra import chat
from service.infra.chat import ChatPolicy, ChatSendError, ChatUrlError, check_chat_url, mask
from tests.chat_receiver import chat_receiver

STRICT = ChatPolicy()
LOCAL = ChatPolicy(loopback=True, timeout=5)


def test_the_documented_examples() -> None:
    assert doctest.testmod(chat).failed == 0


@pytest.mark.parametrize(
    "url",
    [
        "discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js",
        "https://discord.com/api/webhooks/4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js",
        "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ",
        "matrixs://bot:password@matrix.example.org/#game-room",
        "tgram://123456789:abcdefg_hijklmnop/-100123",
        "jsons://hooks.example.org/games/secret-token",
    ],
)
def test_chat_services_are_accepted(url: str) -> None:
    assert check_chat_url(url, STRICT) == url


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("nonsense", "apprise cannot read this chat address"),
        ("https://example.org/hook", "apprise cannot read this chat address"),
        ("discord://", "apprise cannot read this chat address (discord://…)"),
        ("mailto://user:pass@gmail.com", "not a chat service this site posts to"),
        ("syslog://", "not a chat service this site posts to"),
        ("json://127.0.0.1:8080/hook", "private or local network (127.0.0.1)"),
        ("jsons://10.1.2.3/hook", "private or local network"),
        ("json://[::1]/hook", "private or local network"),
        ("json://169.254.169.254/latest", "private or local network"),
        ("jsons://localhost/hook", "private or local network"),
        ("jsons://hooks.example.org/a b", "no spaces"),
        ("   ", "give a chat address"),
    ],
)
def test_what_cannot_be_used_is_refused_with_the_reason(url: str, says: str) -> None:
    with pytest.raises(ChatUrlError) as refused:
        check_chat_url(url, STRICT)
    assert says in str(refused.value)
    assert "pass" not in str(refused.value)  # the address is not repeated back


def test_a_chat_on_this_network_is_allowed_only_when_configured() -> None:
    assert check_chat_url("json://127.0.0.1:8080/hook", LOCAL) == "json://127.0.0.1:8080/hook"
    assert ChatPolicy.from_config({"CHAT_PRIVATE_HOSTS": True}).private_hosts
    assert not ChatPolicy.from_config({}).private_hosts


def test_the_schemes_allowed_come_from_the_configuration() -> None:
    only_discord = ChatPolicy.from_config({"CHAT_SCHEMES": "discord, slack"})
    assert only_discord.schemes == {"discord", "slack"}
    with pytest.raises(ChatUrlError, match="use one of: discord, slack"):
        check_chat_url("jsons://hooks.example.org/x", only_discord)
    assert ChatPolicy.from_config({"CHAT_SCHEMES": ["json"]}).schemes == {"json"}


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js", "JHMHI8qBe7bk2ZwO5U711o3dV_js"),
        ("https://discord.com/api/webhooks/4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js", "JHMHI8qBe7bk2ZwO5U711o3dV_js"),
        ("slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ", "TIiajkdnlazkcOXrIdevi7FQ"),
        ("matrixs://bot:hunter2@matrix.example.org/#game-room", "hunter2"),
        ("tgram://123456789:abcdefg_hijklmnop/-100123", "abcdefg_hijklmnop"),
        ("jsons://hooks.example.org/games/very-secret-token", "very-secret-token"),
        ("jsons://user:pw@hooks.example.org/x", "pw@"),
    ],
)
def test_an_address_is_shown_back_masked(url: str, secret: str) -> None:
    shown = mask(url)
    assert shown is not None and secret not in shown
    assert shown.split("://")[0] in url


def test_sending_posts_the_notice_and_says_why_not_when_it_fails() -> None:
    with chat_receiver() as receiver:
        chat.send(receiver.url, "Title", "Body", "warning", LOCAL)
        assert receiver.bodies[-1]["title"] == "Title" and receiver.bodies[-1]["type"] == "warning"
        receiver.status = 500
        with pytest.raises(ChatSendError) as failed:
            chat.send(receiver.url, "Title", "Body", "info", LOCAL)
        assert not failed.value.permanent and "500" in str(failed.value)
    with pytest.raises(ChatSendError) as down:
        chat.send(receiver.url, "Title", "Body", "info", LOCAL)
    assert not down.value.permanent


def test_a_process_forked_after_its_parent_posted_posts_too() -> None:
    # apprise keeps its thread pools per process: a child must not inherit its parent's, whose threads it lacks.
    quick = ChatPolicy(loopback=True, timeout=3)
    with chat_receiver() as receiver:
        chat.send(receiver.url, "Parent", "Body", "info", quick)
        child = os.fork()
        if child == 0:
            try:
                chat.send(receiver.url, "Child", "Body", "info", quick)
            except BaseException:
                os._exit(1)
            os._exit(0)
        deadline = time.monotonic() + 30
        while (waited := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if waited[0] == 0:
            os.kill(child, 9)
            os.waitpid(child, 0)
        assert waited[0] == child and os.waitstatus_to_exitcode(waited[1]) == 0
        assert [body["title"] for body in receiver.bodies] == ["Parent", "Child"]


def test_a_chat_on_this_network_is_never_posted_to_under_the_default_policy() -> None:
    with chat_receiver() as receiver:
        with pytest.raises(ChatSendError) as refused:
            chat.send(receiver.url, "Title", "Body", "info", STRICT)
        assert refused.value.permanent
        assert receiver.bodies == []
