"""What the JSON API's blueprints share: the OpenAPI spec and its validation hook, the error shapes, the
bearer token, and how a refused domain operation is answered. ``service.web.api`` (players) and
``service.web.admin_api`` (hosts and site admins) both build on it.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Response, current_app, jsonify, request
from spectree import SecurityScheme, SpecTree
from spectree.models import SecureType, SecuritySchemeData
from spectree.plugins.base import Context
from spectree.plugins.flask_plugin import FlaskPlugin
from spectree.utils import get_multidict_items
from werkzeug.exceptions import BadRequest, UnsupportedMediaType

from service.domain.errors import DomainError, Forbidden
from service.domain.schemas import ErrorOut


def _malformed(req: Any, resp: Any, error: Any, instance: Any, model_adapter: Any = None) -> None:
    """spectree hook: turn pydantic's error list into one readable message."""
    if error is None:
        return
    parts = []
    for item in error.errors():
        where = ".".join(str(x) for x in item.get("loc", ()) if x != "__root__")
        parts.append(f"{where}: {item.get('msg')}" if where else str(item.get("msg")))
    resp.set_data(json.dumps({"error": "Malformed request: " + "; ".join(parts)}))
    resp.mimetype = "application/json"


class Validation(FlaskPlugin):
    """spectree's Flask plugin, reading only the parts of a request that the operation has a model for.

    spectree's own reads the query, every header and the cookies of every request into dicts before it
    knows whether a model will check them; ours check only the JSON body (and no operation has a model for
    headers, cookies or the query), so that was 20–25 µs a request for nothing. What is checked, and how, is
    spectree's: the same models, the same errors.
    """

    def request_validation(self, request: Any, query: Any, json: Any, form: Any, headers: Any, cookies: Any) -> None:
        adapter = self.model_adapter
        has_data = request.method not in ("GET", "DELETE")
        use_json = json and has_data and request.mimetype not in self.FORM_MIMETYPE
        use_form = form and has_data and request.mimetype in self.FORM_MIMETYPE
        request.context = Context(
            adapter.validate_obj(query, get_multidict_items(request.args, query)) if query else None,
            adapter.validate_obj(json, request.get_json(silent=True) or {}) if use_json else None,
            adapter.validate_obj(form, self.fill_form(request)) if use_form else None,
            adapter.validate_obj(headers, dict(iter(request.headers)) or {}) if headers else None,
            adapter.validate_obj(cookies, get_multidict_items(request.cookies)) if cookies else None,
        )


spec = SpecTree(
    "flask",
    backend=Validation,
    title="Small World by Mail",
    version="1",
    path="api/docs",
    # No documentation pages of spectree's: they load their scripts from CDNs. The service serves its own
    # page over the same document (service.web.api_docs), under the site's content security policy.
    page_templates={},
    mode="strict",
    validation_error_status=400,
    before=_malformed,
    security_schemes=[
        SecurityScheme(
            name="seat",
            data=SecuritySchemeData(
                type=SecureType.HTTP, scheme="bearer", description="The seat's signed turn token from its mails"
            ),
        )
    ],
)

ERRORS = {f"HTTP_{code}": ErrorOut for code in (400, 403, 404, 409, 415, 422)}
#: The operations that mail strangers answer 429 when a limit on that is reached (``Retry-After`` says when
#: to try again).
LIMITED_ERRORS = {**ERRORS, "HTTP_429": ErrorOut}


def refuse_unreadable_bodies() -> None:
    """Before an API operation: a body it would not read is refused, naming what is wrong, instead of being
    read as nothing (spectree reads a body of another type as ``{}``, and a form body as no body at all,
    which reached the operation as ``None``).

    An operation that takes a JSON document: a body of another type is 415. One that takes no body: a
    body other than an empty JSON object is 400.
    """
    view = current_app.view_functions.get(request.endpoint or "")
    metadata = spec.get_function_metadata(view) if view is not None else None
    if metadata is None or request.method in ("GET", "HEAD", "OPTIONS", "DELETE"):
        return
    has_body = bool(request.content_length) or "chunked" in request.headers.get("Transfer-Encoding", "").lower()
    if not has_body:
        return
    if getattr(metadata, "json", None):
        if not request.is_json:
            shown = request.mimetype or "none"
            raise UnsupportedMediaType(f"Content-Type: send the body as JSON (application/json), not {shown}.")
        return
    if not request.is_json or request.get_json(silent=True) != {}:
        raise BadRequest("This operation takes no request body: send none (or {}).")


def bearer_token() -> str:
    """The signed token of the request's ``Authorization: Bearer`` header; :class:`Forbidden` without one."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Forbidden("Send your game link's token as 'Authorization: Bearer <token>'")
    return token.strip()


def domain_error(error: DomainError) -> tuple[Response, int]:
    """A refused operation as the API answers it: ``{"error": message}`` (+ the fresh version on 409)."""
    body: dict[str, Any] = {"error": error.message}
    body.update({k: v for k, v in error.extra.items() if k == "version"})
    response = jsonify(body)
    if isinstance(error.extra.get("retry_after"), int):
        response.headers["Retry-After"] = str(error.extra["retry_after"])
    return response, error.status
