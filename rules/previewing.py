"""Previews: what a step will do, worked out by the engine before the player takes it: the confirmation a page shows
("you will score 7 coins", "3 tokens left in hand") is what :func:`rules.apply` then does, never a guess.

:func:`preview` applies the action to the state (``apply`` is pure: the state is not changed) and compares
the two states. A step that rolls the die is previewed once per value the die can show (components.md, the
reinforcement die: 0, 0, 0, 1, 2, 3), each applied with a generator that rolls that value, so the preview
never tells the die the real generator holds (ARCHITECTURE §4, "Hidden information": the RNG is secret).

Only what the acting player may know is in a preview: the board (public), the player's own coins and tokens.

    >>> from rules import Action, new_game
    >>> state = new_game(2, seed=1)
    >>> ahead = preview(state, Action("pick", 0, combo=0))
    >>> outcome = ahead.outcomes[0]
    >>> outcome.coins, outcome.die, outcome.regions
    (0, None, ())
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from . import rng
from .actions import ACTION_KINDS, Action, IllegalAction, is_described
from .components import DIE_FACES
from .cost import ConquestCost, conquest_breakdown
from .engine import apply, auto_pass, awaiting, legal_actions
from .regions import all_markers
from .state import DEFEND, OVER, GameState
from .troops import acting_troop
from .view import player_view

#: How many generator words :func:`die_outcomes` tries to make the die show every value before giving up.
MAX_PROBES = 256


@dataclass(frozen=True, slots=True)
class RegionChange:
    """One region the step changes: what lies there before and after (``owner``: a seat or -1, ``race``,
    ``tokens``, and the markers by name as :func:`rules.region_markers` gives them)."""

    region: int
    before: dict[str, Any]
    after: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"region": self.region, "before": dict(self.before), "after": dict(self.after)}


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the step does, for one value of the die (``die`` None: the step uses no die).

    ``chances``: the die's faces (of :data:`DIE_FACES`) that give it, all of them for a step without the
    die. ``coins``: the change of the player's own coins. ``score``: what the step itself scores (going In
    Decline, ending the turn: ``rules.turn_score``'s form), else None. ``score_if_ended``: what the player
    would score if the turn ended right after the step (conquests stopped, tokens in hand placed by the
    ``auto`` rule, ARCHITECTURE §4), worked out by the engine's own auto-pass; None once the player's turn is
    over or for an attacked player's step. ``score_change``: ``score_if_ended`` less what ending the turn
    just before the step would score. ``hand``: the player's tokens in hand after the step, by race.
    ``regions``: the regions the step changes. ``ends_turn``: the step ends the player's part.
    """

    die: int | None
    chances: int
    coins: int
    score: dict[str, Any] | None
    score_if_ended: dict[str, Any] | None
    score_change: int | None
    hand: dict[str, int]
    regions: tuple[RegionChange, ...]
    phase: str
    ends_turn: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "die": self.die,
            "chances": self.chances,
            "of": len(DIE_FACES),
            "coins": self.coins,
            "score": self.score,
            "score_if_ended": self.score_if_ended,
            "score_change": self.score_change,
            "hand": dict(self.hand),
            "regions": [change.to_json() for change in self.regions],
            "phase": self.phase,
            "ends_turn": self.ends_turn,
        }


@dataclass(frozen=True, slots=True)
class Preview:
    """What ``action`` will do: one :class:`Outcome`, or one per value of the die it rolls."""

    action: Action
    outcomes: tuple[Outcome, ...]

    @property
    def uses_die(self) -> bool:
        return self.outcomes[0].die is not None

    def outcome(self, die: int | None) -> Outcome:
        """The outcome for the die rolled (``die``), or the only one."""
        for found in self.outcomes:
            if found.die == die:
                return found
        raise KeyError(die)

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action.to_json(), "outcomes": [o.to_json() for o in self.outcomes]}


def preview(state: GameState, action: Action | Any) -> Preview:
    """What ``action`` will do (raises :class:`IllegalAction` as ``apply`` does, with its message).

    A described choice as ``legal_actions`` offers it (a ``redeploy`` without its distribution…) is not an
    action: preview one of its concrete choices instead.
    """
    if not isinstance(action, Action):
        action = Action.from_json(action)
    if is_described(action.type) and action.count is not None:
        raise IllegalAction(f"'{action.type}' is a choice to make: preview it with your distribution")
    return _preview(state, action, _Before(state, action.player))


class _Before:
    """What every preview of one player's actions in one state compares with, worked out once."""

    __slots__ = ("state", "seat", "markers", "if_ended")

    def __init__(self, state: GameState, seat: int) -> None:
        self.state, self.seat = state, seat
        self.markers = all_markers(state)
        self.if_ended = turn_score_if_ended(state, seat)


def _preview(state: GameState, action: Action, before: _Before) -> Preview:
    after = apply(state, action)
    if "die" not in after.last or after.rng == state.rng:
        # No die rolled by this step (a die rolled before it, which it uses, is known already).
        return Preview(action, (_outcome(before, after, None, len(DIE_FACES)),))
    outcomes = [_outcome(before, probe, die, DIE_FACES.count(die)) for die, probe in die_outcomes(state, action)]
    return Preview(action, tuple(sorted(outcomes, key=lambda o: o.die or 0)))


def previews(state: GameState, player: int) -> list[tuple[Action, Preview | None]]:
    """Every action :func:`rules.legal_actions` offers ``player``, with its :func:`preview` (None for a
    described choice, which has none until the player makes it)."""
    out: list[tuple[Action, Preview | None]] = []
    before = _Before(state, player)
    for action in legal_actions(state, player):
        if is_described(action.type) and action.count is not None:
            out.append((action, None))
        else:
            out.append((action, _preview(state, action, before)))
    return out


def die_outcomes(state: GameState, action: Action) -> Iterator[tuple[int, GameState]]:
    """The state after ``action`` for every value the die can show, each applied with a generator that
    rolls it: ``(value, state after)``. The generator words are tried in order, so this is deterministic."""
    wanted = set(DIE_FACES)
    for word in _probe_words():
        if not wanted:
            return
        trial = state.fork()
        trial.rng = word
        after = apply(trial.done(), action)
        die = after.last.get("die")
        if die in wanted:
            wanted.discard(die)
            yield die, after
    raise AssertionError(f"no generator word made the die show {sorted(wanted)} for {action}")  # pragma: no cover


_PROBES: list[int] = []


def _probe_words() -> list[int]:
    """Generator words whose first die roll shows each value of the die, then others in case a step draws
    from the generator before rolling."""
    if not _PROBES:
        first: dict[int, int] = {}
        for word in range(MAX_PROBES):
            face = DIE_FACES[rng.below(word, len(DIE_FACES))[1]]
            first.setdefault(face, word)
        _PROBES.extend(first.values())
        _PROBES.extend(w for w in range(MAX_PROBES) if w not in first.values())
    return _PROBES


def _outcome(start: _Before, after: GameState, die: int | None, chances: int) -> Outcome:
    before, seat = start.state, start.seat
    own_turn = before.phase != DEFEND
    still_on = after.phase != OVER and seat in awaiting(after) and after.phase != DEFEND and after.current == seat
    score = after.last.get("score") if not still_on else None
    if_ended = turn_score_if_ended(after, seat) if own_turn and still_on else None
    change = None
    if if_ended is not None:
        change = if_ended["total"] - (start.if_ended["total"] if start.if_ended is not None else 0)
    return Outcome(
        die=die,
        chances=chances,
        coins=after.players[seat].coins - before.players[seat].coins,
        score=score,
        score_if_ended=if_ended,
        score_change=change,
        hand={troop.race: troop.hand for troop in after.players[seat].troops()},
        regions=region_changes(before, after, start.markers),
        phase=after.phase,
        ends_turn=not still_on if own_turn else seat not in awaiting(after),
    )


def turn_score_if_ended(state: GameState, seat: int) -> dict[str, Any] | None:
    """What ``seat`` would score if their turn ended now: the engine's auto-pass (conquests stop, tokens in
    hand are placed by the ``auto`` rule, the turn is scored), or None when it is not their turn."""
    if state.phase in (OVER, DEFEND) or state.current != seat:
        return None
    passed = auto_pass(state, seat)
    score: dict[str, Any] | None = passed.last.get("score")
    return score


def region_changes(
    before: GameState, after: GameState, markers: list[dict[str, int | bool]] | None = None
) -> tuple[RegionChange, ...]:
    """The regions whose occupant, tokens or markers differ between the two states (``markers``:
    ``all_markers(before)``, when the caller has it)."""
    out = []
    old_markers = all_markers(before) if markers is None else markers
    new_markers = all_markers(after)
    for i, (old, new) in enumerate(zip(before.regions, after.regions, strict=True)):
        old_marks, new_marks = old_markers[i], new_markers[i]
        if old_marks == new_marks and (
            old is new or (old.owner, old.race, old.tokens) == (new.owner, new.race, new.tokens)
        ):
            continue
        out.append(RegionChange(i, _region(old, old_marks), _region(new, new_marks)))
    return tuple(out)


def _region(r: Any, markers: dict[str, int | bool]) -> dict[str, Any]:
    return {"owner": r.owner, "race": r.race, "tokens": r.tokens} | markers


def board_after(state: GameState, action: Action | Any) -> dict[str, Any]:
    """The board as ``action``'s player will see it after ``action`` (``rules.player_view``), for a step
    that uses no die (a redeployment, a placement of markers): raises :class:`IllegalAction` as ``apply``
    does, and for a step that rolls the die (its board is not known before the roll)."""
    if not isinstance(action, Action):
        action = Action.from_json(action)
    after = apply(state, action)
    if after.rng != state.rng:
        raise IllegalAction("This step uses chance: the map after it is known only once it is taken")
    return player_view(after, action.player)


@dataclass(frozen=True, slots=True)
class Explanation:
    """Whether an action is offered now and, if not, why (the rules' own words: ``apply``'s refusal, which
    reads the one cost function, ``rules.cost``, and the abilities' hooks); for a conquest, what the region
    costs and why (``cost``); for an action offered, its :class:`Preview`."""

    action: Action
    offered: bool
    reason: str | None
    cost: ConquestCost | None
    preview: Preview | None

    def to_json(self) -> dict[str, Any]:
        cost = None
        if self.cost is not None:
            cost = {
                "total": self.cost.total,
                "parts": [{"label": label, "tokens": tokens} for label, tokens in self.cost.parts],
                "words": str(self.cost),
                "refusal": self.cost.refusal,
            }
        return {
            "action": self.action.to_json(),
            "offered": self.offered,
            "reason": self.reason,
            "cost": cost,
            "preview": self.preview.to_json() if self.preview is not None else None,
        }


def explain(state: GameState, action: Action | Any) -> Explanation:
    """Why ``action`` is offered now or not (raises :class:`IllegalAction` only for an action that is not
    even well formed). A described choice (a ``redeploy`` distribution…) is offered when ``apply`` takes it.
    """
    if not isinstance(action, Action):
        action = Action.from_json(action)
    else:
        action.check()
    seat = action.player
    cost = _conquest_cost(state, action)
    described = is_described(action.type)
    if described and action.count is not None:
        raise IllegalAction(f"'{action.type}' is a choice to make: ask about your distribution")
    offered = described or action in legal_actions(state, seat)
    try:
        ahead = preview(state, action) if 0 <= seat < len(state.players) else None
    except IllegalAction as refusal:
        return Explanation(action, False, str(refusal), cost, None)
    if ahead is None:
        return Explanation(action, False, f"There is no player {seat} in this game", cost, None)
    if not offered:
        # ``apply`` takes it but ``legal_actions`` does not list it: a conquest the die must help with is
        # offered as the final conquest (rulebook, "Final Conquest Attempt").
        offer = [a for a in legal_actions(state, seat) if a.region == action.region and a.region is not None]
        also = f" (offered: {', '.join(a.type.replace('_', ' ') for a in offer)})" if offer else ""
        return Explanation(action, False, f"This step is not offered now{also}", cost, None)
    return Explanation(action, True, None, cost, ahead)


def _conquest_cost(state: GameState, action: Action) -> ConquestCost | None:
    """What conquering the action's region costs the troop it names (rulebook, "Conquering a Region"), for
    a conquering step on a region of the board; None otherwise."""
    kind = ACTION_KINDS.get(action.type)
    if kind is None or not kind.conquers or action.region is None or not 0 <= action.player < len(state.players):
        return None
    if not 0 <= action.region < len(state.regions):
        return None
    try:
        troop = acting_troop(state, action.player, action.troop)
    except IllegalAction:
        return None
    return conquest_breakdown(state, action.player, troop, action.region)
