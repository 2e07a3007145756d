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
- the worker sends notices to addresses that anyone creating a game chooses, so an address whose server
  is on a loopback, private, link-local or reserved network is refused unless ``CHAT_PRIVATE_HOSTS`` is
  set (a self-hosted chat on the same network): otherwise a host could make the worker probe the
  service's own network. A literal address (or ``localhost``) is refused when given; a name is resolved
  and checked again before each send.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flask import current_app, has_app_context

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
    if host and not policy.private_hosts and _is_private_name(host):
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
    """Post one notice; :class:`ChatSendError` when it did not arrive (``permanent`` when retrying is vain)."""
    policy = policy or ChatPolicy.current()
    try:
        check_chat_url(url, policy)
    except ChatUrlError as error:
        raise ChatSendError(f"the chat address is refused: {error}", permanent=True) from None
    plugin = _instantiate(url)
    host = network_host(plugin)
    if host and not policy.private_hosts:
        _check_resolves_publicly(host)
    notifier = _apprise().Apprise(asset=_asset())
    notifier.add(plugin)
    result = notifier.notify(
        body=body,
        title=title,
        notify_type=notify_type if notify_type in NOTIFY_TYPES else "info",
        body_format=_apprise().NotifyFormat.TEXT,
        timeout=policy.timeout,
    )
    if not result:
        raise ChatSendError(_failure_words(result, plugin))


def _check_resolves_publicly(host: str) -> None:
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as error:
        raise ChatSendError(f"the chat's server name {host} does not resolve: {error}") from None
    for info in infos:
        address = str(info[4][0]).split("%", 1)[0]
        if _is_private_address(address):
            raise ChatSendError(
                f"the chat's server {host} is on a private or local network ({address}), which this service "
                "does not post to",
                permanent=True,
            )


def _is_private_name(host: str) -> bool:
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return True
    return _is_private_address(host)


def _is_private_address(text: str) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast


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


def _failure_words(result: Any, plugin: Any) -> str:
    """What apprise said went wrong (its warnings and errors), without the address."""
    words: list[str] = []
    try:
        for entry in result.logs():
            if entry.level in ("WARNING", "ERROR", "CRITICAL") and entry.message not in words:
                words.append(str(entry.message))
    except Exception:  # an older apprise without result logs: say what we know
        words = []
    status = getattr(getattr(result, "status", None), "name", None)
    text = "; ".join(words) or f"{_service_name(plugin)} did not accept the notice"
    return f"{text} ({status.lower()})" if status and status not in ("FAILURE",) else text
