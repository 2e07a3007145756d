"""Reading the pages' forms and query strings."""

from __future__ import annotations

from typing import Any

from werkzeug.datastructures import MultiDict


def action_from_form(form: MultiDict[str, str]) -> dict[str, Any]:
    """The action a form describes. Only the fields present are set: the rules refuse what does not fit.

    ``tokens-<region>`` inputs make the ``tokens`` distribution, ``regions`` (repeated) a region list.
    Raises ValueError for a number that is not one.
    """
    kind = form.get("type", "").strip()
    if not kind:
        raise ValueError("no action")
    action: dict[str, Any] = {"type": kind}
    for name in ("region", "combo", "target"):
        value = form.get(name, "").strip()
        if value:
            action[name] = int(value)
    if form.get("troop"):
        action["troop"] = form["troop"]
    if form.get("decline") == "1":
        action["decline"] = True
    tokens = {}
    for name, value in form.items():
        if name.startswith("tokens-") and value.strip():
            tokens[str(int(name.removeprefix("tokens-")))] = int(value)
    if tokens:
        action["tokens"] = tokens
    regions = [int(r) for r in form.getlist("regions") if r.strip()]
    if regions or kind == "place_heroes":
        action["regions"] = regions
    return action


def int_or_none(value: str | None) -> int | None:
    """A query-string number, or None when it is missing or not a number."""
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None
