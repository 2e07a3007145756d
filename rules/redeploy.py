"""Troop redeployment (rulebook, "Troop Redeployment") and the deterministic ``auto`` rule (ARCHITECTURE §4)."""

from __future__ import annotations

from .abilities import RACES, hooks_of, shown
from .actions import IllegalAction
from .regions import vacate
from .state import REDEPLOY_ASK, REDEPLOY_AUTO, GameState, Troop
from .troops import TOKENS


def kept_off_board(state: GameState, seat: int, troop: Troop, own_turn: bool) -> int:
    """Tokens in hand the troop keeps off the board after its own redeployment (``kept_off_board``), else 0."""
    if not own_turn:
        return 0
    hooks = troop.hooks  # hooks_of(troop), read as the troop keeps them once asked
    if hooks is None or troop.declined:
        hooks = hooks_of(troop)
    keepers = hooks.kept_off_board
    if not keepers:
        return 0
    return max(a.kept_off_board(state, seat, troop) for a in keepers)


def redeploy(
    state: GameState, seat: int, troop: Troop, distribution: tuple[tuple[int, int], ...], own_turn: bool
) -> None:
    """Set the complete distribution of the troop's tokens over the regions it holds.

    Every region keeps at least one token; every token in hand is placed (rulings), except those an ability
    keeps off the board. Where that cannot leave one per region, regions given 0 are abandoned.
    """
    held = state.regions_of(seat, troop.race)
    if not held:
        raise IllegalAction(f"Your {shown(troop.race)} hold no region: their tokens wait in hand for your next turn")
    given = dict(distribution)
    if given.keys() != set(held):
        missing = sorted(set(held) - set(given))
        extra = sorted(set(given) - set(held))
        parts = []
        if missing:
            parts.append(f"give a count for every region you hold (missing: {', '.join(map(str, missing))})")
        if extra:
            parts.append(f"regions {', '.join(map(str, extra))} are not yours")
        raise IllegalAction("Redeployment: " + "; ".join(parts))
    regions = state.regions
    total = troop.hand + sum(map(TOKENS, map(regions.__getitem__, held)))  # total_tokens, held known
    keep = kept_off_board(state, seat, troop, own_turn)
    placed = total - keep
    if sum(given.values()) != placed:
        kept = f" ({keep} stay off the map)" if keep else ""
        raise IllegalAction(f"Redeployment must place exactly {placed} tokens{kept}; this places {sum(given.values())}")
    if not own_turn:
        # Rulebook, "Enemy Losses & Withdrawals": an attacked player redeploys the tokens in hand into
        # regions still occupied; moving tokens already on the board is the active player's "Troop
        # Redeployment" only.
        for region, count in given.items():
            if count < state.regions[region].tokens:
                raise IllegalAction(
                    f"Only your tokens in hand can be placed now: region {region} has "
                    f"{state.regions[region].tokens}, it cannot go down to {count}"
                )
    zeros = [r for r, n in given.items() if n == 0] if 0 in given.values() else None
    if zeros and placed >= len(held):
        raise IllegalAction(f"Leave at least one token in every region you hold (region {zeros[0]} has none)")
    if zeros and any(n > 1 for n in given.values()):
        raise IllegalAction("With too few tokens for every region, place one per region and no more")
    for region, count in given.items():
        if count == 0:
            vacate(state, region)
        elif regions[region].tokens != count:  # copy on write: a region left as it was is shared
            state.edit_region(region).tokens = count
    troop.hand = keep


def fewest_tokens(state: GameState, regions: list[int]) -> int:
    """The auto rule's target: the region with the fewest tokens, ties to the lowest number."""
    return min(regions, key=lambda i: (state.regions[i].tokens, i))


def auto_redeploy(state: GameState, seat: int, own_turn: bool) -> None:
    """ARCHITECTURE §4 ``auto``: tokens in hand go one at a time onto the owner's region with the fewest tokens
    (ties: lowest region number); then the abilities place their own pieces by the same rule
    (``on_auto_redeploy``)."""
    for troop in list(state.players[seat].troops()):
        held = state.regions_of(seat, troop.race)
        if not held:
            continue
        keep = kept_off_board(state, seat, troop, own_turn)
        to_place = troop.hand - keep
        if to_place > 0:
            troop = state.edit_troop(seat, troop.race)
            for _ in range(to_place):
                state.edit_region(fewest_tokens(state, held)).tokens += 1
            troop.hand -= to_place
        for ability in hooks_of(troop).on_auto_redeploy:
            ability.on_auto_redeploy(state, seat, state.edit_troop(seat, troop.race))


def needs_redeploy(state: GameState, seat: int) -> bool:
    """Whether an attacked player has tokens in hand, or pieces of an ability waiting to be placed again
    (``waiting_pieces``), and a region to put them in."""
    player = state.players[seat]
    troop = player.active
    if troop is not None:
        hooks = troop.hooks  # hooks_of(troop), read as it keeps them (an Active troop)
        if hooks is None or troop.declined:
            hooks = hooks_of(troop)
        # Asked first: nothing to place, no scan of the regions (most seats, most turns).
        if (troop.hand or (hooks.waiting_pieces and waiting_pieces(state, seat, troop))) and state.regions_of(
            seat, troop.race
        ):
            return True
    for troop in player.declined:  # noqa: SIM110  (a loop: no generator made, asked for every seat each turn)
        # An In Decline troop: tokens in hand only, and only one that still conquers has a step of its own
        # (place_declined_hands places the others').
        if troop.hand and RACES[troop.race].conquers_in_decline and state.regions_of(seat, troop.race):
            return True
    return False


def place_declined_hands(state: GameState, seat: int) -> None:
    """The tokens in hand of the player's In Decline races that no longer conquer go by the ``auto`` rule
    when a turn ends (ARCHITECTURE §4). Only a race that keeps all its tokens In Decline (a design's,
    ``rules/designs.py``) has more than one in a region to take back in hand when attacked; with no
    step of its own (``troop: "declined"`` names the race that still conquers), the rule places them."""
    for troop in state.players[seat].declined:
        if troop.hand and not RACES[troop.race].conquers_in_decline:
            held = state.regions_of(seat, troop.race)
            if held:
                troop = state.edit_troop(seat, troop.race)
                for _ in range(troop.hand):
                    state.edit_region(fewest_tokens(state, held)).tokens += 1
                troop.hand = 0


def waiting_pieces(state: GameState, seat: int, troop: Troop) -> int:
    """The troop's abilities' pieces off the board that its owner places again after an attack."""
    waiting = hooks_of(troop).waiting_pieces
    return sum(a.waiting_pieces(state, seat, troop) for a in waiting) if waiting else 0


def place_waiting_pieces(state: GameState, seat: int) -> None:
    """An attacked player's step ends: the pieces they left off the board go by the ``auto`` rule
    (``on_auto_redeploy`` of the abilities that have some waiting)."""
    for troop in list(state.players[seat].troops()):
        for ability in hooks_of(troop).waiting_pieces:
            if ability.waiting_pieces(state, seat, troop):
                ability.on_auto_redeploy(state, seat, state.edit_troop(seat, troop.race))


def defenders_asked(state: GameState) -> bool:
    """Whether attacked players redeploy in a step of their own (``ask`` mode, ARCHITECTURE §4)."""
    return bool(state.options.get("redeploy", REDEPLOY_AUTO) == REDEPLOY_ASK)


def unplaced(state: GameState, seat: int, own_turn: bool) -> str | None:
    """Why the player may not end the turn yet (tokens still in hand), or None."""
    for troop in state.players[seat].troops():
        if troop.hand <= 0 or not state.regions_of(seat, troop.race):
            continue  # nothing in hand: nothing unplaced, whatever is kept off the board (never < 0)
        if troop.declined and not RACES[troop.race].conquers_in_decline:
            continue  # placed when the turn ends (place_declined_hands)
        extra = troop.hand - kept_off_board(state, seat, troop, own_turn)
        if extra > 0:
            tokens = f"{extra} {shown(troop.race)} token{'s' if extra > 1 else ''}"
            return f"You still have {tokens} in hand: redeploy them first"
    return None
