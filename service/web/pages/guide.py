"""The "how a turn goes" page: the steps of a turn on this site, in the rulebook's order, and every race and
power in its own words (each ability module's ``description``). Linked from every turn page and turn mail."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template

import rules

bp = Blueprint("guide", __name__)


@bp.get("/how-to-play")
def how_to_play() -> Any:
    def entries(table: Any) -> list[dict[str, str]]:
        return [
            {"name": a.name, "summary": a.summary, "description": a.description, "source": a.cited()}
            for a in sorted(table.values(), key=lambda a: a.name)
        ]

    return render_template("guide/how_to_play.html", races=entries(rules.RACES), powers=entries(rules.POWERS))
