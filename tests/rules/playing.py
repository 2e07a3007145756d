"""Short-hands for race and power tests: finish a turn the way a player would, step by step."""

from __future__ import annotations

from rules import Action, GameState, apply, legal_actions


def redeploy_simply(state: GameState, seat: int) -> GameState:
    """Redeploy every troop that has a choice offered: one token per region, the rest on the first
    region."""
    for choice in [a for a in legal_actions(state, seat) if a.type == "redeploy"]:
        count = choice.count or 0
        regions = list(choice.regions)
        if choice.tokens:  # a defender: only the tokens in hand are added to what each region holds
            spread = dict(choice.tokens)
            spread[regions[0]] += count - sum(spread.values())
        elif count >= len(regions):
            spread = {r: 1 for r in regions}
            spread[regions[0]] += count - len(regions)
        else:
            spread = {r: int(k < count) for k, r in enumerate(regions)}
        state = apply(
            state,
            Action("redeploy", seat, troop=choice.troop, tokens=tuple(sorted(spread.items()))),
        )
    return state


def finish_turn(state: GameState, seat: int, *, decline: bool = False) -> GameState:
    """End the conquests (if not over), redeploy simply, end the turn (Stout: ``decline=True``)."""
    if state.phase in ("start", "conquer"):
        state = apply(state, Action("end_conquest", seat))
    state = redeploy_simply(state, seat)
    return apply(state, Action("end_turn", seat, decline=decline))
