"""Rate limits on signed-link verification and on action submission (DESIGN §7), with Flask-Limiter.

Three limits, each a setting (``service.infra.config``; the README's table):

- ``RATELIMIT_LINKS``: requests that carry a signed link, per client address: a link opened in the
  browser (any route with a ``<token>`` in its path) or an API call with a bearer token.
- ``RATELIMIT_BAD_LINKS``: such requests that were refused (403: tampered, expired, revoked, another
  game's…), per client address. Only refusals count, so players are never slowed down by it; someone
  trying tokens is stopped after a few.
- ``RATELIMIT_ACTIONS``: steps submitted (actions and undos), per seat: a runaway script cannot flood a
  game's log or the other players' inboxes.

Counters live in ``RATELIMIT_STORAGE_URI``: ``memory://`` by default (each web process counts alone, which
suits the embedded mode), ``redis://…`` at scale so every web process shares them. If that storage stops
answering, the limits fall back to per-process memory and the site keeps serving. Over a limit, the answer
is 429 with ``Retry-After``: JSON ``{"error": …}`` under ``/api``, a short page elsewhere. Every other
``RATELIMIT_*`` option of Flask-Limiter (``RATELIMIT_STRATEGY``…) can be set the same way.
"""

from __future__ import annotations

import math
import time
from typing import Any

from flask import Flask, Response, current_app, jsonify, render_template_string, request, session
from flask_limiter import Limit, Limiter, RateLimitExceeded

from service.domain.links import TURN, LinkError, LinkMaker, current_links

#: Endpoints that submit a step of a turn. Pages that submit steps add theirs here.
ACTION_ENDPOINTS = {"api.submit_action", "api.undo", "turn.act", "turn.undo"}

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
        ],
        storage_uri=config["RATELIMIT_STORAGE_URI"],
        # A storage outage (Redis restarting) must not take the site down: count in memory meanwhile.
        in_memory_fallback_enabled=True,
        swallow_errors=True,
        key_prefix="smallworld",
    )
    limiter.init_app(app)
    app.extensions["smallworld.limiter"] = limiter
    app.register_error_handler(RateLimitExceeded, too_many_requests)


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
