"""What the JSON API's blueprints share: the OpenAPI spec and its validation hook, the error shapes, the
bearer token, and how a refused domain operation is answered. ``service.web.api`` (players) and
``service.web.admin_api`` (hosts and site admins) both build on it.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Response, jsonify, request
from spectree import SecurityScheme, SpecTree
from spectree.models import SecureType, SecuritySchemeData

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


spec = SpecTree(
    "flask",
    title="Small World by Mail",
    version="1",
    path="api/docs",
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

ERRORS = {f"HTTP_{code}": ErrorOut for code in (400, 403, 404, 409, 422)}


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
    return jsonify(body), error.status
