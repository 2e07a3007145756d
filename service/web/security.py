"""Security headers on every response, the reverse proxy's client address, and hostile JSON (ARCHITECTURE §7).

Signed links travel in URLs (``/play/<token>``), so no page may hand its address to another site:
``Referrer-Policy: no-referrer``. Pages may not be framed (``frame-ancestors 'none'``, and
``X-Frame-Options`` for older browsers), content types are not guessed (``nosniff``), and the Content
Security Policy allows scripts and styles from this site only: no ``'unsafe-inline'``. A page that needs
an inline ``<script>`` or ``<style>`` block marks it with ``nonce="{{ csp_nonce() }}"``; the nonce is made
for that response only, and only when a template asks for it. Inline ``style="…"`` attributes are
ignored by browsers under this policy: put the rules in a stylesheet or a nonce'd ``<style>`` block.

The API's documentation page (``/api/docs``) is no exception: it is drawn on the server from the OpenAPI
document (``service.web.api_docs``), with no script and nothing from another site.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from flask import Flask, Response, g, request
from flask.json.provider import DefaultJSONProvider
from flask.sessions import SecureCookieSessionInterface
from itsdangerous import URLSafeTimedSerializer
from werkzeug.exceptions import BadRequest, RequestEntityTooLarge
from werkzeug.middleware.proxy_fix import ProxyFix

#: The policy of every response. ``{nonce}`` is filled when a page used one.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; "
    "script-src 'self'{nonce}; "
    "style-src 'self'{nonce}; "
    "img-src 'self' data:; "
    "font-src 'self'; "
    "connect-src 'self'; "
    "manifest-src 'self'; "
    "form-action 'self'; "
    "base-uri 'none'; "
    "frame-ancestors 'none'"
)

#: The policy of a response that used no nonce (most of them), made once.
_POLICY_WITHOUT_NONCE = CONTENT_SECURITY_POLICY.format(nonce="")

#: Where the API's documentation page is (under the same policy as every other page).
API_DOCS_PREFIX = "/api/docs"

HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # Signed links are in our URLs: never send them to another site (or to this one) as a referrer.
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}

#: Sent only over HTTPS (a browser ignores it over HTTP anyway). A year, this host only.
STRICT_TRANSPORT_SECURITY = "max-age=31536000"


def init_app(app: Flask) -> None:
    """Trust the configured reverse proxies, parse JSON safely, and add the headers to every response."""
    proxies = int(app.config["PROXY_COUNT"])
    if proxies > 0:
        # The client's address (rate limits, logs) and scheme come from the proxies' X-Forwarded-* headers,
        # trusting exactly as many hops as there are proxies: a client cannot forge its way past them.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=0, x_port=0)  # type: ignore[method-assign]
    app.json = BoundedJSONProvider(app)
    # Key rotation (ARCHITECTURE §7) covers the session cookies too: one signed with an old key still opens.
    app.config["SECRET_KEY_FALLBACKS"] = list(app.config["OLD_SECRET_KEYS"])
    app.session_interface = SessionCookies()
    if app.config["SESSION_COOKIE_SAMESITE"] is None:
        app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    if str(app.config["BASE_URL"]).startswith("https://"):
        app.config["SESSION_COOKIE_SECURE"] = True
    app.jinja_env.globals["csp_nonce"] = csp_nonce
    app.before_request(_refuse_oversized_bodies)
    app.before_request(_refuse_malformed_json)
    app.before_request(_refuse_nul_in_forms)
    app.after_request(add_security_headers)


class SessionCookies(SecureCookieSessionInterface):
    """Flask's signed session cookies, with their serializer made once per set of keys: Flask makes a new one
    for every request (to open the session) and again to save it."""

    _kept: tuple[tuple[Any, ...], URLSafeTimedSerializer | None] | None = None

    def get_signing_serializer(self, app: Flask) -> URLSafeTimedSerializer | None:
        keys = (app.secret_key, *app.config["SECRET_KEY_FALLBACKS"])
        kept = self._kept
        if kept is None or kept[0] != keys:
            kept = self._kept = (keys, super().get_signing_serializer(app))
        return kept[1]


def csp_nonce() -> str:
    """This response's nonce for an inline ``<script>`` or ``<style>`` block (made on first use)."""
    if "csp_nonce" not in g:
        g.csp_nonce = secrets.token_urlsafe(18)
    nonce: str = g.csp_nonce
    return nonce


def content_security_policy() -> str:
    nonce = g.get("csp_nonce")
    return CONTENT_SECURITY_POLICY.format(nonce=f" 'nonce-{nonce}'") if nonce else _POLICY_WITHOUT_NONCE


def add_security_headers(response: Response) -> Response:
    # The names the view set, read once: each lookup in werkzeug's headers goes through all of them, and
    # there are nine to look up here on every response. A view may set any of these itself (its own policy:
    # the development mailbox's view of a mail's HTML), and then keeps it.
    present = {name.lower() for name, _ in response.headers}
    added = []
    if "content-security-policy" not in present:
        added.append(("Content-Security-Policy", content_security_policy()))
    added.extend((name, value) for name, value in HEADERS.items() if name.lower() not in present)
    if request.is_secure and "strict-transport-security" not in present:
        added.append(("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY))
    if "cache-control" not in present and not request.path.startswith("/static/"):
        # Pages and API answers carry one player's view (their coins) and signed links: no shared cache
        # (or browser history cache) may keep them.
        added.append(("Cache-Control", "no-store"))
    response.headers.extend(added)
    return response


def _refuse_oversized_bodies() -> None:
    # Werkzeug refuses an oversized body only when a view reads it; refuse it on every endpoint, before
    # any work is done, whether the view would have read the body or not.
    limit = request.max_content_length
    if limit is not None and request.content_length is not None and request.content_length > limit:
        raise RequestEntityTooLarge(f"The request body is larger than {limit} bytes.")


def _refuse_malformed_json() -> None:
    # The API's validation (spectree) reads the body leniently: unparsable JSON, and any falsy document
    # ([], 0, "", false, null), read as {}, so a body of [] was accepted where every field is optional, and
    # a body that is not JSON at all got "field required". Every body the API takes is a JSON object.
    if request.path.startswith("/api/") and request.is_json and request.content_length:
        try:
            body = request.get_json()
        except BadRequest:
            raise BadRequest("The request body is not valid JSON.") from None
        if not isinstance(body, dict):
            raise BadRequest(f"The request body must be a JSON object, not {type(body).__name__}.")
        if _holds_nul(body):
            raise BadRequest(NUL_REFUSED)


def _refuse_nul_in_forms() -> None:
    if (
        request.method == "POST"
        and request.mimetype in FORM_TYPES
        and any("\0" in key or "\0" in value for key, value in request.form.items(multi=True))
    ):
        raise BadRequest(NUL_REFUSED)


#: PostgreSQL cannot store a NUL character in text: refused up front, or the write would fail with a 500.
NUL_REFUSED = "Text may not contain NUL characters."
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _holds_nul(document: Any) -> bool:
    # Iterative: a document nested nearly as deep as the parser allows must not exhaust the stack here.
    pending = [document]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            if "\0" in value:
                return True
        elif isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


class BoundedJSONProvider(DefaultJSONProvider):
    """Flask's JSON, refusing (as malformed) documents nested so deeply that the parser would recurse out,
    and ``NaN`` and ``Infinity``, which Python's parser reads but are not JSON (RFC 8259).

    ``json.loads("[" * 50_000)`` raises ``RecursionError``, not ``ValueError``: without this, such a body
    (well under the size limit) would be a 500 instead of a 400.
    """

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        kwargs.setdefault("parse_constant", _not_json)
        try:
            return super().loads(s, **kwargs)
        except RecursionError:
            raise json.JSONDecodeError("JSON nested too deeply", s if isinstance(s, str) else "", 0) from None


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")
