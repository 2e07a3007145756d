"""Conquest (rulebook, "Conquering Regions", "Enemy Losses & Withdrawals", "Final Conquest Attempt").

Whether a region may be conquered and what it costs is :mod:`rules.cost`; this carries conquests out.
"""

from __future__ import annotations

from . import rng
from .abilities import RACES, hooks_of
from .actions import ACTIVE, IllegalAction
from .components import DIE_FACES, MAX_DIE_SHORTFALL
from .cost import ConquestCheck, conquest_candidates, conquest_cost, conquest_refusal
from .decline import vanish_if_gone
from .regions import vacate
from .state import CONQUER, LOST_TRIBE, PICK, REDEPLOY, START, GameState, Troop
from .troops import acting_troop, conquering_declined

__all__ = [
    "abandon",
    "conquer",
    "conquest_candidates",
    "conquest_cost",
    "conquest_refusal",
    "end_conquests",
    "final_conquest",
    "occupy",
    "prepare",
    "ready_troops",
    "roll_die",
]


def roll_die(state: GameState) -> int:
    """The reinforcement die: 0, 0, 0, 1, 2, 3 (components.md)."""
    state.rng, face = rng.below(state.rng, len(DIE_FACES))
    return DIE_FACES[face]


def check_may_conquer(state: GameState, seat: int, troop: Troop, kind: str) -> None:
    """Refuse a conquest outside the conquest steps of the player's own turn."""
    if kind == ACTIVE:
        if state.phase not in (START, CONQUER):
            raise IllegalAction("Your conquests for this turn are over")
        return
    if state.phase not in (PICK, START, CONQUER):
        raise IllegalAction("Your conquests for this turn are over")
    refusal = RACES[troop.race].declined_refusal(state, seat, troop)
    if refusal:
        raise IllegalAction(refusal)


def ready_tokens(state: GameState, seat: int, troop: Troop) -> None:
    """Rulebook, "Ready your Troops": leave one token per region, take the others in hand (``troop`` is
    the editable copy)."""
    for i in state.regions_of(seat, troop.race):
        if state.regions[i].tokens > 1:
            r = state.edit_region(i)
            troop.hand += r.tokens - 1
            r.tokens = 1


def ready_troops(state: GameState, seat: int) -> None:
    """Ready the Active race, once a turn.

    Done lazily, at the first step of the turn's conquests, so that a player who does nothing (or is
    auto-passed) keeps the board as it stood.
    """
    if state.t.readied:
        return
    t = state.edit_turn()
    t.readied = True
    troop = state.edit_player(seat).active
    assert troop is not None
    ready_tokens(state, seat, troop)
    for ability in hooks_of(troop).on_ready:
        ability.on_ready(state, seat, troop)
    if state.phase == START:
        state.phase = CONQUER


def prepare(state: GameState, seat: int, kind: str) -> Troop:
    """Ready the acting troop for a conquering step and return the editable copy of it.

    A step of the Active race ends the In Decline race's moment (rulings: it conquers "before any conquest
    of the Active race").
    """
    if kind == ACTIVE and state.players[seat].active is not None and state.phase in (START, CONQUER):
        # The Active race in its conquests (most steps): acting_troop and check_may_conquer, asked inline.
        if not state.t.readied:
            ready_troops(state, seat)
        for declined in state.players[seat].declined:
            if RACES[declined.race].conquers_in_decline:
                RACES[declined.race].end_declined_conquests(state, seat, declined)
        troop = state.edit_player(seat).active
        assert troop is not None
        return troop
    found = acting_troop(state, seat, kind)  # a readable refusal for a troop the player does not have
    check_may_conquer(state, seat, found, kind)
    assert kind != ACTIVE  # refused by one of the two: the Active race in its conquests went above
    troop = state.edit_troop(seat, found.race)
    RACES[troop.race].ready_declined(state, seat, troop)
    if state.phase == START:
        state.phase = CONQUER
    return troop


def attacked(state: GameState, seat: int) -> None:
    """Remember that ``seat``'s Active race was attacked this turn (the Diplomat may not ally with it)."""
    t = state.edit_turn()
    if seat not in t.attacked:
        t.attacked.append(seat)


def remove_occupant(state: GameState, region: int, attacker: int) -> bool:
    """Clear the region before its conquest; return whether it was non-empty.

    Rulebook, "Enemy Losses & Withdrawals": the defender takes the tokens back in hand, one discarded
    (unless its race keeps them all); Mountains stay; the markers go with the region or back to their owner
    (``rules.regions.vacate``).
    """
    r = state.regions[region]
    if not r.tokens:
        return False  # an empty region holds no marker
    owner, race, tokens = r.owner, r.race, r.tokens
    vacate(state, region)
    if race == LOST_TRIBE or owner < 0:
        return True
    assert race is not None
    troop = state.edit_troop(owner, race)
    if not troop.declined and owner != attacker:
        attacked(state, owner)
    keeps_all = not troop.declined and RACES[race].keeps_tokens_when_conquered
    troop.hand += tokens if keeps_all else tokens - 1
    vanish_if_gone(state, owner, troop)
    return True


def record_conquest(state: GameState, seat: int, troop: Troop, region: int, nonempty: bool, kind: str) -> None:
    """Count a conquest of the turn and tell the troop's abilities (``on_conquer``)."""
    if kind == ACTIVE:
        t = state.edit_turn()
        t.conquests += 1
        t.conquered.append(region)
        if nonempty:
            t.nonempty_conquered += 1
    for ability in hooks_of(troop).on_conquer:
        ability.on_conquer(state, seat, troop, region, nonempty)


def occupy(state: GameState, seat: int, troop: Troop, region: int, tokens: int, kind: str) -> None:
    """Conquer ``region``, putting ``tokens`` of the troop's hand there."""
    nonempty = remove_occupant(state, region, seat)
    r = state.edit_region(region)
    r.owner, r.race, r.tokens = seat, troop.race, tokens
    troop.hand -= tokens
    record_conquest(state, seat, troop, region, nonempty, kind)


def _aimed(state: GameState, seat: int, region: int, kind: str, empty_hand: str) -> tuple[Troop, ConquestCheck, int]:
    """The troop that aims at ``region`` (readied), its check and the region's cost, for a conquest or a final
    conquest alike; ``IllegalAction`` when the region may not be conquered, or the hand is empty
    (``empty_hand`` says so)."""
    troop = prepare(state, seat, kind)
    check = ConquestCheck(state, seat, troop)
    refusal = check.refusal(region)
    if refusal:
        raise IllegalAction(refusal)
    if troop.hand < 1:
        raise IllegalAction(empty_hand)
    return troop, check, check.cost(region)


def conquer(state: GameState, seat: int, region: int, kind: str) -> int | None:
    """A conquest paid in tokens (with a die rolled before it, if one waits: ``pending_roll``). Returns
    the die used, if any."""
    troop, check, cost = _aimed(state, seat, region, kind, "You need at least one token in hand to conquer")
    if kind == ACTIVE and check.roll is not None:
        # The die was rolled before the target was named (``pending_roll``, the power's rule): "if you do
        # not have enough tokens left, this is your final conquest attempt for the turn".
        if troop.hand < cost:
            end_conquests(state, seat)
        else:
            occupy(state, seat, troop, region, cost, kind)
        return check.roll[1]
    if troop.hand < cost:
        short = cost - troop.hand
        hint = " (you may try it as your final conquest with the die)" if short <= MAX_DIE_SHORTFALL else ""
        raise IllegalAction(f"Region {region} needs {cost} tokens, you have {troop.hand} in hand{hint}")
    occupy(state, seat, troop, region, cost, kind)
    return None


def final_conquest(state: GameState, seat: int, region: int, kind: str) -> int:
    """Rulebook, "Final Conquest Attempt": target chosen, then the die; conquests end either way."""
    troop, _, cost = _aimed(state, seat, region, kind, "The final conquest needs at least one token in hand")
    short = cost - troop.hand
    if short <= 0:
        raise IllegalAction(f"You can conquer region {region} outright with {cost} tokens; no die needed")
    if short > MAX_DIE_SHORTFALL:
        raise IllegalAction(
            f"Region {region} needs {cost} tokens, you have {troop.hand}: more than 3 short, the die cannot help"
        )
    die = roll_die(state)
    if troop.hand + die >= cost:
        occupy(state, seat, troop, region, troop.hand, kind)
    if kind == ACTIVE:
        end_conquests(state, seat)
    else:
        RACES[troop.race].end_declined_conquests(state, seat, troop)
    return die


def abandon(state: GameState, seat: int, region: int) -> None:
    """Rulebook, "Abandoning a Region": empty it while readying troops, before the first conquest."""
    if state.phase not in (START, CONQUER) or state.t.conquests:
        raise IllegalAction("Regions can be abandoned only while readying troops, before your first conquest")
    player = state.players[seat]
    if player.active is None:
        raise IllegalAction("You have no Active race to withdraw")
    if not 0 <= region < len(state.regions):
        raise IllegalAction(f"There is no region {region}")
    r = state.regions[region]
    if r.owner != seat or r.race != player.active.race:
        raise IllegalAction(f"Region {region} is not held by your {player.active.race}")
    ready_troops(state, seat)
    troop = state.edit_player(seat).active
    assert troop is not None
    troop.hand += state.regions[region].tokens
    vacate(state, region)
    # Not the end of an In Decline race's moment: rulings, it conquers "before any conquest of the Active
    # race", and abandoning is part of readying the troops, not a conquest.


def end_conquests(state: GameState, seat: int) -> None:
    """The conquests are over: redeployment begins (``on_conquests_end``)."""
    state.phase = REDEPLOY
    troop = state.players[seat].active
    if troop is not None:
        hooks = hooks_of(troop).on_conquests_end
        if hooks:
            troop = state.edit_player(seat).active
            assert troop is not None
            for ability in hooks:
                ability.on_conquests_end(state, seat, troop)


def declined_may_conquer(state: GameState, seat: int) -> Troop | None:
    """The In Decline troop that may conquer now (its race's moment), if any."""
    troop = conquering_declined(state, seat)
    if troop is None or state.phase not in (PICK, START, CONQUER):
        return None
    return None if RACES[troop.race].declined_refusal(state, seat, troop) else troop
