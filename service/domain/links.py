"""Signed links (ARCHITECTURE §7): one salt per purpose, key rotation, readable refusals.

A link's token is ``itsdangerous.URLSafeTimedSerializer`` output. The secret key list is the configured
``SECRET_KEY`` last (used to sign) after ``OLD_SECRET_KEYS`` (still accepted for verification), so keys can
be rotated without killing links already in inboxes.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import unquote

from flask import Flask, current_app
from itsdangerous import BadSignature, TimestampSigner, URLSafeSerializer, URLSafeTimedSerializer

TURN = "turn"
INVITE = "invite"
ADMIN = "admin"
UNSUBSCRIBE = "unsubscribe"
LOGIN = "login"  # a site admin's emailed sign-in link
CONFIRM = "confirm"  # a host's link to confirm a new game (only then go the invitations)
BLOCK = "block"  # "never invite me again", in every invitation
CALENDAR = "calendar"  # a calendar feed (.ics): an address's deadlines, or one game's
SIGN_IN = "sign_in"  # an address's emailed sign-in link (My games)
WATCH = "watch"  # a game's read-only watch link, for spectators
CHOICES = "choices"  # an address's page of mail choices (every mail's footer)


@dataclass(frozen=True)
class LinkKind:
    """A kind of signed link: the one place that says what its token is for, where it goes in a URL, whether
    it must be kept secret, and whether it carries the time it was signed.

    ``paths`` are the URL rules that take its token, as the web's routes spell them up to the token
    (``<token>``; a rule that goes on after it, such as ``/games/<int:game_id>/watch/<token>/history``, is
    covered by its beginning). A ``secret`` kind's token is a credential: no access log keeps it
    (:func:`redacted_path`, used by every web server's log: ``service.web.access_log``), and a test checks
    that every route taking a token is one of these paths.
    """

    purpose: str
    paths: tuple[str, ...]
    secret: bool = True
    timed: bool = True


#: Every kind of signed link. A calendar feed's address is subscribed to once and then fetched for months,
#: so every mail gives the same one (and a mail sent again is the very same mail, ARCHITECTURE §6): it carries no
#: time. The page of mail choices is in every mail's footer: untimed too, so that a mail sent again is the
#: very same mail. Every kind is secret: each opens something of one address or one game (even a watch link,
#: which its host may end, and "never invite me again", which names the address).
KINDS = (
    LinkKind(TURN, ("/play/<token>",)),
    LinkKind(INVITE, ("/invite/<token>",)),
    LinkKind(ADMIN, ("/admin/<token>",)),
    LinkKind(UNSUBSCRIBE, ("/unsubscribe/<token>",)),
    LinkKind(LOGIN, ("/admin/login/<token>",)),
    LinkKind(CONFIRM, ("/games/confirm/<token>",)),
    LinkKind(BLOCK, ("/never/<token>",)),
    LinkKind(CALENDAR, ("/calendar/<token>",), timed=False),
    LinkKind(SIGN_IN, ("/sign-in/<token>",)),
    LinkKind(WATCH, ("/games/<int:game_id>/watch/<token>",), timed=False),
    LinkKind(CHOICES, ("/choices/<token>",), timed=False),
)
PURPOSES = tuple(kind.purpose for kind in KINDS)
#: Purposes whose tokens carry no time: the same payload always signs to the same token (:class:`LinkKind`).
UNTIMED = frozenset(kind.purpose for kind in KINDS if not kind.timed)
#: The URL rules of every secret kind, up to its token.
SECRET_PATHS = tuple(path for kind in KINDS if kind.secret for path in kind.paths)


#: What stands where a token would: the segment, up to the next ``/``, ``?``, ``#`` or space, if it has a dot
#: (itsdangerous's ``payload.signature``) or is long (a token cut short, changed, or followed by ``.ics`` is
#: hidden all the same); a short word without a dot is a page's name (``/admin/games``), left as it is.
_TOKEN = r"[^/?#\s]*\.[^/?#\s]*|[^/?#\s]{16,}"


def _path_pattern(rule: str, group: str) -> str:
    """A regular expression of ``rule`` (``/games/<int:game_id>/watch/<token>``) whose group ``group`` is the
    token (:data:`_TOKEN`)."""
    parts = []
    for literal in re.findall(r"[^<]+|<[^>]*>", rule):
        if literal == "<token>":
            parts.append(f"(?P<{group}>{_TOKEN})")
        elif literal.startswith("<"):
            parts.append(r"[^/?#\s]+")
        else:
            parts.append(re.escape(literal))
    return "".join(parts) + r"(?=$|[/?#\s])"


#: Any secret kind's path at the start of a path; the longest rules first (``/admin/login/…`` before ``/admin/…``).
_SECRET_PATH = re.compile(
    "^(?:"
    + "|".join(
        f"(?:{_path_pattern(rule, f'token{number}')})"
        for number, rule in enumerate(sorted(SECRET_PATHS, key=len, reverse=True))
    )
    + ")"
)
#: What stands in a log for a secret token.
HIDDEN = "…"


def redacted_path(path: str) -> str:
    """``path`` (with its query, if any) with the token of a secret link kind replaced by ``…``.

    The path is read as the web reads it, its %-escapes decoded: ``/pl%61y/<token>`` is a turn link too.

    >>> redacted_path("/play/eyJnIjoxfQ.abc.d-_f?x=1")
    '/play/…?x=1'
    >>> redacted_path("/games/3/watch/eyJnIjozfQ.sig/history"), redacted_path("/calendar/eyJwIjoxfQ.s.ics")
    ('/games/3/watch/…/history', '/calendar/…')
    >>> redacted_path("/admin/login/eyJ.x.y"), redacted_path("/pl%61y/eyJ.x.y")
    ('/admin/login/…', '/play/…')
    >>> redacted_path("/api/games/3"), redacted_path("/admin/games/3")
    ('/api/games/3', '/admin/games/3')
    """
    for candidate in (path, unquote(path)):
        found = _SECRET_PATH.match(candidate)
        if found is not None:
            token = next(name for name, value in found.groupdict().items() if value is not None)
            start, end = found.span(token)
            return candidate[:start] + HIDDEN + candidate[end:]
    return path


#: What an expired link's refusal says.
EXPIRED = "This link has expired. Ask the game's host for a new one."
#: How many checked tokens a process keeps (:meth:`Signer.verify`): a few hundred bytes each.
VERIFIED_KEPT = 4096

#: How long an invitation link stays good (seconds).
INVITE_MAX_AGE = 60 * 60 * 24 * 60


class LinkError(Exception):
    """A link that cannot be honoured; ``str()`` is safe to show (it never holds game data)."""


@dataclass(frozen=True)
class Signer:
    keys: Sequence[str | bytes]

    def _serializer(self, purpose: str, at: datetime | None = None) -> URLSafeTimedSerializer | URLSafeSerializer:
        """The serializer of ``purpose``; one signing with the time ``at`` is made for the call, the others
        once per purpose (every request with a link verifies one; they hold only the keys and the salt)."""
        if at is not None and purpose not in UNTIMED:
            return self._new_serializer(purpose, at)
        serializer = self._serializers.get(purpose)
        if serializer is None:
            serializer = self._serializers[purpose] = self._new_serializer(purpose)
        return serializer

    @functools.cached_property
    def _serializers(self) -> dict[str, URLSafeTimedSerializer | URLSafeSerializer]:
        return {}

    def _new_serializer(self, purpose: str, at: datetime | None = None) -> URLSafeTimedSerializer | URLSafeSerializer:
        if purpose not in PURPOSES:
            raise ValueError(f"unknown link purpose {purpose!r}")
        # itsdangerous signs with the last key and verifies with any of them (key rotation). It takes a list of
        # one kind, str or bytes: keys given as text are encoded as itsdangerous would (UTF-8).
        keys = [key.encode() if isinstance(key, str) else key for key in self.keys]
        if purpose in UNTIMED:
            return URLSafeSerializer(keys, salt=f"smallworld.{purpose}")
        if at is not None:
            return URLSafeTimedSerializer(
                keys, salt=f"smallworld.{purpose}", signer=_SignedAt, signer_kwargs={"at": int(at.timestamp())}
            )
        return URLSafeTimedSerializer(keys, salt=f"smallworld.{purpose}")

    def sign(self, purpose: str, payload: dict[str, Any], at: datetime | None = None) -> str:
        """The token of ``payload``; ``at``: the time to sign it with instead of now (a link given again in a
        document that must read the same each time, such as a calendar feed; never a time to come)."""
        return str(self._serializer(purpose, at).dumps(payload))

    def verify(self, purpose: str, token: str, max_age: int | None = None) -> dict[str, Any]:
        """The payload, or :class:`LinkError` saying plainly what is wrong with the link.

        A token whose signature this signer checked is kept by the process with its payload and the time it
        was signed (:data:`VERIFIED_KEPT` of them, the latest used): the same token signs the same way with
        the same keys, and a player's every request carries theirs (the rate limit's key and the request
        each read it). ``max_age`` is checked at every call, as itsdangerous checks it; what the link gives
        access to (the seat's secret, its removal, the game's end) is the caller's to check against the
        database each time.
        """
        if not isinstance(token, str) or not token or len(token) > 2000:
            raise LinkError("This link is not valid.")
        payload, signed_at = self._checked(purpose, token)
        if max_age is not None and signed_at is not None:
            # itsdangerous's own test (``TimestampSigner.unsign``): older than max_age, or signed in the future.
            age = int(time.time()) - signed_at
            if age > max_age or age < 0:
                raise LinkError(EXPIRED)
        if not isinstance(payload, dict):
            raise LinkError("This link is not valid.")
        return dict(payload)

    @functools.cached_property
    def _checked(self) -> Callable[[str, str], tuple[Any, int | None]]:
        """:meth:`_checked_signature` with its answers kept (:data:`VERIFIED_KEPT` of them, the latest used;
        a refusal is not kept: it raises)."""
        return functools.lru_cache(maxsize=VERIFIED_KEPT)(self._checked_signature)

    def _checked_signature(self, purpose: str, token: str) -> tuple[Any, int | None]:
        """The token's payload and, for a timed purpose, when it was signed (seconds since the epoch), its
        signature checked with any of the keys; :class:`LinkError` if it fails."""
        serializer = self._serializer(purpose)
        try:
            if isinstance(serializer, URLSafeTimedSerializer):
                payload, signed = serializer.loads(token, return_timestamp=True)
                return payload, int(signed.timestamp())
            return serializer.loads(token), None
        except BadSignature:
            raise LinkError("This link is not valid: it may have been cut short or changed.") from None


class _SignedAt(TimestampSigner):
    """itsdangerous's timed signer, signing with a given time (seconds since the epoch) instead of now."""

    def __init__(self, *args: Any, at: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.at = at

    def get_timestamp(self) -> int:
        return self.at


def signer_for(secret_key: str | bytes, old_keys: Sequence[str | bytes] = ()) -> Signer:
    return Signer(keys=[*old_keys, secret_key])


def with_serial(payload: dict[str, Any], serial: int) -> dict[str, Any]:
    """``payload`` with the address's ``links_serial`` (``Player.links_serial``) under ``n``, left out while it is
    0: the links of an address that never signed out everywhere read as they did before the serial existed.

    "Sign out everywhere" moves the serial on (``service.domain.sign_in.sign_out_everywhere``): every link of
    the address made before (turn, invitation, sign-in, choices, calendar) then names an older serial and is
    refused (:func:`serial_of`), while the links made after it (the next turn mail's) carry the new one.

    >>> with_serial({"p": 7}, 0), with_serial({"p": 7}, 2)
    ({'p': 7}, {'p': 7, 'n': 2})
    """
    return {**payload, "n": serial} if serial else payload


def serial_of(payload: dict[str, Any]) -> int | None:
    """The ``links_serial`` a link's payload names (0 if none: a link made before it existed or while it was 0),
    or ``None`` if what it names is not a serial."""
    serial = payload.get("n", 0)
    return serial if isinstance(serial, int) and not isinstance(serial, bool) and serial >= 0 else None


#: What a link made before its address signed out everywhere gets.
SIGNED_OUT = (
    "This link no longer works: its address signed out everywhere since it was made. Your next game mail has a "
    "new one, and signing in again (a sign-in link comes by mail) shows all your games."
)


#: Turn and admin links keep working this long after the game ends (to see the final table and history).
DAYS_AFTER_END = 30


@dataclass(frozen=True)
class LinkMaker:
    """Absolute signed links for mails and pages (ARCHITECTURE §6: links are absolute, from the base URL)."""

    signer: Signer
    base_url: str

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path

    def turn_token(self, game_id: int, seat: int, secret: str, *, serial: int, at: datetime | None = None) -> str:
        """A seat's turn token; ``serial``: its player's ``links_serial`` now (:func:`with_serial`)."""
        return self.signer.sign(TURN, with_serial({"g": game_id, "s": seat, "k": secret}, serial), at)

    def invite_token(self, game_id: int, seat: int, secret: str, *, serial: int) -> str:
        return self.signer.sign(INVITE, with_serial({"g": game_id, "s": seat, "k": secret}, serial))

    def admin_token(self, game_id: int, secret: str) -> str:
        return self.signer.sign(ADMIN, {"g": game_id, "k": secret})

    def unsubscribe_token(self, player_id: int, kind: str | None = None) -> str:
        """The token that turns off ``kind`` of mail (``"reminders"`` or ``"notices"``; ``None``: both)."""
        payload: dict[str, Any] = {"p": player_id}
        if kind is not None:
            payload["w"] = kind
        return self.signer.sign(UNSUBSCRIBE, payload)

    def turn_url(self, game_id: int, seat: int, secret: str, *, serial: int, at: datetime | None = None) -> str:
        """The seat's turn link; ``serial``: its player's ``links_serial``; ``at``: the time to sign it with
        (see :meth:`Signer.sign`)."""
        return self.url(f"/play/{self.turn_token(game_id, seat, secret, serial=serial, at=at)}")

    def invite_url(self, game_id: int, seat: int, secret: str, *, serial: int) -> str:
        return self.url(f"/invite/{self.invite_token(game_id, seat, secret, serial=serial)}")

    def admin_url(self, game_id: int, secret: str) -> str:
        return self.url(f"/admin/{self.admin_token(game_id, secret)}")

    def login_url(self, admin_id: int, secret: str, serial: int) -> str:
        """A site admin's sign-in link: good once (``serial``: ``SiteAdmin.sign_in_serial`` when it was made)."""
        return self.url(f"/admin/login/{self.signer.sign(LOGIN, {'a': admin_id, 'k': secret, 'n': serial})}")

    def confirm_token(self, game_id: int, admin_secret: str, time_zone: str | None = None) -> str:
        """The host's token to confirm a new game; ``time_zone``: the one the host gave when creating it."""
        payload: dict[str, Any] = {"g": game_id, "k": admin_secret}
        if time_zone:
            payload["z"] = time_zone
        return self.signer.sign(CONFIRM, payload)

    def confirm_url(self, game_id: int, admin_secret: str, time_zone: str | None = None) -> str:
        return self.url(f"/games/confirm/{self.confirm_token(game_id, admin_secret, time_zone)}")

    def block_url(self, email: str) -> str:
        """The "never invite me again" link of ``email`` (it names the address, nothing else)."""
        return self.url(f"/never/{self.signer.sign(BLOCK, {'e': email.lower()})}")

    def unsubscribe_url(self, player_id: int, kind: str | None = None) -> str:
        """The absolute link that turns off ``kind`` of mail for the player (see :meth:`unsubscribe_token`)."""
        return self.url(f"/unsubscribe/{self.unsubscribe_token(player_id, kind)}")

    def choices_url(self, player_id: int, *, serial: int) -> str:
        """The page where an address chooses which mails it gets (every mail's footer): it names the address
        (a player row) and nothing else, and needs no sign-in; ``serial``: the player's ``links_serial``."""
        return self.url(f"/choices/{self.signer.sign(CHOICES, with_serial({'p': player_id}, serial))}")

    def address_calendar_url(self, player_id: int, *, serial: int, calendar_serial: int) -> str:
        """The calendar feed of every deadline in every game of an address (a player row)
        (``service.domain.calendar``); ``serial`` and ``calendar_serial``: the player's ``links_serial`` and
        ``calendar_serial`` (moving either on ends the link)."""
        payload = with_serial({"p": player_id}, serial)
        if calendar_serial:
            payload["c"] = calendar_serial
        return self.url(f"/calendar/{self.signer.sign(CALENDAR, payload)}.ics")

    def game_calendar_url(self, game_id: int) -> str:
        """The calendar feed of one game's deadlines: public information only (whose turn, until when)."""
        return self.url(f"/calendar/{self.signer.sign(CALENDAR, {'g': game_id})}.ics")

    def sign_in_url(self, sign_in_id: int, secret: str, *, serial: int) -> str:
        """An address's sign-in link (``service.domain.sign_in``): good once, for ``SIGN_IN_MAX_AGE``, and until
        the address signs out everywhere (``serial``: its ``links_serial``)."""
        return self.url(f"/sign-in/{self.signer.sign(SIGN_IN, with_serial({'i': sign_in_id, 'k': secret}, serial))}")

    def watch_token(self, game_id: int, serial: int) -> str:
        return self.signer.sign(WATCH, {"g": game_id, "n": serial})

    def watch_url(self, game_id: int, serial: int) -> str:
        """A game's read-only watch link; ``serial`` is the game's ``watch_serial`` (moving it on ends the link).
        It is the same link every time it is made (no time in it), so it can be shared and shown again."""
        return self.url(f"/games/{game_id}/watch/{self.watch_token(game_id, serial)}")


#: An address's sign-in link is good for this long (seconds), and once.
SIGN_IN_MAX_AGE = 30 * 60


@dataclass(frozen=True)
class ReplyToken:
    """What a reply address names (:meth:`ReplyAddresses.read`): a seat of a game and the step its mail was
    about (``Game.step_key``), or ``None`` for a reply to a table-talk message."""

    game_id: int
    seat: int
    step_key: str | None
    #: The signature, checked against the seat's secret by :meth:`ReplyAddresses.verify`.
    mac: str


#: The part after the ``+`` of a reply address: ``<game>-<seat>-<turn>-<current>-<defender or x>-<mac>``
#: for a step, ``talk-<game>-<seat>-<mac>`` for table talk. Digits and lower-case letters only: some mail
#: systems change the case of a local part.
_STEP_TOKEN = re.compile(r"(\d{1,12})-(\d{1,2})-(\d{1,4})-(\d{1,2})-(\d{1,2}|x)-([0-9a-f]{20})")
_TALK_TOKEN = re.compile(r"talk-(\d{1,12})-(\d{1,2})-([0-9a-f]{20})")


@dataclass(frozen=True)
class ReplyAddresses:
    """Signed reply addresses (ARCHITECTURE §10): the ``Reply-To`` of every mail that asks for orders names the
    seat and the step, signed with the seat's secret (replacing the player rotates it), so a reply is
    matched by its address, never by its ``From``. Plus-addressing on ``domain``: ``play+<token>@domain``.

    An HMAC (SHA-256, 80 bits, lower-case hex) keeps the address short: a local part holds at most 64
    characters (RFC 5321 §4.5.3.1.1), which an itsdangerous token would not fit. Signed with the newest
    key; every key of the rotation list verifies. The seat's player's ``links_serial`` is signed with the
    secret (only once it moved: the addresses of an address that never signed out everywhere read as before),
    so "sign out everywhere" ends the reply addresses of the mails already sent as it ends their links.
    """

    signer: Signer
    domain: str
    local_part: str = "play"

    def for_step(self, game_id: int, seat: int, secret: str, step_key: str, *, serial: int) -> str:
        turn, current, defender = step_key.split(":")
        body = f"{game_id}-{seat}-{turn}-{current}-{'x' if defender == '-' else defender}"
        message = f"step:{game_id}:{seat}:{step_key}"
        return self._address(body, self._mac(self.signer.keys[-1], message, _keyed(secret, serial)))

    def for_talk(self, game_id: int, seat: int, secret: str, *, serial: int) -> str:
        body = f"talk-{game_id}-{seat}"
        return self._address(body, self._mac(self.signer.keys[-1], f"talk:{game_id}:{seat}", _keyed(secret, serial)))

    def read(self, address: str) -> ReplyToken | None:
        """The token of ``address`` if it is one of our reply addresses (any local part before the ``+``;
        the domain is compared without case), else None. The signature is not checked yet."""
        local, _, domain = address.strip().strip("<>").rpartition("@")
        if domain.lower() != self.domain.lower() or "+" not in local:
            return None
        tag = local.split("+", 1)[1].lower()
        found = _STEP_TOKEN.fullmatch(tag)
        if found:
            game, seat, turn, current, defender, mac = found.groups()
            step = f"{int(turn)}:{int(current)}:{'-' if defender == 'x' else int(defender)}"
            return ReplyToken(int(game), int(seat), step, mac)
        found = _TALK_TOKEN.fullmatch(tag)
        if found:
            game, seat, mac = found.groups()
            return ReplyToken(int(game), int(seat), None, mac)
        return None

    def verify(self, token: ReplyToken, secret: str, *, serial: int) -> bool:
        """Whether ``token`` was signed for its seat while it had ``secret`` and its player ``serial`` (their
        ``links_serial``), with any key of the rotation."""
        if token.step_key is None:
            message = f"talk:{token.game_id}:{token.seat}"
        else:
            message = f"step:{token.game_id}:{token.seat}:{token.step_key}"
        keyed = _keyed(secret, serial)
        return any(hmac.compare_digest(self._mac(key, message, keyed), token.mac) for key in self.signer.keys)

    def _address(self, body: str, mac: str) -> str:
        return f"{self.local_part}+{body}-{mac}@{self.domain}"

    @staticmethod
    def _mac(key: str | bytes, message: str, secret: str) -> str:
        raw = key.encode() if isinstance(key, str) else key
        return hmac.new(raw, f"smallworld.reply:{message}:{secret}".encode(), hashlib.sha256).hexdigest()[:20]


def _keyed(secret: str, serial: int) -> str:
    """A seat's secret with its player's ``links_serial`` (:func:`with_serial`: nothing added while it is 0)."""
    return f"{secret}:n{serial}" if serial else secret


#: A site admin's sign-in link is good for this long (seconds), and once.
LOGIN_MAX_AGE = 15 * 60


#: Where the app keeps its :class:`LinkMaker` and its :class:`ReplyAddresses` (``app.extensions``).
EXTENSION = "smallworld.links"
REPLY_EXTENSION = "smallworld.reply_addresses"


def init_app(app: Flask) -> None:
    """Make the app's link maker: signs with ``SECRET_KEY`` (older keys still verify), links on ``BASE_URL``."""
    app.extensions[EXTENSION] = LinkMaker(
        signer_for(app.config["SECRET_KEY"], app.config["OLD_SECRET_KEYS"]), app.config["BASE_URL"]
    )
    app.extensions[REPLY_EXTENSION] = ReplyAddresses(
        signer_for(app.config["SECRET_KEY"], app.config["OLD_SECRET_KEYS"]), app.config["INBOUND_DOMAIN"]
    )


def current_reply_addresses() -> ReplyAddresses:
    """The reply addresses of the app in context (orders by mail, ``service.domain.inbound``)."""
    found: ReplyAddresses = current_app.extensions[REPLY_EXTENSION]
    return found


def current_links() -> LinkMaker:
    """The link maker of the app in context: the one way every page, API call, task and command gets it."""
    links: LinkMaker = current_app.extensions[EXTENSION]
    return links
