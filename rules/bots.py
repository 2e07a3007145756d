"""A random-legal-move player, for tests, benchmarks and the demo.

:func:`random_action` lists every legal action (``legal_actions``) and chooses among them by a fixed
policy; :func:`sample_action` follows the same policy with the same probabilities but checks the
regions a conquest could go to only as it draws them (the bulk of listing every legal action), and is
what :func:`random_player` plays.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .actions import ACTION_KINDS, BASE_KINDS, CONQUERING, DECLINED, ROLLING, Action, IllegalAction, redeploy_action
from .cost import ConquestCheck
from .engine import ConquestOffers, apply, awaiting, legal_actions, legal_choices
from .scoring import turn_score
from .state import CONQUER, DEFEND, OVER, PICK, REDEPLOY, START, GameState
from .troops import total_tokens

#: ``random.Random``'s draw below n is the one inlined here (``_randbelow_with_getrandbits``: the same
#: numbers as ``randrange(n)`` and ``choice``), so the inlined draws give the same games.
_EXACT = getattr(random.Random, "_randbelow", None) is getattr(random.Random, "_randbelow_with_getrandbits", 0)

#: Action types the policy counts as conquests (``ActionKind.conquers``: the base game's and the abilities').
CONQUESTS = CONQUERING


def concrete(choice: Action, rnd: random.Random) -> Action:
    """Turn a described choice (``redeploy``, or an ability's kind whose ``choice`` is ``"spread"`` or
    ``"choose"``) into an action."""
    if choice.type == "redeploy":
        count = choice.count or 0
        regions = list(choice.regions)
        if choice.tokens:  # a defender: the tokens in hand go on top of what each region keeps
            spread = dict(choice.tokens)
            for _ in range(count - sum(spread.values())):
                spread[rnd.choice(regions)] += 1
        elif count >= len(regions):
            spread = dict.fromkeys(regions, 1)
            n = len(regions)
            if n and type(rnd) is random.Random and _EXACT:
                # rnd.choice(regions) for each token, its draws inlined (a call less per token)
                getrandbits, k = rnd.getrandbits, n.bit_length()
                for _ in range(count - n):
                    i = getrandbits(k)
                    while i >= n:
                        i = getrandbits(k)
                    spread[regions[i]] += 1
            else:
                for _ in range(count - len(regions)):
                    spread[rnd.choice(regions)] += 1
        else:
            kept = set(rnd.sample(regions, count))
            spread = {r: int(r in kept) for r in regions}
        return redeploy_action(choice.player, choice.troop, tuple(sorted(spread.items())))
    kind = ACTION_KINDS.get(choice.type)
    if kind is not None and kind.choice == "spread":  # up to ``count`` over ``regions``
        placed: dict[int, int] = {}
        for _ in range(rnd.randint(0, choice.count or 0)):
            r = rnd.choice(choice.regions)
            placed[r] = placed.get(r, 0) + 1
        return Action(choice.type, choice.player, tokens=tuple(sorted(placed.items())))
    if kind is not None and kind.choice == "choose":  # ``count`` of ``regions``
        return Action(choice.type, choice.player, regions=tuple(rnd.sample(choice.regions, choice.count or 0)))
    return choice


def random_action(state: GameState, player: int, rnd: random.Random) -> Action:
    """A random legal action for ``player``, favouring progress so that games end in reasonable time:
    conquests are preferred to ending them, and ``end_turn`` waits until the redeploy is done.

    So that random games play every rule (tests/rules/test_coverage.py), some legal moves are favoured:
    an In Decline race that still conquers usually uses its moment before the Active race, a race goes In
    Decline now and then, and a die that may be rolled before a conquest (``ActionKind.rolls``) usually is.
    """
    choices = legal_actions(state, player)
    declined = [a for a in choices if a.troop == DECLINED and a.type in ("conquer", "final_conquest")]
    if declined and rnd.random() < 0.6:
        return rnd.choice(declined)
    declines = [a for a in choices if a.type == "decline"]
    if declines and rnd.random() < 0.12:
        return declines[0]
    rolls = [a for a in choices if a.type in ROLLING]
    if rolls and rnd.random() < 0.5:
        return rolls[0]
    conquests = [a for a in choices if a.type in CONQUESTS]
    if conquests and rnd.random() < 0.85:
        return concrete(rnd.choice(conquests), rnd)
    if state.phase in ("redeploy", "defend"):
        return _redeploy_or_end(choices, rnd)
    return concrete(rnd.choice(choices), rnd)


def _redeploy_or_end(choices: list[Action], rnd: random.Random) -> Action:
    placing = [a for a in choices if a.type != "end_turn"]
    if placing and rnd.random() < 0.5:
        return concrete(rnd.choice(placing), rnd)
    ends = [a for a in choices if a.type == "end_turn"]
    return rnd.choice(ends) if ends else concrete(rnd.choice(placing), rnd)


def sample_action(state: GameState, player: int, rnd: random.Random) -> Action:
    """:func:`random_action`'s policy, drawn without checking every region a conquest could go to.

    Each action has the probability it has in :func:`random_action` (so every legal action may be
    played, and only those ``legal_actions`` offers are), but other random numbers are drawn: a seed
    plays another game. During the conquests, where :func:`random_action` chooses uniformly among a
    list of legal actions, this draws from the actions known to be legal (``legal_choices``) and the
    regions a conquest could go to (``ConquestOffers.regions``), in a random order without replacement,
    checks each region drawn and takes the first legal action: uniform among the legal ones too, and
    usually after a region or two rather than all of them. The die-or-not choice for a region is the
    engine's (``ConquestOffers.at``). Picking, redeploying and defending list everything (cheap there).
    """
    if state.phase in (REDEPLOY, DEFEND):  # random_action's other branches offer nothing here
        return _redeploy_or_end(legal_actions(state, player), rnd)
    if state.phase not in (PICK, START, CONQUER):
        return random_action(state, player, rnd)
    if state._held is not None:  # an indexed state answers regions_of without a scan (legal_choices)
        return _sample_conquests(state, player, rnd)
    with state.reading():
        return _sample_conquests(state, player, rnd)


#: The base game's conquests: never a described choice (``concrete`` leaves them as they are).
_PLAIN = frozenset(("conquer", "final_conquest"))


def _sample_conquests(state: GameState, player: int, rnd: random.Random) -> Action:
    """:func:`sample_action` in the ``pick``, ``start`` and ``conquer`` phases."""
    known, offers = legal_choices(state, player)
    # The branches of random_action, in its order; "if it exists and the die says so" is drawn the
    # other way round where knowing it exists would need the regions checked (same probabilities).
    # An In Decline race's conquests come first among the offers (legal_choices), one troop at most.
    declined = offers[:1] if offers and offers[0].kind == DECLINED else ()
    if declined and rnd.random() < 0.6:
        action = _first_legal([], declined, rnd)
        if action is not None:
            return action
    decline = roll = None  # the first of each in ``known``, and the abilities' conquering kinds
    conquests = []
    for a in known:  # one pass (a few actions; most are of none of these types)
        kind = a.type
        if kind == "decline":
            if decline is None:
                decline = a
            continue
        if kind in ROLLING and roll is None:
            roll = a
        if kind in CONQUESTS:
            conquests.append(a)
    if decline is not None and rnd.random() < 0.12:
        return decline
    if roll is not None and rnd.random() < 0.5:
        return roll
    if (conquests or offers) and rnd.random() < 0.85:
        action = _first_legal(conquests, offers, rnd)
        if action is not None:
            return action if action.type in _PLAIN else concrete(action, rnd)
    action = _first_legal(known, offers, rnd)
    assert action is not None, "the awaited player always has something to do"
    return action if action.type in _PLAIN else concrete(action, rnd)


def _first_legal(known: list[Action], offers: Sequence[ConquestOffers], rnd: random.Random) -> Action | None:
    """A uniform choice among ``known`` and the legal actions of ``offers``, or None if there is none:
    the first legal one in a random order (drawn one at a time, without replacement).

    The items are ``known`` then each offer's regions, numbered in that order; a draw takes position
    ``i`` among those left and moves the last one left into it (``moved`` records only the positions
    that changed, so nothing is listed for the regions never drawn)."""
    first = len(known)
    left = first
    for o in offers:
        left += len(o.regions)
    moved: dict[int, int] = {}
    getrandbits = rnd.getrandbits if type(rnd) is random.Random and _EXACT else None
    while left:
        if getrandbits is None:
            i = rnd.randrange(left)
        else:  # rnd.randrange(left), inlined
            k = left.bit_length()
            i = getrandbits(k)
            while i >= left:
                i = getrandbits(k)
        left -= 1
        item = moved.get(i, i)
        moved[i] = moved.get(left, left)
        if item < first:
            return known[item]
        item -= first
        for o in offers:
            regions = o.regions
            if item < len(regions):
                action = o.at(regions[item])
                if action is not None:
                    return action
                break
            item -= len(regions)
    return None


def random_player(state: GameState, rnd: random.Random) -> Action:
    """An action for whoever the game awaits (:func:`sample_action`)."""
    phase = state.phase  # awaited(state), inlined
    if phase == OVER:
        raise ValueError("The game is over: nobody is awaited")
    return sample_action(state, state.defenders[0] if phase == DEFEND else state.current, rnd)


def play_random_game(state: GameState, rnd: random.Random, max_steps: int = 20000) -> GameState:
    """Play random legal actions until the game is over."""
    for _ in range(max_steps):
        if state.over:
            return state
        state = apply(state, random_player(state, rnd))
    raise RuntimeError("game did not end")


# -- players worth playing against: the one-step greedy bot and the house bot -----------------------------
#
# Both read only what their seat may know (ARCHITECTURE §4, "Hidden information"): before looking ahead they
# draw a world (:func:`determinize`) where the secrets are made up: the stacks under the column are
# shuffled anew, the random generator gets a new seed (so a die is not known before it is rolled), and the
# other players' coins are set to the bot's own. Their randomness comes from a ``random.Random`` seeded by
# the caller (the service seeds it from the game's seed and the step), so the same state and seed give the
# same move.
#
# Neither knows any race or power by name: they weigh every action ``legal_actions`` offers (the
# abilities' own kinds included) by what it does to the board, and fill in the described choices
# (``redeploy``, ``"spread"`` and ``"choose"`` kinds) by one rule read from the board (:func:`settle`).

BASE_TYPES = frozenset(kind.type for kind in BASE_KINDS)
#: Action types that end a stretch of the turn: on a tie they are preferred, so a bot never dithers.
ENDINGS = ("end_conquest", "end_turn")


def determinize(state: GameState, seat: int, rnd: random.Random) -> GameState:
    """A world ``seat`` cannot tell from ``state``: what it may not see is drawn again from ``rnd``.

    The stacks under the column are shuffled (only their lengths are public), the random generator is
    seeded anew (the next die is not known), and the other players' coins (secret) are set to ``seat``'s.
    """
    world = state.fork()
    races, powers = sorted(state.race_stack), sorted(state.power_stack)  # the true order plays no part
    rnd.shuffle(races)
    rnd.shuffle(powers)
    world.race_stack, world.power_stack = races, powers
    world.rng = rnd.getrandbits(64)
    mine = state.players[seat].coins
    for other in range(len(state.players)):
        if other != seat and state.players[other].coins != mine:
            world.edit_player(other).coins = mine
    return world.done()


def exposure(state: GameState, seat: int, region: int) -> int:
    """How open ``region`` lies to attack: its land neighbours ``seat`` does not hold (and 1 for the
    edge of the board, where new races enter: rulebook, "First Conquest")."""
    board = state.board
    regions = state.regions
    count = sum(1 for n in board.neighbours[region] if regions[n].owner != seat and not board.regions[n].is_water)
    return count + (1 if region in board.entry else 0)


def settle(choice: Action, state: GameState) -> Action:
    """Fill in a described choice (``redeploy``, an ability's ``"spread"`` or ``"choose"`` kind) by one
    rule: what can go on the board goes where the region lies most open to attack (:func:`exposure`),
    one token at a time to the region with the most exposure per token already there; ties go to the
    lowest region number. An action that is not a described choice is returned as it is."""
    seat = choice.player
    kind = ACTION_KINDS.get(choice.type)
    if choice.type == "redeploy":
        count = choice.count or 0
        regions = list(choice.regions)
        weight = {r: exposure(state, seat, r) for r in regions}
        if choice.tokens:  # a defender: tokens in hand go on top of what each region keeps
            spread = dict(choice.tokens)
            extra = count - sum(spread.values())
        elif count >= len(regions):
            spread = {r: 1 for r in regions}
            extra = count - len(regions)
        else:  # too few to hold everything: keep the regions least open to attack
            kept = sorted(regions, key=lambda r: (weight[r], r))[:count]
            return Action(
                "redeploy", seat, troop=choice.troop, tokens=tuple(sorted((r, int(r in kept)) for r in regions))
            )
        _pile(spread, weight, extra)
        return Action("redeploy", seat, troop=choice.troop, tokens=tuple(sorted(spread.items())))
    if kind is not None and kind.choice == "spread":
        weight = {r: exposure(state, seat, r) for r in choice.regions}
        placed = {r: state.regions[r].tokens for r in choice.regions}
        before = dict(placed)
        _pile(placed, weight, choice.count or 0)
        tokens = tuple(sorted((r, placed[r] - before[r]) for r in placed if placed[r] > before[r]))
        return Action(choice.type, seat, tokens=tokens)
    if kind is not None and kind.choice == "choose":
        ranked = sorted(choice.regions, key=lambda r: (-exposure(state, seat, r), r))
        return Action(choice.type, seat, regions=tuple(sorted(ranked[: choice.count or 0])))
    return choice


def _pile(spread: dict[int, int], weight: dict[int, int], extra: int) -> None:
    """Add ``extra`` tokens to ``spread``, each to the region with the most weight per token there."""
    for _ in range(extra):
        target = max(spread, key=lambda r: ((weight[r] + 0.25) / (spread[r] + 1), -r))
        spread[target] += 1


def candidates(state: GameState, seat: int) -> list[Action]:
    """Every action the bots weigh: ``legal_actions``, described choices filled in by :func:`settle`."""
    return [settle(a, state) if a.count is not None or _described(a) else a for a in legal_actions(state, seat)]


def _ability_kind(action: Action) -> bool:
    """Whether the action is one of a race's or power's own kinds (not of the base game)."""
    return action.type not in BASE_TYPES


def _described(action: Action) -> bool:
    kind = ACTION_KINDS.get(action.type)
    return action.type == "redeploy" or (kind is not None and kind.choice is not None)


def _changes(before: GameState, after: GameState) -> bool:
    """Whether a step changed anything but ``last``: the board, the players, the abilities' state, the
    turn's (a die rolled and waiting), the random generator."""
    return (
        after.regions != before.regions
        or after.players != before.players
        or after.abilities != before.abilities
        or after.t != before.t
        or after.rng != before.rng
    )


def _turn_over(state: GameState, seat: int) -> bool:
    """Whether ``seat``'s own turn has been scored (or was never under way)."""
    return state.current != seat or state.phase in (DEFEND, OVER) or "score" in state.last


def quick_value(state: GameState, seat: int) -> float:
    """The one-step greedy bot's measure: coins, the turn's score as it stands while the turn is under way,
    and a little for the Active race's tokens (more to conquer with) and those in hand."""
    p = state.players[seat]
    value = float(p.coins)
    if not _turn_over(state, seat):
        value += turn_score(state, seat)["total"]
    troop = p.active
    if troop is not None:
        value += 0.25 * total_tokens(state, seat, troop) + 0.01 * troop.hand
    return value


def greedy_action(state: GameState, seat: int, rnd: random.Random) -> Action:
    """The one-step greedy bot: the action whose result :func:`quick_value` rates best (in a world drawn by
    :func:`determinize`, so a die is a guess); on a tie, ending the stretch (:data:`ENDINGS`) first, then
    the order of ``legal_actions``."""
    world = determinize(state, seat, rnd)
    return _best(world, seat, candidates(state, seat), lambda after: quick_value(after, seat))


def _best(world: GameState, seat: int, choices: list[Action], value: Callable[[GameState], float]) -> Action:
    """The choice whose result ``value`` rates best. While redeploying and placing markers (the ``redeploy``
    and ``defend`` phases), a step other than ending must raise the value of the position as it stands,
    strictly: the values rise step after step and the turn ends, never going back and forth between two
    choices that change the state but not its worth (a Diplomat's ally, a Heroes' region...)."""
    scored = _scored(world, seat, choices, value)
    if not scored:
        return choices[0]
    if world.phase not in (REDEPLOY, DEFEND):
        return _top(scored)[2]
    ends = [item for item in scored if item[2].type in ENDINGS]
    steps = [item for item in scored if item[2].type not in ENDINGS]
    now = value(world) + 1e-6
    raising = [item for item in steps if item[0] > now]
    if raising:
        return _top(raising)[2]
    if ends:
        return ends[0][2]
    # Nothing raises the value and the turn may not end yet (tokens in hand): the best step after which
    # it may (the redeployment that places them), not one that leaves the turn where it was.
    for item in sorted(steps, key=_rank, reverse=True):
        after = apply(world, item[2])
        if any(a.type in ENDINGS for a in legal_actions(after, seat)):
            return item[2]
    return _top(steps)[2]


def _scored(
    world: GameState, seat: int, choices: list[Action], value: Callable[[GameState], float]
) -> list[tuple[float, int, Action]]:
    """(value after the step, tie-break, action) for each choice that applies in ``world`` and changes
    something; the tie-break prefers :data:`ENDINGS`, then the earlier choice."""
    scored: list[tuple[float, int, Action]] = []
    for i, action in enumerate(choices):
        try:
            after = apply(world, action)
        except IllegalAction:
            continue
        if action.type not in ENDINGS and not _changes(world, after):
            continue  # a choice filled in as it stands: doing it again would change nothing
        scored.append((value(after), 1 if action.type in ENDINGS else -i, action))
    return scored


def _rank(item: tuple[float, int, Action]) -> tuple[float, int]:
    return (round(item[0], 6), item[1])


def _top(scored: list[tuple[float, int, Action]]) -> tuple[float, int, Action]:
    return max(scored, key=_rank)


@dataclass(frozen=True, slots=True)
class Budget:
    """How hard the house bot thinks, in playouts (never in seconds, so that a move does not depend on
    the machine): ``worlds`` drawn per decision, each candidate played out in each; the choices that
    shape several turns (which combo, whether to go In Decline) are played out ``deep``: through the
    other players' turns and the bot's next turn."""

    worlds: int = 3
    #: Candidates played out, the best by a one-step look (:func:`quick_value`); every ending is kept.
    breadth: int = 6
    deep_worlds: int = 4
    #: Candidates of a deep decision kept after the shallow playouts (the best ones; declining is kept).
    shortlist: int = 3


#: The share of a region's worth kept per turn to come, by the cheapest attack on it: a region no
#: opponent's Active race may attack now is kept at :data:`SAFE`; one that costs ``c`` tokens to take,
#: ``SAFE - EXPOSED * exp(-(c - 2) / 2)`` (3 tokens: about 0.6, 6 tokens: about 0.9).
SAFE = 0.95
EXPOSED = 0.6
#: What one token the Active race can still move on is worth, per turn left (at most 3 turns counted).
SPARE = 0.3


def keep_odds(state: GameState, seat: int) -> dict[int, float]:
    """For each region ``seat`` holds, how likely it is still held a round later: from the cheapest
    conquest of it by another player's Active race now (``ConquestCheck``: the same costs, markers,
    immunities and peace the engine applies; a region out of their reach counts as safe)."""
    held = [i for i, r in enumerate(state.regions) if r.owner == seat]
    cheapest: dict[int, int] = {}
    for other, p in enumerate(state.players):
        if other == seat or p.active is None:
            continue
        check = ConquestCheck(state, other, p.active)
        for region in held:
            if check.refusal(region) is None:
                cost = check.price(region, None)
                cheapest[region] = min(cost, cheapest.get(region, cost))
    return {r: SAFE - EXPOSED * math.exp(-(cheapest[r] - 2) / 2) if r in cheapest else SAFE for r in held}


def house_value(state: GameState, seat: int) -> float:
    """The house bot's measure of a position for ``seat``: coins; the turn's score while the turn is
    under way; what the regions held would score in the turns left, each region by how likely it is to
    be kept (:func:`keep_odds`); and the Active race's tokens not needed to hold its regions, which will
    conquer more (:data:`SPARE`). Reads nothing ``seat`` may not see (other players' coins play no part)."""
    p = state.players[seat]
    value = float(p.coins)
    if state.phase == OVER:
        return value
    own_turn = not _turn_over(state, seat)
    income = turn_score(state, seat)["total"]
    if own_turn:
        value += income
    left = _turns_left(state, seat, own_turn)
    if not left:
        return value
    odds = keep_odds(state, seat)
    if odds:
        per_region = income / len(odds)  # the bonuses shared out over the regions
        value += per_region * sum(sum(q**k for k in range(1, left + 1)) for q in odds.values())
    troop = p.active
    if troop is not None:
        spare = total_tokens(state, seat, troop) - len(state.regions_of(seat, troop.race))
        value += SPARE * spare * min(left, 3)
    return value


def _turns_left(state: GameState, seat: int, own_turn: bool) -> int:
    """``seat``'s turns still to come after the one under way (or, between its turns, from the next)."""
    later = state.turns - state.turn
    if own_turn or seat < state.current or (seat == state.current and state.phase == DEFEND):
        return later
    return later + 1


def greedy_step(world: GameState, seat: int) -> Action:
    """:func:`greedy_action` in a world already drawn (no new draw): the playouts' policy."""
    return _best(world, seat, candidates(world, seat), lambda after: quick_value(after, seat))


def play_out(world: GameState, seat: int, *, deep: bool, limit: int = 400) -> GameState:
    """Play ``world`` on by the greedy policy: to the end of ``seat``'s turn, or with ``deep``, through the
    others' turns and to the end of ``seat``'s next turn (or the end of the game)."""
    own_turns = 0
    was_own = world.current == seat and not _turn_over(world, seat)
    for _ in range(limit):
        if world.over:
            return world
        mover = min(awaiting(world))
        own = world.current == seat and world.phase != DEFEND
        if was_own and not own:
            own_turns += 1
            if not deep or own_turns >= 2:
                return world
        was_own = own
        world = apply(world, greedy_step(world, mover))
    return world


def house_action(state: GameState, seat: int, rnd: random.Random, budget: Budget = Budget()) -> Action:
    """The house bot: each candidate (:func:`candidates`) played out by the greedy policy in ``budget``
    worlds drawn by :func:`determinize`, and rated by :func:`house_value` at the end of the bot's turn;
    the choices that shape later turns (a combo to pick, going In Decline) are played out further, through
    the next round. The best average wins; ties go to ending the stretch, then to ``legal_actions``' order."""
    choices = candidates(state, seat)
    if len(choices) == 1:
        return choices[0]
    if state.phase in (REDEPLOY, DEFEND):
        return placing_action(state, seat, choices, rnd)
    worlds = [determinize(state, seat, rnd) for _ in range(max(budget.worlds, budget.deep_worlds))]
    first = _scored(worlds[0], seat, choices, lambda after: quick_value(after, seat))
    if not first:
        return choices[0]
    first.sort(key=_rank, reverse=True)
    kept = [a for _, _, a in first[: budget.breadth]]
    # Endings, declining and the races' and powers' own actions are always played out: their worth (a die
    # rolled before a conquest, a marker...) shows only later in the turn, not in one step.
    kept += [a for _, _, a in first[budget.breadth :] if a.type in ENDINGS or a.type == "decline" or _ability_kind(a)]
    if len(kept) == 1:
        return kept[0]
    shallow = _rate(worlds[: budget.worlds], seat, kept, deep=False)
    if not shallow:
        return kept[0]
    strategic = (
        state.current == seat and state.phase in (PICK, START) and any(a.type in ("pick", "decline") for a in kept)
    )
    if strategic:
        ranked = sorted(shallow, key=_rank, reverse=True)
        short = [a for _, _, a in ranked[: budget.shortlist]]
        short += [a for a in kept if a.type == "decline" and a not in short]
        deep = _rate(worlds[: budget.deep_worlds], seat, short, deep=True)
        if deep:
            return _top(deep)[2]
    return _top(shallow)[2]


def placing_action(state: GameState, seat: int, choices: list[Action], rnd: random.Random) -> Action:
    """Redeploying and placing markers (the ``redeploy`` and ``defend`` phases): no die is rolled, so no
    playout; each choice is rated by :func:`house_value` in one drawn world (:func:`_best`'s rule: a step
    must raise the value, or the turn ends)."""
    world = determinize(state, seat, rnd)
    return _best(world, seat, choices, lambda after: house_value(after, seat))


def _rate(worlds: list[GameState], seat: int, choices: list[Action], *, deep: bool) -> list[tuple[float, int, Action]]:
    """(mean value over ``worlds``, tie-break, action) for each choice that applies and changes something."""
    out = []
    for i, action in enumerate(choices):
        total, counted = 0.0, 0
        for world in worlds:
            try:
                after = apply(world, action)
            except IllegalAction:
                break
            if action.type not in ENDINGS and not _changes(world, after):
                break
            total += house_value(play_out(after, seat, deep=deep), seat)
            counted += 1
        if counted == len(worlds):
            out.append((total / counted, 1 if action.type in ENDINGS else -i, action))
    return out


#: A bot: (state, seat, rnd) -> the seat's next action.
Bot = Callable[[GameState, int, random.Random], Action]

#: The bots by name, for the bench and the service.
BOTS: dict[str, Bot] = {
    "random": sample_action,
    "greedy": greedy_action,
    "house": house_action,
}
