"""Bivouacking: 5 Encampments, +1 defence each, moved freely at redeployment (rulebook, "Bivouacking").

Decisions (ARCHITECTURE §4, the ``auto`` rule): Encampments a player leaves aside at redeployment, or that come
off the board when a region is abandoned or emptied, land one at a time on the weakest region (tokens +
Encampments, ties to the lowest number) at the end of the turn; those of a conquered region land the same
way at the end of the attacker's turn. In ``ask`` mode the attacked player places those of a conquered
region in their own redeploy step ("they are redeployed at the end of the current player's turn"), in any
of their regions, on top of the Encampments still on the board, which stay where they are (like the tokens
of an attacked player, rulebook "Enemy Losses & Withdrawals"); those they leave go by the ``auto`` rule when
the step ends, or at its deadline. An auto-passed turn leaves those on the board where they are.

Its state: ``"Bivouacking": {"encampments": [3, 3, 9], "aside": 0}``, the region of each Encampment on the
board (two on 3, one on 9) and those off the board, waiting to be placed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..abilities import Marker, Power, Slot, register
from ..actions import Action, ActionKind, IllegalAction, Verb
from ..components import ENCAMPMENTS
from ..redeploy import defenders_asked
from ..schema import schema_1_markers, schema_1_troop_field
from ..state import DEFEND, REDEPLOY, GameState, Troop
from ..telling import Step, Told, placements

# Rulebook: "Each Encampment counts as 1 Race token toward the defense of the Region in which it is placed
# (thereby protecting a single Race token with an Encampment from the Sorcerer's Racial Power)".
ENCAMPMENT = Marker("encampments", "Encampment", defence=1, guards=True, counted=True)


@dataclass(frozen=True, slots=True)
class Camps(Slot):
    #: The region of each Encampment on the board, in ascending order (a region twice: two there).
    encampments: tuple[int, ...] = ()
    #: Encampments off the board, waiting to be placed.
    aside: int = 0


class Bivouacking(Power):
    name = "Bivouacking"
    summary = "5 Encampments, +1 defence each, moved at every redeployment."
    description = (
        "Deploy the 5 Encampment tokens in any of your Region(s), during your Troop Redeployment phase. Each "
        "Encampment counts as 1 Race token toward the defense of the Region in which it is placed (thereby "
        "protecting a single Race token with an Encampment from the Sorcerer's Racial Power). Multiple "
        "Encampments may be placed in the same Region to obtain a higher defense bonus. Each turn you may break "
        "camp and settle in any new Region you occupy. Encampments are never lost during an attack on the "
        "Region they are in: they are redeployed at the end of the current player's turn. When the Race they "
        "were associated with goes into Decline, they disappear."
    )
    actions = (
        ActionKind("place_encampments", ("tokens",), "Place the Encampments", choice="spread", marker="encampments"),
        # ``ask`` mode: the attacked player puts back the Encampments of their conquered regions (``tokens``:
        # how many go on each region, on top of those there).
        ActionKind("return_encampments", ("tokens",), "Place your Encampments again", choice="spread", defends=True),
    )
    verbs = (
        Verb("encamp", "place_encampments", "tokens", "place Encampments, region:count"),
        Verb("recamp", "return_encampments", "tokens", "after an attack, place your Encampments again, region:count"),
    )
    slot = Camps
    markers = (ENCAMPMENT,)
    schema_1_fields = frozenset({"encampments", "camps"})

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        if state.phase == DEFEND:
            aside = self.read(state, Camps).aside
            held = state.regions_of(seat, troop.race) if aside else []
            return [Action("return_encampments", seat, regions=tuple(held), count=aside)] if held else []
        held = state.regions_of(seat, troop.race)
        if state.phase != REDEPLOY or not held:
            return []
        return [Action("place_encampments", seat, regions=tuple(held), count=self.available(state))]

    def waiting_pieces(self, state: GameState, seat: int, troop: Troop) -> int:
        # Those of a conquered region, left aside by ``on_turn_end`` in ``ask`` mode for their owner to place.
        return self.read(state, Camps).aside if state.current != seat else 0

    def available(self, state: GameState) -> int:
        camps = self.read(state, Camps)
        return len(camps.encampments) + camps.aside

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> None:
        returning = action.type == "return_encampments"
        if not returning and state.phase != REDEPLOY:
            raise IllegalAction("Encampments are placed during your Troop Redeployment")
        held = set(state.regions_of(seat, troop.race))
        camps = self.read(state, Camps)
        total = camps.aside if returning else self.available(state)
        wanted = dict(action.tokens)
        foreign = sorted(set(wanted) - held)
        if foreign:
            raise IllegalAction(f"Encampments go only in your own regions; {foreign[0]} is not yours")
        placed = sum(wanted.values())
        if placed > total:
            if returning:
                raise IllegalAction(f"{total} of your Encampments are off the map; this places {placed}")
            raise IllegalAction(f"You have {total} Encampments (of {ENCAMPMENTS}); this places {placed}")
        if returning:
            # The Encampments still on the board stay; those taken off by the attack join them.
            self.write(state, Camps(_sorted(Counter(camps.encampments) + Counter(wanted)), total - placed))
        else:
            self.write(state, Camps(_sorted(Counter(wanted)), total - placed))

    def on_pick(self, state: GameState, seat: int, troop: Troop) -> None:
        self.write(state, Camps(aside=ENCAMPMENTS))

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        # "When the Race they were associated with goes into Decline, they disappear."
        self.write(state, Camps())

    def on_end_turn(self, state: GameState, seat: int, troop: Troop) -> None:
        # "Deploy the 5 Encampment tokens": those the player left aside go by the auto rule.
        self.place_aside(state, seat, troop)

    def on_auto_redeploy(self, state: GameState, seat: int, troop: Troop) -> None:
        self.place_aside(state, seat, troop)

    def on_turn_end(self, state: GameState) -> None:
        # Those of a conquered region "are redeployed at the end of the current player's turn": by the auto
        # rule, or, in ``ask`` mode, by their owner in their redeploy step (``waiting_pieces``).
        if defenders_asked(state):
            return
        for seat, player in enumerate(state.players):
            troop = player.active
            if seat != state.current and troop is not None and troop.power == self.name:
                self.place_aside(state, seat, troop)

    def place_aside(self, state: GameState, seat: int, troop: Troop) -> None:
        """Encampments off the board go one at a time onto the weakest region (tokens + Encampments; ties:
        lowest number): the ``auto`` rule."""
        camps = self.read(state, Camps)
        if not camps.aside:
            return
        held = state.regions_of(seat, troop.race)
        if not held:
            return
        counts = Counter(camps.encampments)
        for _ in range(camps.aside):
            target = min(held, key=lambda i: (state.regions[i].tokens + counts[i], i))
            counts[target] += 1
        self.write(state, Camps(_sorted(counts), 0))

    # -- the Encampments on the board --------------------------------------------------------------------
    def placed(self, state: GameState) -> list[tuple[int, Marker, int]]:
        return [(region, ENCAMPMENT, n) for region, n in sorted(Counter(self.read(state, Camps).encampments).items())]

    def place(self, state: GameState, region: int, marker: Marker, count: int) -> None:
        camps = self.read(state, Camps)
        counts = Counter(camps.encampments)
        counts[region] = count
        self.write(state, Camps(_sorted(counts), camps.aside))

    def on_vacate(self, state: GameState, region: int, owner: int, race: str | None) -> None:
        # "Encampments are never lost during an attack on the Region they are in": back off the board.
        camps = self.read(state, Camps)
        there = camps.encampments.count(region)
        if there:
            rest = tuple(i for i in camps.encampments if i != region)
            self.write(state, Camps(rest, camps.aside + there))

    def tell(self, step: Step) -> Told:
        tokens = step.action.tokens if step.action is not None else ()
        placed = placements([(r, n) for r, n in tokens if n], step)
        if step.kind == "return_encampments":
            return f"placed Encampments again: {placed}" if placed else "kept the Encampments off the map"
        return f"placed the Encampments: {placed}" if placed else "took up the Encampments"

    def upgrade_schema_1(self, state: GameState, old: dict[str, Any]) -> None:
        on_board = schema_1_markers(old, "encampments")
        aside = [n for _, troop, n in schema_1_troop_field(old, "camps") if troop["power"] == self.name]
        self.write(state, Camps(_sorted(Counter(on_board)), aside[0] if aside else 0))


register(Bivouacking)


def _sorted(counts: Counter[int] | dict[int, int]) -> tuple[int, ...]:
    return tuple(sorted(Counter(counts).elements()))
