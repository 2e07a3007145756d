"""Steps and turns told in words, for the history, the feedback after a step and the mails.

:func:`tell` turns one applied step (the states before and after it, and its action) into a short plain-text
sentence: "Ann conquered Forest 7 from Bob's Humans (2 tokens: 1 lost, 1 back in hand) with 4 tokens".
:func:`tell_turn` tells the steps one player took in a row (their turn) in one sentence: "Bob — Flying Orcs —
conquered Forest 7 from your Humans (2 tokens: 1 lost, 1 back in your hand), Hill 12 (empty), then
redeployed."

The base game's steps are told here (:data:`TELLERS`, by action type); a race's or power's own action kinds by
its ``tell``, and what an ability added to a base step by its ``note`` (in brackets after the step). Each
teller gives what the player did, without the player's name (a predicate: "conquered Forest 7 …"); a
:class:`Phrase` names its verb, so that a turn's steps of the same verb read as one ("conquered Forest 7,
Hill 12").

Only public facts are told: what was done, where, the die, the coins lying on combos. Never a player's
coins; a turn's score only to the player who made it (``viewer``), as :func:`rules.player_view` shows it,
or to everyone once the game is over (``reveal``): the rulebook keeps Victory coins "hidden from other
players at all times" ("Scoring Victory Coins"), and the scores of the turns would add up to them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .abilities import ACTION_OWNERS, RACES, Ability, hooked, shown
from .actions import DECLINED, Action
from .state import DEFEND, LOST_TRIBE, GameState, Troop


@dataclass(frozen=True, slots=True)
class Phrase:
    """What a step did, as a verb and its object ("conquered", "Forest 7 (empty)"): consecutive steps with
    the same verb are told as one in a turn's sentence ("conquered Forest 7, Hill 12")."""

    verb: str
    what: str = ""

    def __str__(self) -> str:
        return f"{self.verb} {self.what}" if self.what else self.verb


#: What a teller gives: a predicate (a :class:`Phrase` or plain words), or "" when a turn's sentence leaves
#: the step out (``Step.brief``).
Told = Phrase | str


@dataclass(frozen=True, slots=True)
class Step:
    """One applied step: the states ``before`` and ``after`` it, its ``action`` (None for an auto-pass),
    the players' ``names`` by seat, the seat that reads the sentence (``viewer``; None: anyone), whether
    everything is public (``reveal``: the game is over), whether it is told as part of a turn's sentence
    (``brief``: the details that sentence leaves out are left out) and, for an auto-pass, why (``reason``:
    "the deadline passed")."""

    before: GameState
    after: GameState
    action: Action | None
    names: Sequence[str] = ()
    viewer: int | None = None
    reveal: bool = False
    brief: bool = False
    reason: str = ""

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
        """The player taking the step, by name (the reader's own steps too)."""
        seat = self.player
        if seat < 0:
            return "The game"
        return self.names[seat] if seat < len(self.names) else f"Player {seat + 1}"

    @property
    def die(self) -> int | None:
        return self.after.last.get("die")

    @property
    def region(self) -> int | None:
        return self.action.region if self.action is not None else None

    def name(self, seat: int | None) -> str:
        """A seat by its player's name; "you" for the reader."""
        if seat is None or seat < 0:
            return "The game"
        if seat == self.viewer:
            return "you"
        return self.names[seat] if seat < len(self.names) else f"Player {seat + 1}"

    def whose(self, seat: int | None) -> str:
        """A seat's possessive: "Bob's", "your" (the reader), "their own" (the player taking the step)."""
        if seat is not None and seat == self.player and seat >= 0:
            return "their own"
        if seat is not None and seat == self.viewer:
            return "your"
        return f"{self.name(seat)}'s"

    def conquered_into(self, marked: Callable[[GameState], frozenset[int]]) -> bool:
        """Whether this step conquered (``conquer``, ``final_conquest``) a region that ``marked`` (a state's
        regions bearing some marker) holds after it and not before: the conquest put a marker there, for an
        ability's :meth:`~rules.abilities.Ability.note` (a Troll's Lair, a Hole-in-the-Ground)."""
        region = self.region
        if region is None or self.kind not in ("conquer", "final_conquest"):
            return False
        return region in marked(self.after) and region not in marked(self.before)

    def where(self, region: int | None) -> str:
        """``region`` in words: "Forest 7"."""
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
    reason: str = "",
) -> str:
    """One applied step in a sentence (see the module's docstring). ``action``: the step's action (an
    :class:`Action` or its JSON), None for an auto-pass; ``reason``: why an auto-pass was made, in words."""
    if isinstance(action, dict):
        action = Action.from_json(action)
    return tell_step(Step(before, after, action, names, viewer, reveal, reason=reason))


def tell_step(step: Step) -> str:
    """The step as a sentence: its player's name and what they did."""
    told = str(predicate(step))
    if told.startswith("'"):  # "'s turn was completed automatically"
        return f"{step.who}{told}"
    return f"{step.who} {told}" if told else step.who


def predicate(step: Step) -> Told:
    """What the step did, without the player's name ("" when a turn's sentence leaves it out), with what
    the troop's abilities added to a base step (their ``note``) in brackets."""
    kind = step.kind
    teller = TELLERS.get(kind)
    if teller is not None:
        told = teller(step)
    elif kind in ACTION_OWNERS:
        told = ACTION_OWNERS[kind].tell(step)
    else:
        told = kind.replace("_", " ")
    troop = step.acting_troop() if kind in TELLERS else None
    if troop is not None:
        notes = [note for a in _noting(troop) if (note := a.note(step))]
        if notes and not told:  # a step a turn's sentence leaves out, but not what an ability added to it
            return "; ".join(notes)
        if notes:
            text = told.what if isinstance(told, Phrase) else told
            # One bracket, not two: "Forest 7 (empty; a Troll's Lair built there)".
            text = f"{text[:-1]}; {'; '.join(notes)})" if text.endswith(")") else f"{text} ({'; '.join(notes)})"
            told = Phrase(told.verb, text) if isinstance(told, Phrase) else text
    return told


def _noting(troop: Troop) -> tuple[Ability, ...]:
    if not troop.declined:
        return hooked(troop, "note")
    race = RACES[troop.race]
    return (race,) if type(race).note is not Ability.note else ()


# -- a turn -------------------------------------------------------------------------------------------------
def tell_turn(steps: Sequence[Step]) -> str:
    """The steps one player took in a row (their turn, or their redeployment after an attack), in order, in
    one sentence: "Bob — Flying Orcs — conquered Forest 7 from your Humans (2 tokens: 1 lost, 1 back in your
    hand), Hill 12 (empty), then redeployed." The race is the one the player played the turn with; the
    score is told as :attr:`Step.score` allows.
    """
    if not steps:
        return ""
    steps = [replace(s, brief=True) for s in steps]
    first, last = steps[0], steps[-1]
    who = first.who[:1].upper() + first.who[1:]
    seat = first.player
    troop = None
    if seat >= 0 and first.before.phase != DEFEND:
        troop = first.before.players[seat].active or last.after.players[seat].active
    header = f"{who} — {troop_name(troop)} — " if troop is not None else f"{who} "
    clauses: list[Told] = []
    for step in steps:
        told = predicate(step)
        if not told:
            continue
        previous = clauses[-1] if clauses else None
        if previous is not None and str(previous) == str(told):
            continue  # redeployed twice: once in words
        if isinstance(told, Phrase) and isinstance(previous, Phrase) and previous.verb == told.verb:
            clauses[-1] = Phrase(told.verb, f"{previous.what}, {told.what}")
        else:
            clauses.append(told)
    words = [str(c) for c in clauses] or ["did nothing"]
    text = ", ".join(words[:-1]) + (", then " if len(words) > 1 else "") + words[-1]
    score = next((s.score for s in reversed(steps) if s.score), None)
    if score:
        text += f"; scored {score_words(score)}"
    return header + text + "."


def combo_name(race: str, power: str) -> str:
    """A combo as every page, mail, story, chat line and API text names it (issue 35: one form), the power
    before the race as the rulebook's examples read: "Hill Tritons", "Flying Orcs".

    A race or power of the host's design reads as its host named it (``shown``).

    >>> combo_name("Tritons", "Hill")
    'Hill Tritons'
    """
    return f"{shown(power)} {shown(race)}"


def troop_name(troop: Troop) -> str:
    """A troop as its combo reads: "Flying Orcs", "In Decline Ghouls"."""
    if troop.declined:
        return f"In Decline {shown(troop.race)}"
    return combo_name(troop.race, troop.power)


# -- words for the pieces -----------------------------------------------------------------------------------
def region_name(state: GameState, region: int) -> str:
    """A region by its terrain and number, as the board reads: "Forest 7", "Sea 0"."""
    if not 0 <= region < len(state.board.regions):
        return f"region {region}"
    return f"{state.board.regions[region].terrain.capitalize()} {region}"


def plural(count: int, word: str, words: str | None = None) -> str:
    """ "1 token", "3 tokens"."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def score_words(score: Mapping[str, Any]) -> str:
    """``rules.turn_score`` output as "5 regions + 2 (Orcs) = 7 coins"."""
    parts = [plural(score["regions"], "region")]
    parts += [f"{coins} ({shown(name)})" for name, coins in score.get("bonus", {}).items()]
    return f"{' + '.join(parts)} = {plural(score['total'], 'coin')}"


def taken_from(step: Step, region: int) -> str:
    """Who lost ``region`` in the step, for a conquest's sentence: " from Bob's Humans (2 tokens: 1 lost, 1
    back in hand)", " from your Humans (…back in your hand)", " from a Lost Tribe", or, for an empty region,
    "" (" (empty)" in a turn's sentence)."""
    r = step.before.regions[region]
    if not r.tokens or r.race is None:
        return " (empty)" if step.brief else ""
    if r.race == LOST_TRIBE:
        return " from a Lost Tribe"
    troop = step.before.players[r.owner].troop_of(r.race)
    declined = troop is not None and troop.declined
    keeps = not declined and RACES[r.race].keeps_tokens_when_conquered
    lost = 0 if keeps else 1
    whose = f"{step.whose(r.owner)} {'In Decline ' if declined else ''}{shown(r.race)}"
    hand = "your hand" if r.owner == step.viewer else "hand"
    if r.tokens == 1:
        fate = f"back in {hand}" if keeps else "lost"
        return f" from {whose} (1 token: {fate})"
    back = r.tokens - lost
    if not lost:
        return f" from {whose} ({plural(r.tokens, 'token')}: all back in {hand})"
    return f" from {whose} ({plural(r.tokens, 'token')}: {lost} lost, {back} back in {hand})"


def placements(tokens: Sequence[tuple[int, int]], step: Step) -> str:
    """A distribution as "3 on Hill 4, 1 on Forest 12", by region number."""
    return ", ".join(f"{count} on {step.where(region)}" for region, count in sorted(tokens))


def _scored(step: Step) -> str:
    score = step.score
    return f", scoring {score_words(score)}" if score and not step.brief else ""


def _with_declined(step: Step) -> str:
    troop = step.acting_troop()
    if step.action is not None and step.action.troop == DECLINED and troop is not None:
        return f" with the In Decline {shown(troop.race)}"
    return ""


# -- the base game's steps ----------------------------------------------------------------------------------
def _pick(step: Step) -> Told:
    combo = step.action.combo if step.action is not None and step.action.combo is not None else 0
    troop = step.after.players[step.player].active
    picked = f": the {combo_name(troop.race, troop.power)}" if troop and not step.brief else ""
    paid = [f"leaving {plural(combo, 'coin')} on the combos above"] if combo else []
    lying = step.before.combos[combo].coins if combo < len(step.before.combos) else 0
    took = [f"taking the {plural(lying, 'coin')} lying on it"] if lying else []
    coins = f", {' and '.join(paid + took)}" if paid or took else ""
    hand = f"; {plural(troop.hand, 'token')} in hand" if troop else ""
    if step.brief:
        return f"picked combo {combo + 1}{coins} ({plural(troop.hand, 'token')} in hand)" if troop else "picked"
    return f"picked combo {combo + 1}{picked}{coins}{hand}"


def _decline(step: Step) -> Told:
    troop = step.before.players[step.player].active
    race = f"the {shown(troop.race)}" if troop else "their race"
    return f"put {race} In Decline{_scored(step)}"


def _abandon(step: Step) -> Told:
    return Phrase("abandoned", step.where(step.region))


def _conquer(step: Step) -> Told:
    region = step.region
    assert region is not None
    r = step.after.regions[region]
    won = r.owner == step.player and r.race is not None and step.before.regions[region] != r
    rolled = step.die
    if rolled is not None and not won:
        return (
            f"tried {step.where(region)}{_with_declined(step)} with the die rolled first ({rolled}) and fell short: "
            "the conquests are over"
        )
    die = f", with the die rolled first ({rolled})" if rolled is not None and not step.brief else ""
    tokens = f" with {plural(r.tokens, 'token')}" if won and not step.brief else ""
    return Phrase("conquered", f"{step.where(region)}{_with_declined(step)}{taken_from(step, region)}{tokens}{die}")


def _final_conquest(step: Step) -> Told:
    region = step.region
    assert region is not None
    r = step.after.regions[region]
    won = r.owner == step.player and step.before.regions[region] != r
    start = f"rolled the die for {step.where(region)}{_with_declined(step)}: {step.die}"
    if won:
        tokens = "" if step.brief else f" with {plural(r.tokens, 'token')}"
        return f"{start}, and conquered it{taken_from(step, region)}{tokens}"
    return f"{start}, not enough"


def _end_conquest(step: Step) -> Told:
    return "" if step.brief else "ended the conquests"


def _redeploy(step: Step) -> Told:
    placed = placements(step.action.tokens, step) if step.action is not None and not step.brief else ""
    return f"redeployed{_with_declined(step)}" + (f": {placed}" if placed else "")


def _end_turn(step: Step) -> Told:
    if step.before.phase == DEFEND:
        return "finished redeploying after the attacks"
    declined = step.action is not None and step.action.decline
    if step.brief:
        return "went In Decline at the end of the turn" if declined else ""
    return f"ended the turn{' and went In Decline' if declined else ''}{_scored(step)}"


def _auto_pass(step: Step) -> Told:
    why = f" ({step.reason})" if step.reason else ""
    if step.before.phase == DEFEND:
        if step.brief:
            return f"had the redeployment completed automatically{why}"
        return f"'s redeployment was completed automatically{why}"
    if step.brief:
        return f"had the turn completed automatically{why}"
    return f"'s turn was completed automatically{_scored(step)}{why}"


#: The base game's steps, by action type (and ``auto_pass``); the abilities' kinds are told by their ``tell``.
TELLERS: dict[str, Callable[[Step], Told]] = {
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
