"""Sorcerers: once per turn per opponent, replace a lone Active enemy token (rulebook, "Sorcerers"; rulings).

The token must be alone in its region (a Troll's Lair, a Fortress or a Mountain does not protect it; a
marker that counts as a token, an Encampment, does), Active, in a region adjacent to a Sorcerer region and
not immune. The new Sorcerer comes from the box, so it works with an empty hand but not with an empty box;
the replaced token (an Elf too) is lost.

Rulings: a conversion is a conquest, so a power that widens where the race may conquer widens it too:
Underworld Sorcerers convert in any Cavern while they hold a Cavern, Flying Sorcerers in any land region
(``ConquestCheck.in_reach``); the Sorcerers must hold a region. A conversion counts as a conquest of a
non-empty region (Pillaging counts it, the In Decline Ghouls' moment ends, the victim counts as attacked for
the Diplomat).

Their state, for the turn only: ``"Sorcerers": {"converted": [1]}``, the seats converted this turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..abilities import Race, Slot, register, shown
from ..actions import ACTIVE, Action, ActionKind, IllegalAction, Verb, offer
from ..conquest import attacked, prepare, record_conquest
from ..cost import ConquestCheck
from ..regions import markers_at, vacate
from ..schema import schema_1_turn_field
from ..state import CONQUER, START, GameState, Troop
from ..telling import Phrase, Step, Told
from ..troops import box_left


@dataclass(frozen=True, slots=True)
class Conversions(Slot):
    #: The seats whose token was converted this turn (once per turn per opponent).
    converted: frozenset[int] = frozenset()


class Sorcerers(Race):
    name = "Sorcerers"
    summary = "Once per turn per opponent, replace a lone Active enemy token with one of theirs."
    description = (
        "Once per turn per opponent, your Sorcerers can conquer a Region by substituting one of your opponent's "
        "Active tokens with one of your own taken from the storage tray. If there are no more tokens in the "
        "storage tray, then you cannot conquer a new Region in this way. The token your Sorcerers replaces must "
        "be the only race token in its Region (A single Troll token with its Troll's Lair is considered alone "
        "for this purpose; likewise for a Race token in a Fortress or on a Mountain, these markers provide no "
        "protection to a lone Race token) and that Region must be adjacent to one of your Sorcerers'. Place "
        "the substituted opponent's Race token back into the storage tray. If an Elf is converted by a "
        "Sorcerer, the Elf does lose his token."
    )
    actions = (ActionKind("convert", ("region",), "Convert the lone token on", conquers=True),)
    verbs = (Verb("convert", "convert", "region", "convert the lone token on a region"),)
    turn_slot = Conversions
    schema_1_fields = frozenset({"converted"})

    def refusal(self, state: GameState, seat: int, troop: Troop, region: int) -> str | None:
        if state.phase not in (START, CONQUER):
            return "Sorcerers convert during your conquests"
        if not 0 <= region < len(state.regions):
            return f"There is no region {region}"
        return self._refusal(state, seat, troop, region, ConquestCheck(state, seat, troop), None)

    def _refusal(
        self, state: GameState, seat: int, troop: Troop, region: int, check: ConquestCheck, box: int | None
    ) -> str | None:
        """:meth:`refusal` of a region on the board during the conquests, with the troop's conquest rules
        (``check``) and the Sorcerer tokens left in the box (``box``, None: count them) worked out once for
        every region :meth:`legal` asks about."""
        r = state.regions[region]
        if r.owner < 0 or r.owner == seat:
            return f"Region {region} holds no opponent's token to convert"
        victim = state.players[r.owner].active
        if victim is None or victim.race != r.race:
            return f"Sorcerers convert only Active tokens; region {region} is In Decline"
        if r.tokens != 1:
            return f"Sorcerers convert a token alone in its region; region {region} holds {r.tokens}"
        for marker, _ in markers_at(state, region):
            if marker.guards:
                article = "An" if marker.label[0] in "AEIOU" else "A"
                return f"{article} {marker.label} protects the token in region {region} from Sorcerers"
        if r.owner in self.read_turn(state, Conversions).converted:
            return f"Sorcerers convert once per turn per opponent; you already converted player {r.owner}"
        if not check.in_reach(region):
            return f"Region {region} is not adjacent to one of your Sorcerer regions"
        if (box_left(state, troop.race) if box is None else box) < 1:
            return "No Sorcerer token is left in the box"
        return check.candidate_refusal(region)  # the whole check unless listing the candidates left it open

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        if state.phase not in (START, CONQUER):
            return []
        # Only regions in the reach of the race's conquests qualify (refusal); ask about those alone.
        check = ConquestCheck(state, seat, troop)
        if not check.held:
            return []
        regions, players = state.regions, state.players
        converted = self.read_turn(state, Conversions).converted
        # What _refusal asks first, asked of every candidate at once: a lone Active token of an opponent not
        # converted this turn (the others are refused whatever else holds).
        targets = []
        for i in check.candidates():
            r = regions[i]
            if r.tokens == 1 and r.owner not in (-1, seat) and r.owner not in converted:
                victim = players[r.owner].active
                if victim is not None and victim.race == r.race:
                    targets.append(i)
        if not targets:
            return []
        box = box_left(state, troop.race)
        return [offer("convert", seat, i) for i in targets if self._refusal(state, seat, troop, i, check, box) is None]

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> dict[str, Any] | None:
        assert action.region is not None
        refusal = self.refusal(state, seat, troop, action.region)
        if refusal:
            raise IllegalAction(refusal)
        victim = state.regions[action.region].owner
        troop = prepare(state, seat, ACTIVE)  # a conquest: troops readied, an In Decline race's moment over
        done = self.read_turn(state, Conversions).converted
        self.write_turn(state, Conversions(done | {victim}))
        attacked(state, victim)
        vacate(state, action.region)  # the converted token goes back to the box, a Lair or Fortress with it
        r = state.edit_region(action.region)
        r.owner, r.race, r.tokens = seat, troop.race, 1  # the new Sorcerer comes from the box
        record_conquest(state, seat, troop, action.region, True, ACTIVE)
        return None

    def tell(self, step: Step) -> Told:
        region = step.region
        assert region is not None
        r = step.before.regions[region]
        lone = f"{step.whose(r.owner)} lone {shown(r.race or '')} token on {step.where(region)}"
        return Phrase("converted", f"{lone} into a Sorcerer (it went back to the box)")

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        converted = schema_1_turn_field(old, "converted")
        if converted:
            self.write_turn(state, Conversions.from_json({"converted": converted}, "turn_state"))


register(Sorcerers)
