"""Rate limits on signed-link verification and on action submission (ARCHITECTURE §7), with Flask-Limiter.

Three limits, each a setting (``service.infra.config``; the README's table):

- ``RATELIMIT_LINKS``: requests that carry a signed link, per client address: a link opened in the
  browser (any route with a ``<token>`` in its path) or an API call with a bearer token.
- ``RATELIMIT_BAD_LINKS``: such requests that were refused (403: tampered, expired, revoked, another
  game's…), per client address. Only refusals count, so players are never slowed down by it; someone
  trying tokens is stopped after a few.
- ``RATELIMIT_ACTIONS``: steps submitted (actions and undos), per seat: a runaway script cannot flood a
  game's log or the other players' inboxes.

What strangers could use to mail strangers (ARCHITECTURE §9) is limited too:

- ``RATELIMIT_NEW_GAMES``: games created (the lobby's form and ``POST /api/games`` together), per client
  address. Only games actually created count; a refused form does not.
- ``RATELIMIT_GAMES_PER_HOST``: games created naming one host address, whoever creates them.
- ``RATELIMIT_INVITATIONS_PER_ADDRESS``: invitations mailed to one address (at a host's confirmation, or
  when a host gives a seat to it), whoever sends them. A game that would go over is refused when created,
  naming the address; the count is taken when the invitations go.
- ``RATELIMIT_STRANGERS_PER_HOST`` and ``RATELIMIT_STRANGERS_PER_CLIENT``: mails a host has the service send
  to addresses that never played with that host (``service.domain.strangers``): invitations at a game's
  confirmation, and, when a seat is given to someone else, the newcomer's invitation and the "the seat changed
  hands" mail to the player who had it. Per host address and per client address, whichever game it is for.
  Refused before anything is mailed, naming the addresses; counted when the mails go.
- ``RATELIMIT_ADMIN_ACTS``: admin acts on one game (the admin API's and the admin page's), each of which
  mails every player.
- ``RATELIMIT_SIGN_IN`` (per client address) and ``RATELIMIT_SIGN_IN_PER_ADDRESS`` (per address asked for):
  players' sign-in links and "mail me my links" (``service.web.pages.me``). Over the second, the page answers
  as ever and nothing is mailed, so the answer never tells whether an address plays here.

The per-address, per-host and stranger limits are counted here by hand (:class:`MailQuotas`) in the same
storage, since what they count is inside the request (its body), needs the database (who played with whom) or
happens later (a confirmation).

Counters live in ``RATELIMIT_STORAGE_URI``: ``memory://`` by default (each web process counts alone, which
suits the embedded mode), ``redis://…`` at scale so every web process shares them. If that storage stops
answering, the limits fall back to per-process memory and the site keeps serving. Over a limit, the answer
is 429 with ``Retry-After``: JSON ``{"error": …}`` under ``/api``, a short page elsewhere. Every other
``RATELIMIT_*`` option of Flask-Limiter (``RATELIMIT_STRATEGY``…) can be set the same way.

The first five limits concern every request, so they are checked here (:class:`RequestLimits`) rather
than as Flask-Limiter's default limits: Flask-Limiter asks its storage once per limit (a request carrying a
link cost 4–5 Redis round trips, one per counter), while on Redis these are counted in one round trip, one
small Lua script (:data:`COUNT_SCRIPT`). The counters, their keys and windows are Flask-Limiter's (the
``limits`` library's fixed windows, which a rolling upgrade keeps sharing), and so is the order they are
counted in and its stop at the first limit reached. ``limits`` offers no operation on several counters,
and a pipeline cannot stop at the first limit reached (a step refused by the per-address limit would still
count against its seat), hence the script. Other storages and strategies are asked one limit at a time,
through the library.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, current_app, g, jsonify, render_template_string, request, session
from flask_limiter import Limiter, RateLimitExceeded
from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage, RedisClusterStorage, RedisStorage
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
        storage_uri=config["RATELIMIT_STORAGE_URI"],
        # A storage outage (Redis restarting) must not take the site down: count in memory meanwhile.
        in_memory_fallback_enabled=True,
        swallow_errors=True,
        key_prefix=KEY_PREFIX,
    )
    limiter.init_app(app)
    app.extensions["smallworld.limiter"] = limiter
    app.extensions[QUOTAS] = MailQuotas(limiter)
    app.register_error_handler(RateLimitExceeded, too_many_requests)
    app.register_error_handler(LimitReached, limit_reached)
    if limiter.enabled:
        check_settings(config)
        limits = RequestLimits(limiter)
        # Flask-Limiter's own check before every request counts only the limits that concern every request
        # (its default, application and meta limits: RATELIMIT_DEFAULT…, and a blueprint's); a view's own
        # limits are counted by the view's wrapper. We have none of the former unless configured, and the
        # check cost 0.1 ms a request for nothing: it runs inside ours, first, only when there is one.
        app.before_request_funcs[None].remove(limiter._check_request_limit)
        app.before_request(limits.check)
        app.after_request(limits.count_after)


def check_settings(config: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the setting when a request limit does not parse, the limits being on
    (``RATELIMIT_ENABLED``): it would refuse every request it concerns. Every process of the service refuses
    to start with it, those that serve no request too (``create_app(web=False)``)."""
    if not config.get("RATELIMIT_ENABLED", True):
        return
    for limit in REQUEST_LIMITS:
        try:
            _parsed(config[limit.setting])
        except ValueError:
            raise ValueError(
                f"SMALLWORLD_{limit.setting} is not a rate limit: {config[limit.setting]!r} "
                "(write it as '120 per minute' or '10 per minute; 100 per day')"
            ) from None


#: What every counter's key starts with (after the ``limits`` library's own prefix).
KEY_PREFIX = "smallworld"


@dataclass(frozen=True)
class RequestLimit:
    """One limit every request is checked against: the setting that says how many, what it counts per
    (``key``), which requests it concerns (``applies``), and what the refusal says. ``counted_when``: only
    answers it accepts count (then the request is checked before, and counted after it is answered)."""

    setting: str
    scope: str
    key: Callable[[], str]
    applies: Callable[[], bool]
    message: str
    counted_when: Callable[[Response], bool] | None = None


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


#: The limits every request is checked against (see the module's docstring).
REQUEST_LIMITS = (
    RequestLimit(
        "RATELIMIT_LINKS", "links", client_address, lambda: carries_link(), "Too many links opened from your address"
    ),
    RequestLimit(
        "RATELIMIT_BAD_LINKS",
        "bad-links",
        client_address,
        lambda: carries_link(),
        "Too many invalid or expired links tried from your address",
        counted_when=lambda response: response.status_code == 403,
    ),
    RequestLimit(
        "RATELIMIT_ACTIONS",
        "actions",
        acting_seat,
        lambda: request.endpoint in ACTION_ENDPOINTS,
        "Too many steps submitted for this seat",
    ),
    RequestLimit(
        "RATELIMIT_NEW_GAMES",
        "new-games",
        client_address,
        lambda: request.method == "POST" and request.endpoint in NEW_GAME_ENDPOINTS,
        "Too many games created from your address",
        counted_when=lambda response: response.status_code in (201, 303),
    ),
    RequestLimit(
        "RATELIMIT_ADMIN_ACTS",
        "admin-acts",
        managed_game,
        lambda: request.method == "POST" and request.blueprint in ADMIN_ACT_BLUEPRINTS,
        "Too many admin acts on this game (each one mails every player)",
    ),
)

#: Counts several fixed-window counters in one call, in order. KEYS: the counters; ARGV: whether to stop at
#: the first one over its limit, then one value per counter, ``"<hit> <limit> <window>"``: hit 1 to count one
#: more, 0 to test only (would one more go over?); the limit; the window in seconds. A counter is created with
#: its window as expiry, as the ``limits`` library's ``incr`` does. Returns the (1-based) index of the first
#: counter over its limit and its seconds to go, or ``{0, 0}``. (One value per counter rather than three:
#: redis-py packs each argument of a command one by one, in Python, and a step's five counters took 10 µs.)
COUNT_SCRIPT = """
local stop = ARGV[1] == "1"
for i, key in ipairs(KEYS) do
    local hit, limit, window = string.match(ARGV[i + 1], "^(%d) (%d+) (%d+)$")
    limit = tonumber(limit)
    local over
    if hit == "1" then
        local current = redis.call("incrby", key, 1)
        if current == 1 then
            redis.call("expire", key, window)
        end
        over = current > limit
    else
        over = tonumber(redis.call("get", key) or "0") > limit - 1
    end
    if over and stop then
        return {i, redis.call("ttl", key)}
    end
end
return {0, 0}
"""


@dataclass(frozen=True)
class Count:
    """One counter of one request: a window of a :class:`RequestLimit` for one key; ``hit``: add to it, else
    only test whether one more would go over."""

    limit: RequestLimit
    item: RateLimitItem
    #: What the counter is for, as the ``limits`` library takes it: the prefix, the key and the scope.
    identifiers: tuple[str, ...]
    hit: bool


class LimitReached(Exception):
    """A request over one of :data:`REQUEST_LIMITS`: answered 429 (:func:`limit_reached`)."""

    def __init__(self, count: Count, retry_after: int) -> None:
        super().__init__(count.limit.message)
        self.count = count
        self.retry_after = retry_after


class RequestLimits:
    """Checks each request against :data:`REQUEST_LIMITS` before it is served, and counts the ones counted
    only by their answer after it, in one round trip each on Redis (:data:`COUNT_SCRIPT`).

    If the storage stops answering, this process counts in memory and asks the storage again after a
    while (2, 4, … 32 seconds), as Flask-Limiter does for its own limits.
    """

    def __init__(self, limiter: Limiter) -> None:
        self._limiter = limiter
        self._fallback: RateLimiter = FixedWindowRateLimiter(MemoryStorage())
        self._script: Any = None
        self._failures = 0
        self._retry_at = 0.0
        self._limiter_has_own: bool | None = None

    def check(self) -> None:
        """Before a request: every limit that concerns it, tested or counted; :class:`LimitReached` if over."""
        if self._limiter_has_own is None:  # known once every blueprint and view is in place
            self._limiter_has_own = limiter_counts_every_request(self._limiter)
        if self._limiter_has_own:
            self._limiter._check_request_limit()
        endpoint = request.endpoint
        if not endpoint or endpoint.rsplit(".", 1)[-1] == "static":
            return
        counts = []
        for limit in REQUEST_LIMITS:
            if limit.applies():
                key = limit.key()
                for item in _parsed(current_app.config[limit.setting]):
                    counts.append(Count(limit, item, (KEY_PREFIX, key, limit.scope), hit=limit.counted_when is None))
        if not counts:
            return
        counts.sort(key=lambda count: count.item)  # the shortest windows first, as Flask-Limiter orders them
        over = self._count(counts, stop=True)
        # Those counted by their answer, up to the one over (if any), are counted after the answer.
        checked = counts if over is None else counts[: counts.index(over[0]) + 1]
        g.limits_after = [count for count in checked if not count.hit]
        if over is not None:
            raise LimitReached(*over)

    def count_after(self, response: Response) -> Response:
        """After a request: count it against the limits that count only answers like this one."""
        due = [
            Count(c.limit, c.item, c.identifiers, hit=True)
            for c in g.pop("limits_after", ())
            if c.limit.counted_when is not None and c.limit.counted_when(response)
        ]
        if due:
            self._count(due, stop=False)
        return response

    def _count(self, counts: list[Count], *, stop: bool) -> tuple[Count, int] | None:
        storage = self._limiter.storage
        strategy = self._limiter.limiter
        # One script for every counter: on one Redis server (a cluster would spread the keys over nodes).
        redis = storage if isinstance(storage, RedisStorage) and not isinstance(storage, RedisClusterStorage) else None
        batched = redis is not None and type(strategy) is FixedWindowRateLimiter
        if time.time() >= self._retry_at:
            try:
                if redis is not None and batched:
                    over = self._count_in_redis(redis, counts, stop)
                else:
                    over = _count_one_by_one(strategy, counts, stop)
                self._failures = 0
                return over
            except Exception as error:  # the storage went away: count here meanwhile
                logger.warning("rate limit storage unreachable: %r; counting in memory meanwhile", error)
                self._retry_at = time.time() + 2 ** min(self._failures + 1, 5)
                self._failures += 1
        return _count_one_by_one(self._fallback, counts, stop)

    def _count_in_redis(self, storage: RedisStorage, counts: list[Count], stop: bool) -> tuple[Count, int] | None:
        if self._script is None:
            self._script = storage.get_connection().register_script(COUNT_SCRIPT.encode())
        arguments = [int(stop), *(f"{int(c.hit)} {c.item.amount} {c.item.get_expiry()}" for c in counts)]
        index, seconds = self._script(
            keys=[storage.prefixed_key(count.item.key_for(*count.identifiers)) for count in counts], args=arguments
        )
        if not index:
            return None
        return counts[int(index) - 1], max(1, int(seconds))


def limiter_counts_every_request(limiter: Limiter) -> bool:
    """Whether Flask-Limiter has limits of its own to count before every request: default, application, meta
    or in-memory fallback limits (``RATELIMIT_DEFAULT``, ``RATELIMIT_APPLICATION``, ``RATELIMIT_META``,
    ``RATELIMIT_IN_MEMORY_FALLBACK``) or a blueprint's limit."""
    manager = limiter.limit_manager
    return bool(
        manager.default_limits
        or manager.application_limits
        or limiter._meta_limits
        or limiter._in_memory_fallback
        or any(manager._blueprint_limits.values())
    )


def _count_one_by_one(strategy: RateLimiter, counts: list[Count], stop: bool) -> tuple[Count, int] | None:
    """:func:`RequestLimits._count` through a ``limits`` strategy, one counter at a time."""
    for count in counts:
        if count.hit:
            passed = strategy.hit(count.item, *count.identifiers)
        else:
            passed = strategy.test(count.item, *count.identifiers)
        if not passed and stop:
            reset_at = strategy.get_window_stats(count.item, *count.identifiers).reset_time
            return count, max(1, math.ceil(reset_at - time.time()))
    return None


@functools.lru_cache(maxsize=64)
def _parsed(setting: str) -> tuple[RateLimitItem, ...]:
    return tuple(parse_many(setting))


def limit_reached(error: LimitReached) -> Any:
    return _limited_answer(error.count.limit.message, error.count.item, error.retry_after)


def too_many_requests(error: RateLimitExceeded) -> Any:
    limiter: Limiter = current_app.extensions["smallworld.limiter"]
    current = limiter.current_limit
    retry_after = 60
    if current is not None:
        try:
            retry_after = max(1, math.ceil(current.window[0] - time.time()))
        except Exception:  # the counters' storage went away meanwhile: a minute is a fair guess
            retry_after = 60
    return _limited_answer(str(error.description), error.limit.limit, retry_after)


def _limited_answer(description: str, item: RateLimitItem, retry_after: int) -> Response:
    """The 429 answer: what was reached, the limit, and when to try again (also as ``Retry-After``)."""
    message = f"{description} (at most {item}). Try again in {retry_after} second{'s' if retry_after != 1 else ''}."
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

    def _stranger_counters(self, host: str) -> list[tuple[str, RateLimitItem, tuple[str, ...]]]:
        config = current_app.config
        return [
            (setting, item, key)
            for setting, key in (
                ("RATELIMIT_STRANGERS_PER_HOST", self._key("strangers-of-host", host)),
                ("RATELIMIT_STRANGERS_PER_CLIENT", self._key("strangers-of-client", client_address())),
            )
            for item in parse_many(config[setting])
        ]

    def check_strangers(self, host: str, strangers: list[str]) -> None:
        """:class:`TooMany` naming ``strangers`` if mailing them would put ``host``, or the client asking, over
        its daily limit of mail to addresses that never played with the host."""
        if not self.enabled or not strangers:
            return
        for setting, item, key in self._stranger_counters(host):
            if not self._run_cost("test", item, key, len(strangers)):
                wait = self._reset_in(item, key)
                limit = current_app.config[setting]
                who = (
                    f"{host} has had the service mail as many of them as a host may (at most {limit})"
                    if setting.endswith("HOST")
                    else f"as many mails to such addresses went from your address as may (at most {limit})"
                )
                raise TooMany(
                    f"{', '.join(strangers)}: never played with {host}, and {who}. Try again {_later(wait)}, or "
                    f"choose someone who has played with {host}.",
                    retry_after=wait,
                    field="email",
                    addresses=strangers,
                )

    def note_strangers(self, host: str, strangers: list[str]) -> None:
        """Count mails gone to ``strangers`` (checked before with :meth:`check_strangers`)."""
        if self.enabled and strangers:
            for _, item, key in self._stranger_counters(host):
                self._run_cost("hit", item, key, len(strangers))

    def _run_cost(self, method: str, item: RateLimitItem, key: tuple[str, ...], cost: int) -> bool:
        try:
            return bool(getattr(self._strategy(), method)(item, *key, cost=cost))
        except Exception as error:  # the storage went away: count here meanwhile
            logger.warning("rate limit storage unreachable for %s: %r", key[1], error)
            return bool(getattr(self._fallback, method)(item, *key, cost=cost))

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
