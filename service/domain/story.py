"""The game told in words: each player's turn in a sentence, for the "your turn" mail, the turn page and the
history (issue 18, "Since your last turn").

The rules tell the steps (``rules.tell_turn``, from the states before and after each step: the base game's
steps and each race's and power's own telling); this module groups the game's log, replayed from its seed
(``service.domain.play.replay_steps``) or from a turn's stored start (``play.told_turns``), into turns and
tells the service's own events (an auto-pass's reason, an admin act). Steps that were undone, and the undo
records, never appear.

Only public information (ARCHITECTURE §4): a turn's score is told to its own player alone until the game is over
(``rules.telling``), and nothing here reads a player's coins.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypeVar

import rules
from emails import admin_acts
from rules.telling import Step, tell_turn
from service.domain.models import ActionKind


class LogEntry(Protocol):
    """An entry of the game's log as the story reads it: the ORM's ``GameAction``, or the plain record a
    turn's mail reads (``service.domain.rows.EventRow``)."""

    @property
    def version(self) -> int: ...
    @property
    def seat(self) -> int | None: ...
    @property
    def kind(self) -> ActionKind: ...
    @property
    def action(self) -> dict[str, Any] | None: ...
    @property
    def undone(self) -> bool: ...
    @property
    def by_bot(self) -> bool: ...
    @property
    def created_at(self) -> datetime: ...


Entry = TypeVar("Entry", bound=LogEntry)


@dataclass
class Turn:
    """The steps one seat took in a row within one game turn (its turn, or its redeployment after an attack),
    or one admin act (``seat`` None)."""

    #: The game turn (1…) it happened in, and the seat on turn then.
    turn: int
    on_turn: int
    #: Who acted (``None``: an admin act).
    seat: int | None
    entries: list[LogEntry] = field(default_factory=list)
    steps: list[tuple[LogEntry, rules.GameState, rules.GameState]] = field(default_factory=list)

    @property
    def defending(self) -> bool:
        """A defender's redeployment in another player's turn (``ask`` mode), not a turn of their own."""
        return self.seat is not None and self.seat != self.on_turn

    @property
    def first_version(self) -> int:
        return self.entries[0].version

    @property
    def last_version(self) -> int:
        return self.entries[-1].version


#: The log entries that are a seat's own steps (the rest: admin acts, options, undo records).
SEAT_STEPS = (ActionKind.ACTION, ActionKind.AUTO_PASS)


def turns_of(log: Sequence[LogEntry], states: Iterator[rules.GameState]) -> list[Turn]:
    """The game's ``log`` (every entry, in version order) as turns: undone steps and undo records left out.

    ``states``: the game replayed from its seed over the kept entries, the start first
    (``service.domain.play.replay_steps(game, kept(log))``); or the log's end from where a turn of the story
    begins, replayed from the state there (``service.domain.play.replay_from``): its turns are the game's last.
    """
    before = next(states)
    turns: list[Turn] = []
    for entry in kept(log):
        after = next(states)
        seat = entry.seat if entry.kind in SEAT_STEPS else None
        current = turns[-1] if turns else None
        if (
            current is None
            or seat is None
            or current.seat != seat
            or current.turn != before.turn
            or current.on_turn != before.current
        ):
            current = Turn(turn=before.turn, on_turn=before.current, seat=seat)
            turns.append(current)
        current.entries.append(entry)
        current.steps.append((entry, before, after))
        before = after
    return turns


#: How a turn (or a step) the house bot played for a seat is marked (``GameAction.by_bot``).
BY_BOT = "played by the house bot"


def kept(log: Sequence[Entry]) -> list[Entry]:
    """The entries that count: neither undone steps nor undo records."""
    return [e for e in log if not e.undone and e.kind != ActionKind.UNDO]


def tell(turn: Turn, names: Sequence[str], viewer: int | None, reveal: bool = False) -> str:
    """One turn (or admin act) in a sentence, for ``viewer`` ("you", "your"; a score only if theirs or
    ``reveal``)."""
    if turn.seat is None:
        entry, before, _ = turn.steps[0]
        return admin_words(entry, before, names, viewer)
    steps = [
        Step(
            before,
            after,
            rules.Action.from_json(entry.action or {}) if entry.kind == ActionKind.ACTION else None,
            names,
            viewer,
            reveal,
            reason=pass_reason(entry) if entry.kind == ActionKind.AUTO_PASS else "",
        )
        for entry, before, after in turn.steps
    ]
    told = tell_turn(steps)
    if any(entry.by_bot for entry in turn.entries):
        told = f"{told.removesuffix('.')} ({BY_BOT})."
    return told


def since_last_turn(turns: Sequence[Turn], seat: int) -> list[Turn]:
    """The turns (and admin acts) since ``seat``'s previous turn of its own, in order: everything after it
    (from the start of the game if it has had none), leaving out its own current turn and its own steps."""
    start, end = _since_bounds(turns, seat)
    return [t for t in turns[start:end] if t.seat != seat]


def reaches_last_turn(turns: Sequence[Turn], seat: int) -> bool:
    """Whether ``turns`` (the game's latest turns) hold ``seat``'s previous turn of its own, before the one
    under way: then :func:`since_last_turn` tells the same of them as of the whole game's turns."""
    return _since_bounds(turns, seat)[0] > 0


def _since_bounds(turns: Sequence[Turn], seat: int) -> tuple[int, int]:
    """Where "since ``seat``'s last turn" begins and ends in ``turns``: after its previous turn of its own
    (0 if it has had none), before its own turn under way (the page, mid-turn: not "since" it).

    Its turn under way is everything told since its first step of the game turn it is on: its steps, and
    what came between them (a defender's redeployment after its attack, an admin act); what came before
    its first step (the host paused the game as its turn began) is still "since". So the page tells, all
    through the turn, what the turn's mail told as it began."""
    end = len(turns)
    under_way = end
    while under_way and turns[under_way - 1].on_turn == seat and turns[under_way - 1].turn == turns[-1].turn:
        under_way -= 1
    end = next((i for i in range(under_way, end) if turns[i].seat == seat and not turns[i].defending), end)
    start = end
    while start and not (turns[start - 1].seat == seat and not turns[start - 1].defending):
        start -= 1
    return start, end


def since_words(turns: Sequence[Turn], names: Sequence[str], seat: int) -> list[str]:
    """The sentences of :func:`since_last_turn` for ``seat``: what its mail and its turn page tell first."""
    return [tell(turn, names, seat) for turn in since_last_turn(turns, seat)]


# -- the service's own events ----------------------------------------------------------------------------
def pass_reason(entry: LogEntry) -> str:
    """Why an auto-pass was made, in words: the deadline, or who passed the step."""
    reason = str((entry.action or {}).get("reason", "deadline"))
    if reason == "deadline":
        return "the deadline passed"
    if reason == "resigned":
        return "the player resigned"
    return f"passed by {admin_acts.who(reason, capital=False)}"


def admin_words(entry: LogEntry, before: rules.GameState, names: Sequence[str], viewer: int | None) -> str:
    """An admin act (``service.domain.admin``) in a sentence (``emails.admin_acts``), from what its log entry
    keeps (``admin.told_act``): who (a role, not an address) and its public details."""
    data: dict[str, Any] = entry.action or {}
    act = str(data.get("act", ""))
    by = data.get("by")
    details = (data.get("changes") or {}) if act == "settings" else data
    if by is None:  # logged before its actor and details were kept with it
        return admin_acts.told(admin_acts.AdminAct(act, None, {}), admin_acts.Reader("story"))
    told = admin_acts.AdminAct(act, str(by), details, awaited=sorted(rules.awaiting(before)))
    return admin_acts.told(told, admin_acts.Reader("story", names=names, viewer=viewer))
