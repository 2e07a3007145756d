"""Steps of a game told in words, for the history and the game page.

A step of the game is told by the rules (``rules.tell``: the base game's steps and each race's and power's
own, from the states before and after it), with public facts only: a turn's score to its player alone
until the game is over (others would add the scores up into the coins, ARCHITECTURE §4). The service's own
events (an undo, an admin act) are told here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import rules
from service.domain import play, story
from service.domain.models import ActionKind, Game, GameAction

PHASES = {
    "pick": "picking a combo",
    "start": "starting the turn",
    "conquer": "conquering",
    "redeploy": "redeploying",
    "defend": "redeploying after an attack",
    "over": "the game is over",
}

#: How the history marks a step the house bot played for a seat (``GameAction.by_bot``).
BY_BOT = story.BY_BOT

#: ``rules.turn_score`` output as "5 regions + 2 (Orcs) = 7 coins".
score_words = rules.score_words


def name_of(seat: int | None, names: Sequence[str]) -> str:
    if seat is None:
        return "The service"
    return names[seat] if 0 <= seat < len(names) else f"Player {seat + 1}"


def describe_step(
    entry: story.LogEntry,
    before: rules.GameState,
    after: rules.GameState | None,
    names: Sequence[str],
    viewer: int | None,
    reveal: bool = False,
) -> str:
    """One log entry as a sentence, from the states before and after it (``after`` None: the step could not
    be replayed, e.g. an undone step that no longer applies). ``viewer``: the seat reading (its own turns'
    scores are told to it); ``reveal``: the game is over, everything is public."""
    who = name_of(entry.seat, names)
    if entry.kind == ActionKind.UNDO:
        return f"{who} took back their last steps"
    if entry.kind in (ActionKind.ADMIN, ActionKind.OPTIONS):
        # An admin act (service.domain.admin), as the game's story tells it: by role, never an address.
        return story.admin_words(entry, before, names, viewer).removesuffix(".")
    if after is None:
        return f"{who}: {str((entry.action or {}).get('type', entry.kind)).replace('_', ' ')}"
    action = entry.action if entry.kind == ActionKind.ACTION else None
    reason = story.pass_reason(entry) if entry.kind == ActionKind.AUTO_PASS else ""
    text = rules.tell(before, after, action, names, viewer, reveal, reason=reason)
    if entry.by_bot:
        text += f" ({BY_BOT})"
    return text


def told_log(
    game: Game, log: list[GameAction], names: Sequence[str], viewer: int | None, reveal: bool = False
) -> Iterator[tuple[GameAction, rules.GameState, rules.GameState, str]]:
    """Each entry of ``log`` that counts (in order), with the states before and after it and its sentence:
    steps that were taken back, and the undo records, never appear (issue 18: what was undone stays the
    player's own). Replays the game from its seed (``service.domain.play.replay_steps``)."""
    kept = story.kept(log)
    states = play.replay_steps(game, kept)
    before = next(states)
    for entry in kept:
        after = next(states)
        yield entry, before, after, describe_step(entry, before, after, names, viewer, reveal)
        before = after
