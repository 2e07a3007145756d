"""``POST /inbound/mail``: a raw RFC 5322 mail handed in by an MTA that pipes, or a hosted mail service's
inbound hook (ARCHITECTURE §10). The same domain operation as the SMTP/LMTP listener reads it
(``service.domain.inbound.receive``).

The caller proves itself with the shared secret ``SMALLWORLD_INBOUND_SECRET``, as a bearer token or as
the password of HTTP basic authentication (``https://mta:SECRET@host/inbound/mail``), compared in constant
time: 401 without credentials, 403 with wrong ones or when no secret is configured. A mail larger than
``SMALLWORLD_INBOUND_MAX_BYTES`` gets 413. Every mail that could be read is answered 202 with what
became of it, whatever it was (a bad mail is the sender's problem, not the MTA's: it must not retry); a
database out of reach gets 503 with ``Retry-After``, so the MTA hands the mail in again later. A mail refused
unread for one of the inbound path's other limits (``inbound.Refusal``, recorded) gets ``REFUSALS``' status:
422 for too many MIME parts (for good), 429 while its seat had its mails for the hour, 503 over the CPU
budget (both with ``Retry-After``).
"""

from __future__ import annotations

import hmac
from typing import Any

from flask import Blueprint, Flask, current_app, jsonify, request
from werkzeug.exceptions import RequestEntityTooLarge

from service.domain import inbound
from service.domain.links import current_links, current_reply_addresses
from service.infra.db import get_session

bp = Blueprint("inbound_mail", __name__)

#: The HTTP status of a mail refused unread, and the ``Retry-After`` of a refusal for now.
REFUSALS = {
    inbound.Refusal.SHAPE: (422, None),
    inbound.Refusal.RATE: (429, "3600"),
    inbound.Refusal.BUDGET: (503, "60"),
}


def _refusal(status: int, message: str, **headers: str) -> Any:
    response = jsonify({"error": message})
    response.status_code = status
    response.headers.update(headers)
    return response


def _credentials() -> str | None:
    """The secret the caller gave: a bearer token, or basic authentication's password."""
    header = request.headers.get("Authorization", "")
    if header[:7].lower() == "bearer ":
        return header[7:].strip()
    if request.authorization is not None and request.authorization.type == "basic":
        return request.authorization.password
    return None


@bp.post("/inbound/mail")
def receive_mail() -> Any:
    secret = current_app.config.get("INBOUND_SECRET")
    given = _credentials()
    if not given:
        return _refusal(
            401,
            "Authorization required: the inbound secret as a bearer token or as basic authentication's password",
            **{"WWW-Authenticate": 'Bearer realm="inbound mail"'},
        )
    if not secret:
        return _refusal(403, "Mail by HTTP is not enabled here (SMALLWORLD_INBOUND_SECRET is not set)")
    if not hmac.compare_digest(given.encode(), str(secret).encode()):
        return _refusal(403, "Wrong inbound secret")
    settings = inbound.InboundSettings.from_config(current_app.config)
    if request.content_length is not None and request.content_length > settings.max_bytes:
        return _refusal(413, f"The mail is larger than {settings.max_bytes} bytes")
    request.max_content_length = settings.max_bytes
    try:
        raw = request.get_data(cache=False)
    except RequestEntityTooLarge:
        return _refusal(413, f"The mail is larger than {settings.max_bytes} bytes")
    if not raw.strip():
        return _refusal(400, "The body must be the raw mail (RFC 5322), and it is empty")
    try:
        outcomes = inbound.receive(
            get_session(),
            raw,
            links=current_links(),
            replies=current_reply_addresses(),
            settings=settings,
            via="http",
            envelope_sender=request.args.get("sender"),
            recipients=request.args.getlist("recipient"),
        )
    except inbound.TooLarge as error:
        return _refusal(413, str(error))
    except inbound.Unavailable as error:
        return _refusal(503, str(error), **{"Retry-After": "60"})
    body = {"outcomes": [outcome.to_json() for outcome in outcomes]}
    refusals = [outcome.refusal for outcome in outcomes if outcome.refusal is not None]
    if refusals and len(refusals) == len(outcomes):
        status, retry = REFUSALS[refusals[0]]
        response = jsonify({"error": f"The mail was refused: {outcomes[0].detail}", **body})
        response.status_code = status
        if retry:
            response.headers["Retry-After"] = retry
        return response
    return jsonify(body), 202


def _inbound_size_limit() -> None:
    # A mail may be larger than any other request body (SMALLWORLD_MAX_CONTENT_LENGTH): its own limit holds
    # here, set before the app's check of oversized bodies runs.
    if request.endpoint == "inbound_mail.receive_mail":
        request.max_content_length = int(current_app.config["INBOUND_MAX_BYTES"])


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
    app.before_request_funcs.setdefault(None, []).insert(0, _inbound_size_limit)
