"""Errors of the domain operations. Each maps to one HTTP status; each message is written for the user."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    status = 400

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra


class BadRequest(DomainError):
    status = 400


class Forbidden(DomainError):
    status = 403


class NotFound(DomainError):
    status = 404


class Conflict(DomainError):
    """A stale version, not this seat's turn, or a game not in a state that allows the act."""

    status = 409


class IllegalMove(DomainError):
    """The rules refused the action; the message is the rules' own."""

    status = 422


class TooMany(DomainError):
    """A limit on what one address or client may ask of the service (ARCHITECTURE §9: no open relay) was reached;
    ``retry_after`` (seconds), when given, says when it lifts."""

    status = 429
