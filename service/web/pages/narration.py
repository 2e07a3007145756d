"""Steps of a game told in words, for the history and for the feedback after a step.

Only public facts: what was done, where, and the die. A turn's score is told to its player alone (others
would add the scores up into the coins, which are secret until the end, DESIGN §4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from service.domain.models import ActionKind

PHASES = {
    "pick": "picking a combo",
    "start": "starting the turn",
    "conquer": "conquering",
    "redeploy": "redeploying",
    "defend": "redeploying after an attack",
    "over": "the game is over",
}

#: Admin acts as the steps tell them (``service.domain.models.GameAction`` of kind ``admin`` or ``options``).
ADMIN_ACTS = {
    "extend": "The deadline was moved",
    "pause": "The game was paused",
    "resume": "The game was resumed",
    "settings": "The game's settings were changed",
    "replace": "A seat was given to a new player",
    "remove": "A player was removed from the game",
    "cancel": "The game was cancelled",
    "vacation": "A player took some vacation",
}


def name_of(seat: int | None, names: Sequence[str]) -> str:
    if seat is None:
        return "The service"
    return names[seat] if 0 <= seat < len(names) else f"Player {seat + 1}"


def describe_step(
    kind: str, action: Mapping[str, Any] | None, die: int | None, seat: int | None, names: Sequence[str]
) -> str:
    """One log entry (``service.domain.models.GameAction``) as a sentence."""
    who = name_of(seat, names)
    if kind == ActionKind.UNDO:
        return f"{who} took back their last steps"
    if kind == ActionKind.AUTO_PASS:
        reason = (action or {}).get("reason", "deadline")
        why = "the deadline passed" if reason == "deadline" else f"{reason}"
        return f"{who}'s turn was completed automatically ({why})"
    if kind in (ActionKind.ADMIN, ActionKind.OPTIONS):
        # An admin act (service.domain.admin); who did it is in the log of changes.
        return ADMIN_ACTS.get(str((action or {}).get("act")), "The game's settings were changed")
    a = action or {}
    kind = a.get("type", kind)
    region = a.get("region")
    ghouls = " with the In Decline Ghouls" if a.get("troop") == "declined" else ""
    if kind == "pick":
        return f"{who} picked combo {a.get('combo', 0) + 1}"
    if kind == "decline":
        return f"{who} put their race In Decline"
    if kind == "abandon":
        return f"{who} abandoned region {region}"
    if kind == "conquer":
        rolled = f" (the Berserk die showed {die})" if die is not None else ""
        return f"{who} conquered region {region}{ghouls}{rolled}"
    if kind == "final_conquest":
        return f"{who} rolled the die for region {region}{ghouls}: {die}"
    if kind == "end_conquest":
        return f"{who} ended their conquests"
    if kind == "redeploy":
        placed = _placements(a)
        return f"{who} redeployed{ghouls}: {placed}" if placed else f"{who} redeployed"
    if kind == "end_turn":
        return f"{who} ended their turn" + (" and went In Decline" if a.get("decline") else "")
    if kind == "convert":
        return f"{who}'s Sorcerers converted the token on region {region}"
    if kind == "berserk_roll":
        return f"{who} rolled the Berserk die: {die}"
    if kind == "dragon":
        return f"{who}'s Dragon took region {region}"
    if kind == "place_encampments":
        placed = _placements(a)
        return f"{who} placed Encampments: {placed}" if placed else f"{who} took up their Encampments"
    if kind == "place_fortress":
        return f"{who} built a Fortress on region {region}"
    if kind == "place_heroes":
        return f"{who} placed the Heroes on regions {' and '.join(str(r) for r in a.get('regions') or [])}"
    if kind == "choose_ally":
        return f"{who} made peace with {name_of(a.get('target'), names)}"
    return f"{who}: {kind.replace('_', ' ')}"


def _placements(action: Mapping[str, Any]) -> str:
    """A ``tokens`` distribution as "3 on 4, 1 on 12", by region number."""
    tokens = action.get("tokens") or {}
    return ", ".join(f"{tokens[r]} on {r}" for r in sorted(tokens, key=int))


def score_words(score: Mapping[str, Any]) -> str:
    """``rules.turn_score`` output as "5 regions + 2 (Orcs) = 7 coins"."""
    parts = [f"{score['regions']} region{'s' if score['regions'] != 1 else ''}"]
    parts += [f"{coins} ({name})" for name, coins in score.get("bonus", {}).items()]
    total = score["total"]
    return f"{' + '.join(parts)} = {total} coin{'s' if total != 1 else ''}"
