"""Steps told in words, for the history, the feedback after a step and the mails.

:func:`tell` turns one applied step (the states before and after it, and its action) into a short plain-text
sentence: "Ann conquered region 7 (Forest) from Bob's Humans (2 tokens: 1 lost, 1 back in hand) with 4
tokens". The base game's steps are told here (:data:`TELLERS`, by action type); a race's or power's own
action kinds by its ``tell``, and what an ability added to a base step by its ``note`` (in brackets after
the sentence).

Only public facts are told: what was done, where, the die, the coins lying on combos. Never a player's
coins; a turn's score only to the player who made it (``viewer``), as :func:`rules.player_view` shows it,
or to everyone once the game is over (``reveal``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .abilities import ACTION_OWNERS, RACES, Ability, hooked
from .actions import DECLINED, Action
from .state import DEFEND, LOST_TRIBE, GameState, Troop


@dataclass(frozen=True, slots=True)
class Step:
    """One applied step: the states ``before`` and ``after`` it, its ``action`` (None for an auto-pass),
    the players' ``names`` by seat, the seat that reads the sentence (``viewer``; None: anyone) and whether
    everything is public (``reveal``: the game is over)."""

    before: GameState
    after: GameState
    action: Action | None
    names: Sequence[str] = ()
    viewer: int | None = None
    reveal: bool = False

    @property
    def kind(self) -> str:
        """The action type, or ``"auto_pass"``."""
        return str(self.after.last.get("kind") or (self.action.type if self.action else ""))

    @property
    def player(self) -> int:
        found = self.after.last.get("player")
        if found is None and self.action is not None:
            found = self.action.player
        return int(found) if found is not None else -1

    @property
    def who(self) -> str:
        return self.name(self.player)

    @property
    def die(self) -> int | None:
        return self.after.last.get("die")

    @property
    def region(self) -> int | None:
        return self.action.region if self.action is not None else None

    def name(self, seat: int | None) -> str:
        if seat is None or seat < 0:
            return "The game"
        return self.names[seat] if seat < len(self.names) else f"Player {seat + 1}"

    def where(self, region: int | None) -> str:
        """``region`` in words: "region 7 (Forest)"."""
        return region_name(self.after, region) if region is not None else "a region"

    @property
    def score(self) -> Mapping[str, Any] | None:
        """The step's score, if the reader may see it (a turn's score would tell the coins)."""
        score = self.after.last.get("score")
        if score is None or not (self.reveal or self.after.over or self.viewer == self.player):
            return None
        return score

    def acting_troop(self) -> Troop | None:
        """The troop that took the step: In Decline for ``troop: "declined"``, else the Active one (before
        the step, or after it for a pick)."""
        player = self.player
        if player < 0:
            return None
        if self.action is not None and self.action.troop == DECLINED:
            for troop in self.before.players[player].declined:
                if RACES[troop.race].conquers_in_decline:
                    return troop
        return self.before.players[player].active or self.after.players[player].active


def tell(
    before: GameState,
    after: GameState,
    action: Action | dict[str, Any] | None = None,
    names: Sequence[str] = (),
    viewer: int | None = None,
    reveal: bool = False,
) -> str:
    """One applied step in a sentence (see the module's docstring). ``action``: the step's action (an
    :class:`Action` or its JSON), None for an auto-pass."""
    if isinstance(action, dict):
        action = Action.from_json(action)
    return tell_step(Step(before, after, action, names, viewer, reveal))


def tell_step(step: Step) -> str:
    kind = step.kind
    teller = TELLERS.get(kind)
    if teller is not None:
        text = teller(step)
    elif kind in ACTION_OWNERS:
        text = ACTION_OWNERS[kind].tell(step)
    else:
        text = f"{step.who}: {kind.replace('_', ' ')}"
    troop = step.acting_troop() if kind in TELLERS else None
    if troop is not None:
        notes = [note for a in _noting(troop) if (note := a.note(step))]
        if notes:
            text += f" ({'; '.join(notes)})"
    return text


def _noting(troop: Troop) -> tuple[Ability, ...]:
    if not troop.declined:
        return hooked(troop, "note")
    race = RACES[troop.race]
    return (race,) if type(race).note is not Ability.note else ()


# -- words for the pieces -----------------------------------------------------------------------------------
def region_name(state: GameState, region: int) -> str:
    """A region by its number and terrain: "region 7 (Forest)", "region 0 (Sea)"."""
    if not 0 <= region < len(state.board.regions):
        return f"region {region}"
    return f"region {region} ({state.board.regions[region].terrain.capitalize()})"


def plural(count: int, word: str, words: str | None = None) -> str:
    """ "1 token", "3 tokens"."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def score_words(score: Mapping[str, Any]) -> str:
    """``rules.turn_score`` output as "5 regions + 2 (Orcs) = 7 coins"."""
    parts = [plural(score["regions"], "region")]
    parts += [f"{coins} ({name})" for name, coins in score.get("bonus", {}).items()]
    return f"{' + '.join(parts)} = {plural(score['total'], 'coin')}"


def taken_from(step: Step, region: int) -> str:
    """Who lost ``region`` in the step, for a conquest's sentence: " from Bob's Humans (2 tokens: 1 lost, 1
    back in hand)", " from a Lost Tribe", or "" for an empty region."""
    r = step.before.regions[region]
    if not r.tokens or r.race is None:
        return ""
    if r.race == LOST_TRIBE:
        return " from a Lost Tribe"
    troop = step.before.players[r.owner].troop_of(r.race)
    declined = troop is not None and troop.declined
    keeps = not declined and RACES[r.race].keeps_tokens_when_conquered
    lost = 0 if keeps else 1
    owner = "their own" if r.owner == step.player else f"{step.name(r.owner)}'s"
    whose = f"{owner} {'In Decline ' if declined else ''}{r.race}"
    if r.tokens == 1:
        fate = "kept in hand" if keeps else "lost"
        return f" from {whose} (1 token: {fate})"
    back = r.tokens - lost
    return f" from {whose} ({plural(r.tokens, 'token')}: {lost} lost, {back} back in hand)"


def placements(tokens: Sequence[tuple[int, int]], step: Step) -> str:
    """A distribution as "3 on Hill 4, 1 on Forest 12", by region number."""
    return ", ".join(f"{count} on {step.where(region)}" for region, count in sorted(tokens))


def _scored(step: Step) -> str:
    score = step.score
    return f", scoring {score_words(score)}" if score else ""


def _with_declined(step: Step) -> str:
    troop = step.acting_troop()
    if step.action is not None and step.action.troop == DECLINED and troop is not None:
        return f" with the In Decline {troop.race}"
    return ""


# -- the base game's steps ----------------------------------------------------------------------------------
def _pick(step: Step) -> str:
    combo = step.action.combo if step.action is not None and step.action.combo is not None else 0
    troop = step.after.players[step.player].active
    picked = f": the {troop.race} with {troop.power}" if troop else ""
    paid = [f"leaving {plural(combo, 'coin')} on the combos above"] if combo else []
    lying = step.before.combos[combo].coins if combo < len(step.before.combos) else 0
    took = [f"taking the {plural(lying, 'coin')} lying on it"] if lying else []
    coins = f", {' and '.join(paid + took)}" if paid or took else ""
    hand = f"; {plural(troop.hand, 'token')} in hand" if troop else ""
    return f"{step.who} picked combo {combo + 1}{picked}{coins}{hand}"


def _decline(step: Step) -> str:
    troop = step.before.players[step.player].active
    race = f"the {troop.race}" if troop else "their race"
    return f"{step.who} put {race} In Decline{_scored(step)}"


def _abandon(step: Step) -> str:
    return f"{step.who} abandoned {step.where(step.region)}"


def _conquer(step: Step) -> str:
    region = step.region
    assert region is not None
    r = step.after.regions[region]
    won = r.owner == step.player and r.race is not None and step.before.regions[region] != r
    rolled = step.die
    if rolled is not None and not won:
        return (
            f"{step.who} tried {step.where(region)}{_with_declined(step)} with the die rolled first ({rolled}) and "
            "fell short: the conquests are over"
        )
    die = f", with the die rolled first ({rolled})" if rolled is not None else ""
    tokens = f" with {plural(r.tokens, 'token')}" if won else ""
    return f"{step.who} conquered {step.where(region)}{_with_declined(step)}{taken_from(step, region)}{tokens}{die}"


def _final_conquest(step: Step) -> str:
    region = step.region
    assert region is not None
    r = step.after.regions[region]
    won = r.owner == step.player and step.before.regions[region] != r
    start = f"{step.who} rolled the die for {step.where(region)}{_with_declined(step)}: {step.die}"
    if won:
        return f"{start}, and conquered it{taken_from(step, region)} with {plural(r.tokens, 'token')}"
    return f"{start}, not enough"


def _end_conquest(step: Step) -> str:
    return f"{step.who} ended the conquests"


def _redeploy(step: Step) -> str:
    placed = placements(step.action.tokens, step) if step.action is not None else ""
    return f"{step.who} redeployed{_with_declined(step)}" + (f": {placed}" if placed else "")


def _end_turn(step: Step) -> str:
    if step.before.phase == DEFEND:
        return f"{step.who} finished redeploying after the attacks"
    declined = " and went In Decline" if step.action is not None and step.action.decline else ""
    return f"{step.who} ended the turn{declined}{_scored(step)}"


def _auto_pass(step: Step) -> str:
    if step.before.phase == DEFEND:
        return f"{step.who}'s redeployment was completed automatically"
    return f"{step.who}'s turn was completed automatically{_scored(step)}"


#: The base game's steps, by action type (and ``auto_pass``); the abilities' kinds are told by their ``tell``.
TELLERS: dict[str, Callable[[Step], str]] = {
    "pick": _pick,
    "decline": _decline,
    "abandon": _abandon,
    "conquer": _conquer,
    "final_conquest": _final_conquest,
    "end_conquest": _end_conquest,
    "redeploy": _redeploy,
    "end_turn": _end_turn,
    "auto_pass": _auto_pass,
}
