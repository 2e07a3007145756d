"""``legal_actions`` asks only the regions that may be conquered (``rules.conquest.conquest_candidates``:
the neighbours of the regions held, Underworld's Caverns, the entry regions of a first conquest…)
instead of every region of the board. On the states of many random games it offers exactly what
asking every region offers, in the same order, and the candidates hold every region
``conquest_refusal`` accepts, for every special power (each one tried on the same holdings).

Size: ``SMALLWORLD_PROPERTY_GAMES`` // 15 games (100 by default), see tests/rules/test_properties.py.
"""

from __future__ import annotations

import dataclasses
import random

from hypothesis import given

from rules import POWERS, Action, GameState, awaiting, conquest_cost, conquest_refusal, legal_actions
from rules.abilities import RACES
from rules.actions import ACTIVE, DECLINED, offer_at, offers_by_region
from rules.conquest import conquest_candidates
from rules.cost import ConquestCheck
from rules.state import CONQUER, PICK, START, Troop
from rules.troops import conquering_declined, hand_for_conquest

from .builder import Builder, slot
from .test_properties import GAMES, _settings, games, play

CONQUEST_TYPES = ("conquer", "final_conquest", "dragon", "convert")


def reference_conquests(state: GameState, seat: int, troop: Troop, kind: str) -> list[Action]:
    """Every region of the board asked, as ``legal_actions`` did before it asked only candidates."""
    hand = hand_for_conquest(state, seat, troop)
    if hand < 1:
        return []
    berserk = kind == ACTIVE and troop.power == "Berserk"
    die = slot(state, "Berserk", turn=True).die if kind == ACTIVE else None
    out = []
    for region in range(len(state.regions)):
        if conquest_refusal(state, seat, troop, region):
            continue
        cost = conquest_cost(state, seat, troop, region)
        if die is not None or hand >= cost:
            out.append(Action("conquer", seat, region=region, troop=kind))
        elif not berserk and cost - hand <= 3:
            out.append(Action("final_conquest", seat, region=region, troop=kind))
    return out


def reference_offers(state: GameState, seat: int) -> list[Action]:
    """The conquests, Dragon attacks and conversions of ``seat``, every region asked."""
    phase, t = state.phase, state.t
    out: list[Action] = []
    ghouls = conquering_declined(state, seat)
    ghouls_done = slot(state, "Ghouls", turn=True).done
    if ghouls is not None and phase in (PICK, START, CONQUER) and not ghouls_done and not t.conquests:
        out += reference_conquests(state, seat, ghouls, DECLINED)
    troop = state.players[seat].active
    if troop is None or phase not in (START, CONQUER):
        return out
    out += reference_conquests(state, seat, troop, ACTIVE)
    # Rulebook, "Berserk": the die is rolled before each conquest and that conquest uses it; a conversion is
    # a conquest (components.md, rulings), so none is offered while a roll waits for its conquest.
    rolled = troop.power == "Berserk" and slot(state, "Berserk", turn=True).die is not None
    if troop.race == "Sorcerers" and not rolled:
        sorcerers = RACES["Sorcerers"]
        out += [
            Action("convert", seat, region=i)
            for i in range(len(state.regions))
            if state.regions[i].owner not in (-1, seat) and sorcerers.refusal(state, seat, troop, i) is None
        ]
    dragon_used = slot(state, "Dragon Master", turn=True).used
    if troop.power == "Dragon Master" and not dragon_used and hand_for_conquest(state, seat, troop) >= 1:
        dragon = POWERS["Dragon Master"]
        out += [
            Action("dragon", seat, region=i)
            for i in range(len(state.regions))
            if dragon.refusal(state, seat, troop, i) is None
        ]
    return out


def check_candidates(state: GameState, seat: int, troop: Troop) -> None:
    held = state.regions_of(seat, troop.race)
    candidates = set(conquest_candidates(state, seat, troop, held))
    refusals = [conquest_refusal(state, seat, troop, i) for i in range(len(state.regions))]
    accepted = {i for i, refusal in enumerate(refusals) if refusal is None}
    assert accepted <= candidates, (troop, sorted(accepted - candidates))
    # What listing the candidates left open is answered from the listing: the same answer, message included.
    everywhere = range(len(state.regions))
    assert ConquestCheck(state, seat, troop, held).allowed(everywhere) == sorted(accepted), troop  # not listed
    listed = ConquestCheck(state, seat, troop, held)
    listed.candidates()
    assert [listed.candidate_refusal(i) for i in everywhere] == refusals, troop
    # Which regions may be conquered, asked of every region at once (held, Seas, out of reach included).
    assert listed.allowed(everywhere) == sorted(accepted), troop


def check_offers(state: GameState, rnd: random.Random) -> None:
    seat = min(awaiting(state))
    offered = [a for a in legal_actions(state, seat) if a.type in CONQUEST_TYPES]
    assert offered == reference_offers(state, seat)
    # regions_of while reading (legal_actions) answers as a scan of the regions does.
    with state.reading():
        for s, p in enumerate(state.players):
            for troop in p.troops():
                assert state.regions_of(s, troop.race) == [
                    i for i, r in enumerate(state.regions) if r.owner == s and r.race == troop.race
                ]
    for s, p in enumerate(state.players):
        for troop in p.troops():
            check_candidates(state, s, troop)
    troop = state.players[seat].active
    if troop is not None and rnd.random() < 0.3:
        # Every power on these holdings (Flying, Underworld, Seafaring… whatever this game dealt).
        for power in POWERS:
            # (hooks=None: a troop keeps the Hooks of its race and power once asked, those of the one replaced)
            check_candidates(state, seat, dataclasses.replace(troop, power=power, hooks=None))


@_settings(GAMES // 15)
@given(games())
def test_legal_actions_offers_what_asking_every_region_offers(game) -> None:
    play(game, check_offers)


def test_offers_by_region_are_the_offers_at_each_region() -> None:
    for kind in ("conquer", "abandon"):
        for troop in (ACTIVE, DECLINED):
            by_region = offers_by_region(kind, 1, troop)
            for region in (0, 7, 3, 7):
                assert by_region[region] is offer_at(kind, 1, region, troop)
                assert by_region[region] == Action(kind, 1, region=region, troop=troop)


def test_every_race_and_power_first_conquest_candidates_hold_the_accepted_regions() -> None:
    for board in ("2-players", "5-players"):
        state = Builder(2, map_name=board).build()
        for race in RACES:
            for power in POWERS:
                check_candidates(state, 0, Troop(race, power, hand=10))
