"""Rate limits on signed-link verification and on action submission (DESIGN §7), with Flask-Limiter.

Three limits, each a setting (``service.infra.config``; the README's table):

- ``RATELIMIT_LINKS``: requests that carry a signed link, per client address: a link opened in the
  browser (any route with a ``<token>`` in its path) or an API call with a bearer token.
- ``RATELIMIT_BAD_LINKS``: such requests that were refused (403: tampered, expired, revoked, another
  game's…), per client address. Only refusals count, so players are never slowed down by it; someone
  trying tokens is stopped after a few.
- ``RATELIMIT_ACTIONS``: steps submitted (actions and undos), per seat: a runaway script cannot flood a
  game's log or the other players' inboxes.

What strangers could use to mail strangers (DESIGN §9) is limited too:

- ``RATELIMIT_NEW_GAMES``: games created (the lobby's form and ``POST /api/games`` together), per client
  address. Only games actually created count; a refused form does not.
- ``RATELIMIT_GAMES_PER_HOST``: games created naming one host address, whoever creates them.
- ``RATELIMIT_INVITATIONS_PER_ADDRESS``: invitations mailed to one address (at a host's confirmation, or
  when a host gives a seat to it), whoever sends them. A game that would go over is refused when created,
  naming the address; the count is taken when the invitations go.
- ``RATELIMIT_ADMIN_ACTS``: admin acts on one game (the admin API's and the admin page's), each of which
  mails every player.
- ``RATELIMIT_SIGN_IN`` (per client address) and ``RATELIMIT_SIGN_IN_PER_ADDRESS`` (per address asked for):
  players' sign-in links and "mail me my links" (``service.web.pages.me``). Over the second, the page answers
  as ever and nothing is mailed, so the answer never tells whether an address plays here.

The last three are counted here by hand (:class:`MailQuotas`) in the same storage, since what they count is
inside the request (its body) or happens later (a confirmation).

Counters live in ``RATELIMIT_STORAGE_URI``: ``memory://`` by default (each web process counts alone, which
suits the embedded mode), ``redis://…`` at scale so every web process shares them. If that storage stops
answering, the limits fall back to per-process memory and the site keeps serving. Over a limit, the answer
is 429 with ``Retry-After``: JSON ``{"error": …}`` under ``/api``, a short page elsewhere. Every other
``RATELIMIT_*`` option of Flask-Limiter (``RATELIMIT_STRATEGY``…) can be set the same way.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterable
from typing import Any

from flask import Flask, Response, current_app, jsonify, render_template_string, request, session
from flask_limiter import Limit, Limiter, RateLimitExceeded
from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage
from limits.strategies import FixedWindowRateLimiter, RateLimiter

from service.domain.errors import TooMany
from service.domain.links import TURN, LinkError, LinkMaker, current_links

logger = logging.getLogger(__name__)

#: Endpoints that submit a step of a turn. Pages that submit steps add theirs here.
ACTION_ENDPOINTS = {"api.submit_action", "api.undo", "turn.act", "turn.undo"}
#: Endpoints that create a game (their POST).
NEW_GAME_ENDPOINTS = {"api.create_game", "lobby.new_game"}
#: Blueprints whose POSTs are admin acts on the game named in the path.
ADMIN_ACT_BLUEPRINTS = {"admin_api", "admin_game"}

LIMITED = """<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Too many requests · Small World by Mail</title>
<main>
<h1>Too many requests</h1>
<p>{{ message }}</p>
</main></html>"""


def init_app(app: Flask) -> None:
    """Attach a limiter of its own to ``app`` (so two apps in one process never share memory counters)."""
    config = app.config
    limiter = Limiter(
        client_address,
        default_limits=[
            Limit(
                lambda: current_app.config["RATELIMIT_LINKS"],
                key_function=client_address,
                scope="links",
                shared=True,
                exempt_when=lambda: not carries_link(),
                error_message="Too many links opened from your address",
            ),
            Limit(
                lambda: current_app.config["RATELIMIT_BAD_LINKS"],
                key_function=client_address,
                scope="bad-links",
                shared=True,
                exempt_when=lambda: not carries_link(),
                deduct_when=lambda response: response.status_code == 403,
                error_message="Too many invalid or expired links tried from your address",
            ),
            Limit(
                lambda: current_app.config["RATELIMIT_ACTIONS"],
                key_function=acting_seat,
                scope="actions",
                shared=True,
                exempt_when=lambda: request.endpoint not in ACTION_ENDPOINTS,
                error_message="Too many steps submitted for this seat",
            ),
            Limit(
                lambda: current_app.config["RATELIMIT_NEW_GAMES"],
                key_function=client_address,
                scope="new-games",
                shared=True,
                exempt_when=lambda: request.method != "POST" or request.endpoint not in NEW_GAME_ENDPOINTS,
                deduct_when=lambda response: response.status_code in (201, 303),
                error_message="Too many games created from your address",
            ),
            Limit(
                lambda: current_app.config["RATELIMIT_ADMIN_ACTS"],
                key_function=managed_game,
                scope="admin-acts",
                shared=True,
                exempt_when=lambda: request.method != "POST" or request.blueprint not in ADMIN_ACT_BLUEPRINTS,
                error_message="Too many admin acts on this game (each one mails every player)",
            ),
        ],
        storage_uri=config["RATELIMIT_STORAGE_URI"],
        # A storage outage (Redis restarting) must not take the site down: count in memory meanwhile.
        in_memory_fallback_enabled=True,
        swallow_errors=True,
        key_prefix="smallworld",
    )
    limiter.init_app(app)
    app.extensions["smallworld.limiter"] = limiter
    app.extensions[QUOTAS] = MailQuotas(limiter)
    app.register_error_handler(RateLimitExceeded, too_many_requests)


def managed_game() -> str:
    """The game an admin act is on (its path's ``game_id``), else the client's address."""
    game_id = (request.view_args or {}).get("game_id")
    return f"game:{game_id}" if isinstance(game_id, int) else f"address:{client_address()}"


def client_address() -> str:
    """The client's address (behind reverse proxies, the one they report: ``PROXY_COUNT``)."""
    return request.remote_addr or "unknown"


def carries_link() -> bool:
    """Whether this request presents a signed link: in its path, or as the API's bearer token."""
    if request.view_args and "token" in request.view_args:
        return True
    return request.headers.get("Authorization", "").lower().startswith("bearer ")


def acting_seat() -> str:
    """Whose steps these are: the seat named by the bearer token or the session, else the address.

    Only the signature is checked here (no database); a token that fails it counts against its address.
    """
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        links: LinkMaker = current_links()
        try:
            payload = links.signer.verify(TURN, token.strip())
        except LinkError:
            return f"address:{client_address()}"
        return f"seat:{payload.get('g')}:{payload.get('s')}"
    mine = session.get("seat") if session else None
    if isinstance(mine, dict) and "game" in mine and "seat" in mine:
        return f"seat:{mine['game']}:{mine['seat']}"
    return f"address:{client_address()}"


def too_many_requests(error: RateLimitExceeded) -> Any:
    limiter: Limiter = current_app.extensions["smallworld.limiter"]
    current = limiter.current_limit
    retry_after = 60
    if current is not None:
        try:
            retry_after = max(1, math.ceil(current.window[0] - time.time()))
        except Exception:  # the counters' storage went away meanwhile: a minute is a fair guess
            retry_after = 60
    message = (
        f"{error.description} (at most {error.limit.limit}). "
        f"Try again in {retry_after} second{'s' if retry_after != 1 else ''}."
    )
    if request.path.startswith("/api/"):
        response: Response = jsonify({"error": message})
    else:
        response = Response(render_template_string(LIMITED, message=message), mimetype="text/html")
    response.status_code = 429
    response.headers["Retry-After"] = str(retry_after)
    return response


#: Where the app keeps its :class:`MailQuotas` (``app.extensions``).
QUOTAS = "smallworld.mail_quotas"


class MailQuotas:
    """Counts, in the rate limiter's storage, what one address receives: games naming it as host, and
    invitations to it (``RATELIMIT_GAMES_PER_HOST``, ``RATELIMIT_INVITATIONS_PER_ADDRESS``).

    Nothing is counted while rate limiting is off (``RATELIMIT_ENABLED``). If the storage stops answering,
    this process counts in memory meanwhile, as the other limits do.
    """

    def __init__(self, limiter: Limiter) -> None:
        self._limiter = limiter
        self._fallback: RateLimiter = FixedWindowRateLimiter(MemoryStorage())

    def _strategy(self) -> RateLimiter:
        return self._limiter.limiter

    def _run(self, method: str, item: RateLimitItem, key: tuple[str, ...]) -> bool:
        try:
            return bool(getattr(self._strategy(), method)(item, *key))
        except Exception as error:  # the storage went away: count here meanwhile
            logger.warning("rate limit storage unreachable for %s: %r", key[1], error)
            return bool(getattr(self._fallback, method)(item, *key))

    def _reset_in(self, item: RateLimitItem, key: tuple[str, ...]) -> int:
        try:
            reset_at = self._strategy().get_window_stats(item, *key).reset_time
        except Exception:
            return 3600
        return max(1, math.ceil(reset_at - time.time()))

    @staticmethod
    def _key(kind: str, email: str) -> tuple[str, ...]:
        return ("smallworld", "quota", kind, email.lower())

    def _over(self, setting: str, kind: str, emails: Iterable[str]) -> list[tuple[str, int]]:
        """The addresses (and seconds until their limit lifts) one more would put over ``setting``."""
        items = parse_many(current_app.config[setting])
        over = []
        for email in emails:
            key = self._key(kind, email)
            blocked = [item for item in items if not self._run("test", item, key)]
            if blocked:
                over.append((email, max(self._reset_in(item, key) for item in blocked)))
        return over

    def _hit(self, setting: str, kind: str, emails: Iterable[str]) -> None:
        for email in emails:
            for item in parse_many(current_app.config[setting]):
                self._run("hit", item, self._key(kind, email))

    @property
    def enabled(self) -> bool:
        return bool(current_app.config.get("RATELIMIT_ENABLED", True))

    def check_new_game(self, host: str, invitees: list[str]) -> None:
        """:class:`TooMany` if a game naming ``host`` and inviting ``invitees`` would go over a limit."""
        if not self.enabled:
            return
        if over := self._over("RATELIMIT_GAMES_PER_HOST", "host", [host]):
            _, wait = over[0]
            raise TooMany(
                f"{host} is named as the host of too many new games "
                f"(at most {current_app.config['RATELIMIT_GAMES_PER_HOST']}). Try again {_later(wait)}.",
                retry_after=wait,
            )
        self.check_invitations(invitees)

    def take_sign_in_mail(self, email: str) -> bool:
        """Count one sign-in mail (or "mail me my links") asked for ``email``; ``False`` if the address had as
        many as ``RATELIMIT_SIGN_IN_PER_ADDRESS`` allows (then nothing is counted, and nothing may be mailed).
        Every address asked for is counted, known or not, so the limit tells nobody which addresses play."""
        if not self.enabled:
            return True
        if self._over("RATELIMIT_SIGN_IN_PER_ADDRESS", "sign-in", [email]):
            return False
        self._hit("RATELIMIT_SIGN_IN_PER_ADDRESS", "sign-in", [email])
        return True

    def count_new_game(self, host: str) -> None:
        if self.enabled:
            self._hit("RATELIMIT_GAMES_PER_HOST", "host", [host])

    def check_invitations(self, invitees: list[str]) -> None:
        """:class:`TooMany` naming the addresses that have had as many invitations as they may."""
        if not self.enabled:
            return
        if over := self._over("RATELIMIT_INVITATIONS_PER_ADDRESS", "invitee", invitees):
            names = ", ".join(email for email, _ in over)
            wait = max(seconds for _, seconds in over)
            raise TooMany(
                f"{names} {'has' if len(over) == 1 else 'have'} been invited to too many games lately "
                f"(at most {current_app.config['RATELIMIT_INVITATIONS_PER_ADDRESS']}). Try again {_later(wait)}, "
                "or invite someone else.",
                retry_after=wait,
            )

    def count_invitations(self, invitees: list[str]) -> None:
        """Check, then count, the invitations about to be mailed to ``invitees``."""
        if not self.enabled:
            return
        self.check_invitations(invitees)
        self.note_invitations(invitees)

    def note_invitations(self, invitees: list[str]) -> None:
        """Count invitations mailed (checked before with :meth:`check_invitations`)."""
        if self.enabled:
            self._hit("RATELIMIT_INVITATIONS_PER_ADDRESS", "invitee", invitees)


def _later(seconds: int) -> str:
    if seconds < 120:
        return f"in {seconds} seconds"
    if seconds < 2 * 3600:
        return f"in {math.ceil(seconds / 60)} minutes"
    return f"in {math.ceil(seconds / 3600)} hours"


def mail_quotas() -> MailQuotas:
    """The current app's :class:`MailQuotas`."""
    quotas: MailQuotas = current_app.extensions[QUOTAS]
    return quotas
