"""A game's chat, through apprise: reading a chat address, masking it, and sending one notice to it.

A host may give their game a chat address: an apprise URL (``discord://webhook_id/token``,
``slack://…``, ``matrixs://…``, ``tgram://bot_token/chat_id``, ``jsons://host/path``; apprise also reads
a Discord or Slack webhook's own ``https://`` address). It is a **secret**: whoever has it can post in
that chat. So it is checked when it is given (:func:`check_chat_url`, a 4xx naming the field when apprise
cannot read it), stored as given, shown back only masked (:func:`mask`), and never put in anything a
player receives.

Two guards, from the configuration (``CHAT_SCHEMES``, ``CHAT_PRIVATE_HOSTS``; the README's table):

- only the chat services of ``CHAT_SCHEMES`` are accepted (apprise also knows local desktop
  notifications, syslog, mail…, which a game has no business with);
- the worker sends notices to addresses that anyone creating a game chooses, so it must not be a way into
  the service's own network (ARCHITECTURE §9). A literal address (or ``localhost``) that is refused is refused
  when given; and every send runs under :mod:`service.infra.chat_network`: the name is resolved once,
  the addresses it gives are checked and are the ones connected to, and no redirect is followed. Loopback,
  link-local (cloud metadata), multicast, unspecified and reserved addresses are always refused; private
  networks unless ``CHAT_PRIVATE_HOSTS`` is set (a self-hosted chat on the same network). The tests' own
  chat on ``127.0.0.1`` is reached only with ``CHAT_LOOPBACK_FOR_TESTS``, which production refuses to
  start with.

When a notice fails the host is told a short class of failure ("the chat service answered 500",
"redirect refused", "address not allowed", "could not be reached"), never the far side's text.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flask import current_app, has_app_context

from service.infra import chat_network

if TYPE_CHECKING:
    import apprise

#: The chat services accepted by default (``CHAT_SCHEMES``): apprise's schemes of chat apps and of
#: plain JSON webhooks.
DEFAULT_SCHEMES = (
    "discord",
    "slack",
    "matrix",
    "matrixs",
    "tgram",
    "mmost",
    "mmosts",
    "rocket",
    "rockets",
    "zulip",
    "guilded",
    "revolt",
    "gchat",
    "webex",
    "wxteams",
    "workflow",
    "workflows",
    "signal",
    "signals",
    "ntfy",
    "ntfys",
    "gotify",
    "gotifys",
    "json",
    "jsons",
)

#: apprise's notification types (the notice's colour or icon in most chats).
NOTIFY_TYPES = ("info", "success", "warning", "failure")

MAX_LENGTH = 2000


class ChatUrlError(ValueError):
    """A chat address that cannot be used; the message says why, without repeating the address."""


class ChatSendError(Exception):
    """A notice that did not reach the chat. ``permanent``: trying again will not help."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


@dataclass(frozen=True)
class ChatPolicy:
    """What chat addresses are accepted, and how long a send may take."""

    schemes: frozenset[str] = frozenset(DEFAULT_SCHEMES)
    private_hosts: bool = False
    #: The tests' chat on 127.0.0.1 (``CHAT_LOOPBACK_FOR_TESTS``; production refuses to start with it).
    loopback: bool = False
    #: Seconds apprise may take over one notice before it gives up (a retry follows).
    timeout: float = 20.0

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ChatPolicy:
        schemes = config.get("CHAT_SCHEMES") or DEFAULT_SCHEMES
        if isinstance(schemes, str):
            schemes = [part for part in schemes.replace(",", " ").split()]
        return cls(
            schemes=frozenset(str(s).lower() for s in schemes),
            private_hosts=bool(config.get("CHAT_PRIVATE_HOSTS", False)),
            loopback=bool(config.get("CHAT_LOOPBACK_FOR_TESTS", False)),
            timeout=float(config.get("CHAT_TIMEOUT") or 20),
        )

    @classmethod
    def current(cls) -> ChatPolicy:
        """The app's policy; the strict defaults outside an app (a script on a bare session)."""
        return cls.from_config(current_app.config) if has_app_context() else cls()


def _apprise() -> Any:
    """apprise, imported when a chat address is first read or sent to: it loads its plugins (a tenth of a
    second), which the service's processes need only then."""
    import apprise

    return apprise


def _fresh_pools_in_a_forked_child() -> None:
    """apprise (2.x) posts through two thread pools kept per process (``apprise.apprise``), made at its first
    notice. A process forked after its parent had posted inherited them without their threads: every notice it
    posted waited out the timeout and failed, however often tried (``tests/infra/test_chat.py``). The child
    makes its own instead, as a process that never posted does. Celery's prefork parent posts nothing, so its
    pool processes were spared; any other process that posts and then forks was not."""
    module = sys.modules.get("apprise.apprise")
    if module is None:
        return
    for name in ("_shared_executor", "_coordinator_executor"):
        if hasattr(module, name):
            setattr(module, name, None)
        if hasattr(module, f"{name}_lock"):
            setattr(module, f"{name}_lock", threading.Lock())  # perhaps held by a thread the fork left behind


os.register_at_fork(after_in_child=_fresh_pools_in_a_forked_child)


def _asset() -> apprise.AppriseAsset:
    # Nothing on disk (apprise's persistent store would write under the worker's home), no templating of
    # the text we send (a game's name is the host's text).
    return _apprise().AppriseAsset(
        app_id="Small World by Mail",
        app_desc="Small World by Mail",
        storage_mode="memory",
        allow_templates=False,
        secure_logging=True,
    )


def _instantiate(url: str) -> Any:
    return _apprise().Apprise.instantiate(url, asset=_asset())


def _scheme(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


def check_chat_url(url: str, policy: ChatPolicy | None = None) -> str:
    """The chat address, trimmed, if apprise can read it and the policy allows it; else :class:`ChatUrlError`.

    >>> policy = ChatPolicy()
    >>> check_chat_url(" discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js ", policy)
    'discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js'
    >>> check_chat_url("discord://", policy)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    service.infra.chat.ChatUrlError: apprise cannot read this chat address (discord://…): check it ...
    >>> check_chat_url("jsons://127.0.0.1/hook", policy)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    service.infra.chat.ChatUrlError: the chat's server is on a private or local network (127.0.0.1), ...
    """
    policy = policy or ChatPolicy.current()
    url = url.strip() if isinstance(url, str) else ""
    if not url:
        raise ChatUrlError("give a chat address, or leave the field empty for no chat")
    if len(url) > MAX_LENGTH:
        raise ChatUrlError(f"a chat address is at most {MAX_LENGTH} characters")
    if any(ch.isspace() for ch in url):
        raise ChatUrlError("a chat address has no spaces")
    plugin = _instantiate(url)
    scheme = _scheme(url)
    if plugin is None:
        shown = f" ({scheme}://…)" if scheme else ""
        raise ChatUrlError(
            f"apprise cannot read this chat address{shown}: check it against apprise's documentation for that service"
        )
    allowed = {str(s).lower() for s in _schemes_of(plugin)}
    if not allowed & policy.schemes:
        raise ChatUrlError(
            f"{_service_name(plugin)} is not a chat service this site posts to; use one of: "
            + ", ".join(sorted(policy.schemes))
        )
    host = network_host(plugin)
    if host and _name_refusal(host, policy):
        raise ChatUrlError(
            f"the chat's server is on a private or local network ({host}), which this service does not post to"
        )
    return url


def mask(url: str | None) -> str | None:
    """The address as it may be shown back: the service and where it points, never its secret parts.

    >>> mask("discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js")
    'discord://4...8/J...s/'
    >>> mask("jsons://user:password@hooks.example.org:8443/t/very-secret-token?x=1")
    'jsons://hooks.example.org:8443/…'
    """
    if not url:
        return None
    plugin = _instantiate(url)
    if plugin is None:
        return f"{_scheme(url) or 'unknown'}://…"
    host = network_host(plugin)
    if host:
        # A webhook of our own choosing may keep its secret in the user, the password or the path: keep only
        # where it points.
        port = getattr(plugin, "port", None)
        rest = url.split("://", 1)[1].split("@", 1)[-1]
        tail = rest.split("/", 1)[1] if "/" in rest else ""
        return f"{_scheme(url)}://{host}{f':{port}' if port else ''}{'/…' if tail.strip('/') else ''}"
    # apprise's own privacy mode shortens every token of the services with fixed servers.
    return str(plugin.url(privacy=True)).split("?", 1)[0]


def service_name(url: str | None) -> str | None:
    """The chat service's name ("Discord", "Slack"…), safe to show to anyone; ``None`` when unreadable."""
    plugin = _instantiate(url) if url else None
    return _service_name(plugin) if plugin is not None else None


def network_host(plugin: Any) -> str | None:
    """The server the notice is sent to, for services whose address names one (JSON, Matrix, Mattermost…);
    ``None`` for those with a fixed server, whose address holds only tokens (Discord, Slack, Telegram…)."""
    templates: Iterable[str] = getattr(plugin, "templates", ()) or ()
    if any("{host}" in template for template in templates):
        host = getattr(plugin, "host", None)
        return str(host).strip("[]").lower() if host else None
    return None


def send(url: str, title: str, body: str, notify_type: str = "info", policy: ChatPolicy | None = None) -> None:
    """Post one notice; :class:`ChatSendError` when it did not arrive (``permanent`` when retrying is vain).

    The error's words are a class of failure, never what the chat's server answered: that server is the
    host's choice, and its text could be anything (an internal service's error page, ARCHITECTURE §9)."""
    policy = policy or ChatPolicy.current()
    try:
        check_chat_url(url, policy)
    except ChatUrlError as error:
        raise ChatSendError(f"the chat address is refused: {error}", permanent=True) from None
    plugin = _instantiate(url)
    plugin.redirects = False  # apprise's own switch; the guard below refuses them whatever a plugin asks
    notifier = _apprise().Apprise(asset=_asset())
    notifier.add(plugin)
    with chat_network.guarded(private_hosts=policy.private_hosts, loopback=policy.loopback) as guard:
        result = notifier.notify(
            body=body,
            title=title,
            notify_type=notify_type if notify_type in NOTIFY_TYPES else "info",
            body_format=_apprise().NotifyFormat.TEXT,
            timeout=policy.timeout,
        )
    if guard.refused:
        raise ChatSendError(f"address not allowed: {guard.refused[0]}", permanent=True)
    if guard.redirected:
        raise ChatSendError(
            "redirect refused: the chat service answered with a redirect, which this service does not follow",
            permanent=True,
        )
    if not result:
        raise ChatSendError(_failure_words(guard, plugin))


def _name_refusal(host: str, policy: ChatPolicy) -> str | None:
    """Why a server named in a chat address is refused when given (a name is checked again at each send)."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return None if policy.loopback else "a loopback address"
    if host.endswith((".local", ".internal")):
        return None if policy.private_hosts else "a private or reserved address"
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None
    return chat_network.refusal(host, private_hosts=policy.private_hosts, loopback=policy.loopback)


def _schemes_of(plugin: Any) -> list[str]:
    schemes: list[str] = []
    for attribute in ("protocol", "secure_protocol"):
        value = getattr(plugin, attribute, None)
        if isinstance(value, str):
            schemes.append(value)
        elif isinstance(value, list | tuple):
            schemes.extend(str(v) for v in value)
    return schemes


def _service_name(plugin: Any) -> str:
    return str(getattr(plugin, "service_name", None) or type(plugin).__name__.removeprefix("Notify"))


def _failure_words(guard: chat_network.Guard, plugin: Any) -> str:
    """What went wrong, as a class of failure: the HTTP status the chat answered, or that none was had."""
    failed = [status for status in guard.statuses if not 200 <= status < 300]
    if failed:
        return f"the chat service answered {failed[-1]}"
    if guard.statuses:
        return f"{_service_name(plugin)} did not accept the notice"
    return "the chat service could not be reached (no connection, or its name does not resolve)"
