"""A refused form in readable lines: pydantic's errors, each after the form's own name for its field."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pydantic import ValidationError


def messages(error: ValueError, fields: Mapping[str, str] | Callable[[list[str]], str]) -> list[str]:
    """One line per problem, ``"<field>: <what is wrong>"``; ``fields`` names a field by its last key (a
    mapping) or by its whole location (a function)."""
    if not isinstance(error, ValidationError):
        return [str(error)]
    out = []
    for item in error.errors():
        where = [str(x) for x in item.get("loc", ())]
        message = str(item.get("msg", "")).removeprefix("Value error, ")
        if not where:
            out.append(message)
            continue
        label = fields(where) if callable(fields) else fields.get(where[-1], _plain(where[-1]))
        out.append(f"{label}: {message}")
    return out


def _plain(key: str) -> str:
    return key.replace("_", " ").capitalize()


def retry_after(error: Exception) -> dict[str, str]:
    """The ``Retry-After`` header of a refusal that says when to try again (a limit reached), else none."""
    wait = getattr(error, "extra", {}).get("retry_after")
    return {"Retry-After": str(wait)} if isinstance(wait, int) else {}
