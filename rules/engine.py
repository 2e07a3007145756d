"""The public operations on a game: ``apply``, ``legal_actions``, ``awaiting``, ``auto_pass`` (ARCHITECTURE §3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import conquest, redeploy, turns
from .abilities import ACTION_OWNERS, NO_HOOKS, RACES, Ability, abilities, hooks_of, names_with, shown, with_turn_state
from .actions import (
    ACTION_KINDS,
    ACTIVE,
    DECLINED,
    Action,
    IllegalAction,
    conquest_offers,
    offer,
    offer_at,
    offers_by_region,
    redeploy_action,
)
from .combos import pick_combo
from .components import MAX_DIE_SHORTFALL
from .cost import ConquestCheck
from .decline import go_into_decline
from .scoring import score_turn
from .state import CONQUER, DEFEND, OVER, PICK, REDEPLOY, START, GameState, Troop
from .troops import TOKENS, acting_troop, conquering_declined, hand_for_conquest


def awaiting(state: GameState) -> set[int]:
    """The seats whose input the game waits for: the player on turn, or the next defender to redeploy."""
    seat = awaited(state)
    return set() if seat is None else {seat}


def awaited(state: GameState) -> int | None:
    """The one seat :func:`awaiting` holds, or None once the game is over (no set made: asked every step)."""
    phase = state.phase
    if phase == OVER:
        return None
    if phase == DEFEND:
        return state.defenders[0]
    return state.current


def apply(state: GameState, action: Action | Any) -> GameState:
    """Return the state after ``action`` (an :class:`Action` or its JSON form; any other value, a request's
    body as sent, is refused like a malformed action); ``state`` itself is never changed.

    Raises :class:`IllegalAction` with a message for the player. The result's ``last`` says what the step
    did: ``undo_point`` (it revealed information or used chance, so undo stops there), ``die``, ``score``.
    """
    if not isinstance(action, Action):
        action = Action.from_json(action)
    elif not action.checked:
        action.check()  # an Action built by hand is held to what from_json accepts
    seat = action.player
    phase = state.phase
    if phase == OVER:
        raise IllegalAction("The game is over")
    if not 0 <= seat < len(state.players):
        raise IllegalAction(f"There is no player {seat} in this game")
    waiting = state.defenders[0] if phase == DEFEND else state.current  # awaited(state), inlined
    if seat != waiting:
        raise IllegalAction(f"It is not your turn: the game is waiting for player {waiting}")
    troop = state.players[seat].active
    if state.t.abilities or (troop is not None and (troop.hooks or hooks_of(troop)).refuse):
        for ability in vetoes(state, seat):
            refusal = ability.refuse(state, seat, action)
            if refusal:
                raise IllegalAction(refusal)
    handler = _HANDLERS.get(action.type, _ability_action)
    new = state.fork(indexed=True)
    info = handler(new, seat, action)
    if info:
        last = {"kind": action.type, "player": seat, "undo_point": False} | info
    else:
        last = {"kind": action.type, "player": seat, "undo_point": False}
    new.last = last
    if not last["undo_point"] and (
        new.rng != state.rng or (new.combos is not state.combos and _revealed_combo(state, new))
    ):
        # ARCHITECTURE §4: undo stops at a step that used chance or revealed information, whatever the
        # step (e.g. a conquest wiping out an In Decline race whose banner fills a short column).
        last["undo_point"] = True
    return new.done()


def vetoes(state: GameState, seat: int) -> tuple[Ability, ...]:
    """The abilities asked whether ``seat`` may take an action now (``refuse``): those of the player's
    Active race and, on the player's own turn, those with state for this turn."""
    troop = state.players[seat].active
    found = hooks_of(troop).refuse if troop is not None else ()
    if state.t.abilities and seat == state.current and state.phase != DEFEND:
        extra = [a for a in with_turn_state(state, "refuse") if a not in found]
        if extra:
            return found + tuple(extra)
    return found


def _revealed_combo(before: GameState, after: GameState) -> bool:
    if (
        after.combos is before.combos or after.combos == before.combos
    ):  # the usual case, at C speed: the very same Combo objects
        return False
    shown = {(c.race, c.power) for c in before.combos}
    return any((c.race, c.power) not in shown for c in after.combos)


def auto_pass(state: GameState, player: int) -> GameState:
    """The deterministic completion when a deadline passes (ARCHITECTURE §4, "Missed deadline → auto-pass").

    Whatever the player did stands; conquest stops; tokens in hand are placed by the ``auto`` rule; the
    player scores what they hold; the turn ends. A player with no Active race does not pick.
    """
    if player != awaited(state):
        raise IllegalAction(f"Player {player} has nothing to do now")
    new = state.fork(indexed=True)
    info: dict[str, Any] = {"kind": "auto_pass", "player": player, "undo_point": True}
    if new.phase == DEFEND:
        redeploy.auto_redeploy(new, player, own_turn=False)
        turns.defender_done(new, player)
    else:
        if new.phase != REDEPLOY:
            conquest.end_conquests(new, player)
        redeploy.auto_redeploy(new, player, own_turn=True)
        new.edit_player(player).auto_passes += 1
        info["score"] = turns.finish_own_turn(new, player)
    new.last = info
    return new.done()


# -- action handlers --------------------------------------------------------------------------------------
def _pick(state: GameState, seat: int, action: Action) -> dict[str, Any]:
    if state.phase != PICK:
        raise IllegalAction("You already have an Active race; pick a new combo the turn after going In Decline")
    assert action.combo is not None
    pick_combo(state, seat, action.combo)
    return {"undo_point": True}  # the next combo is revealed


def _decline(state: GameState, seat: int, action: Action) -> dict[str, Any]:
    if state.phase != START:
        if state.phase == PICK:
            raise IllegalAction("You have no Active race to put In Decline")
        raise IllegalAction("A race goes In Decline at the start of a turn, instead of conquering")
    go_into_decline(state, seat)
    # Rulebook: "The player can make no conquests during the turn his race goes into decline; his turn ends
    # immediately after scoring!"
    if state.players[seat].auto_passes:  # copy on write: a player left as it was is shared
        state.edit_player(seat).auto_passes = 0
    score = score_turn(state, seat)
    turns.pass_turn(state)
    return {"undo_point": True, "score": score}


def _abandon(state: GameState, seat: int, action: Action) -> None:
    assert action.region is not None
    conquest.abandon(state, seat, action.region)


def _conquer(state: GameState, seat: int, action: Action) -> dict[str, Any]:
    assert action.region is not None
    die = conquest.conquer(state, seat, action.region, action.troop)
    return {} if die is None else {"die": die}


def _final_conquest(state: GameState, seat: int, action: Action) -> dict[str, Any]:
    assert action.region is not None
    die = conquest.final_conquest(state, seat, action.region, action.troop)
    return {"undo_point": True, "die": die}


def _end_conquest(state: GameState, seat: int, action: Action) -> None:
    if state.phase == PICK and not state.combos:
        conquest.end_conquests(state, seat)
        return
    if state.phase not in (START, CONQUER):
        raise IllegalAction("Your conquests are already over" if state.phase == REDEPLOY else "Pick a combo first")
    conquest.end_conquests(state, seat)


def _redeploy(state: GameState, seat: int, action: Action) -> None:
    if state.phase not in (REDEPLOY, DEFEND):
        raise IllegalAction("Redeployment comes after your conquests: end your conquests first")
    troop = acting_troop(state, seat, action.troop)
    if troop.declined and not _declined_redeploys(state, troop, state.phase == REDEPLOY):
        raise IllegalAction(
            f"Your In Decline {shown(troop.race)} neither conquered this turn nor have tokens in hand to redeploy"
        )
    redeploy.redeploy(state, seat, state.edit_troop(seat, troop.race), action.tokens, own_turn=state.phase == REDEPLOY)


def _end_turn(state: GameState, seat: int, action: Action) -> dict[str, Any]:
    if state.phase == DEFEND:
        if action.decline:
            # Rulebook, "Stout": "at the end of a regular turn of conquests" - one's own turn only.
            raise IllegalAction(
                f"A {names_with('declines_after_scoring')} race goes In Decline at the end of its own turn, "
                "not after an attack"
            )
        turns.defender_done(state, seat)
        return {"undo_point": True}
    return {"undo_point": True, "score": turns.end_turn(state, seat, action.decline)}


def _ability_action(state: GameState, seat: int, action: Action) -> dict[str, Any] | None:
    owner = ACTION_OWNERS.get(action.type)
    if owner is None:
        raise IllegalAction(f"Unknown action {action.type!r}")
    troop = state.players[seat].active
    if troop is None or owner not in abilities(troop):
        raise IllegalAction(f"'{action.type}' belongs to {owner.name}, which your Active race does not have")
    if (state.phase == DEFEND) != ACTION_KINDS[action.type].defends:
        if state.phase == DEFEND:
            raise IllegalAction(f"'{action.type}' is for your own turn")
        raise IllegalAction(f"'{action.type}' is for an attacked player's redeployment, after the attacker's turn")
    return owner.apply(state, seat, state.edit_troop(seat, troop.race), action)


_HANDLERS: dict[str, Callable[[GameState, int, Action], dict[str, Any] | None]] = {
    "pick": _pick,
    "decline": _decline,
    "abandon": _abandon,
    "conquer": _conquer,
    "final_conquest": _final_conquest,
    "end_conquest": _end_conquest,
    "redeploy": _redeploy,
    "end_turn": _end_turn,
}


# -- legal actions ----------------------------------------------------------------------------------------
def legal_actions(state: GameState, player: int) -> list[Action]:
    """What ``player`` may do now (empty when nothing is awaited from them).

    Choices that cannot be enumerated are one action describing the choice: ``redeploy`` (``regions`` to
    fill, ``count`` tokens to place; for a defender, ``tokens`` holds what each region keeps at least) and
    the abilities' kinds whose ``choice`` is ``"spread"`` or ``"choose"``.
    """
    phase = state.phase  # awaited(state), inlined (asked every step)
    if phase == OVER or player != (state.defenders[0] if phase == DEFEND else state.current):
        return []
    if state._held is not None:  # an indexed state answers regions_of without a scan: nothing to remember
        return _legal_actions(state, player, None)
    with state.reading():
        return _legal_actions(state, player, None)


def legal_choices(state: GameState, player: int) -> tuple[list[Action], list[ConquestOffers]]:
    """:func:`legal_actions` with its ``conquer`` and ``final_conquest`` actions not listed but left to
    ask region by region: ``(actions, offers)``, where ``legal_actions`` lists ``actions`` and every
    ``offers[i].all()`` (those of an In Decline race that still conquers first). For a player that draws
    regions at random and checks only those drawn (``rules.bots.sample_action``). Call it inside
    ``with state.reading():`` to share the regions_of answers with the offers' checks."""
    offers: list[ConquestOffers] = []
    phase = state.phase  # awaited(state), inlined (asked every step)
    if phase == OVER or player != (state.defenders[0] if phase == DEFEND else state.current):
        return [], offers
    if state._held is not None:  # as in legal_actions
        return _legal_actions(state, player, offers), offers
    with state.reading():
        return _legal_actions(state, player, offers), offers


def _legal_actions(state: GameState, player: int, offers: list[ConquestOffers] | None) -> list[Action]:
    """``offers``: a list to put the conquests in as ConquestOffers (legal_choices), or None to list them."""
    phase = state.phase
    out: list[Action] = []
    p = state.players[player]
    if phase == DEFEND:
        out += _redeploy_choices(state, player, own_turn=False)
        if p.active is not None:
            # The abilities' pieces an attack took off the board (``waiting_pieces``), placed again by
            # their kinds that an attacked player takes (``ActionKind.defends``).
            for ability in hooks_of(p.active).waiting_pieces:
                if ability.waiting_pieces(state, player, p.active):
                    placing = ability.legal(state, player, p.active)
                    out += [a for a in placing if ACTION_KINDS[a.type].defends]
        if not redeploy.unplaced(state, player, own_turn=False):
            out.append(offer_at("end_turn", player))
        return out
    troop = p.active
    hooks = NO_HOOKS if troop is None else troop.hooks or hooks_of(troop)  # an Active troop keeps its hooks
    refusers = vetoes(state, player) if hooks.refuse or state.t.abilities else ()
    # (never in the redeploy phase: ``declined_may_conquer`` says None there)
    declined = conquest.declined_may_conquer(state, player) if p.declined and phase != REDEPLOY else None
    if declined is not None:
        _conquests(state, player, declined, DECLINED, out, offers, refusers)
    if phase == PICK:
        out += [offer("pick", player, combo=k) for k in range(min(p.coins + 1, len(state.combos)))]
        if not state.combos:
            out.append(offer_at("end_conquest", player))
        return out
    assert troop is not None
    if phase == START:
        out.append(offer_at("decline", player))
    if phase in (START, CONQUER):
        if not state.t.conquests:
            abandons = offers_by_region("abandon", player)
            out += [abandons[i] for i in state.regions_of(player, troop.race)]
        # Listed, they are vetoed with the whole list below (asked once each); offered region by region,
        # each is vetoed as it is asked.
        _conquests(state, player, troop, ACTIVE, out, offers, () if offers is None else refusers)
        out.append(offer_at("end_conquest", player))
    if phase == REDEPLOY:
        out += _redeploy_choices(state, player, own_turn=True)
        if not redeploy.unplaced(state, player, own_turn=True):
            out.append(offer_at("end_turn", player))
            if hooks.declines_after_scoring:
                out.append(offer("end_turn", player, decline=True))
    for ability in hooks.legal:
        out += ability.legal(state, player, troop)
    if refusers:
        out = [a for a in out if not any(r.refuse(state, player, a) for r in refusers)]
    return out


def _conquests(
    state: GameState,
    seat: int,
    troop: Troop,
    kind: str,
    out: list[Action],
    offers: list[ConquestOffers] | None,
    refusers: tuple[Ability, ...],
) -> None:
    if offers is None:
        out += ConquestOffers(state, seat, troop, kind, refusers).all()
    else:
        offers.append(ConquestOffers(state, seat, troop, kind, refusers))


class ConquestOffers:
    """The ``conquer`` and ``final_conquest`` actions of one troop now, region by region: :meth:`all` for
    ``legal_actions``, :meth:`at` for a player that tries regions one at a time (``rules.bots``)."""

    __slots__ = ("check", "seat", "kind", "hand", "rolled", "refusers", "regions", "_conquer", "_final")

    def __init__(
        self, state: GameState, seat: int, troop: Troop, kind: str, refusers: tuple[Ability, ...] | None = None
    ) -> None:
        self.check = check = ConquestCheck(state, seat, troop)
        self.seat, self.kind = seat, kind
        self.hand = hand_for_conquest(state, seat, troop, check.held)
        #: A die rolled before this conquest waits (``pending_roll``): every region it may conquer is
        #: offered, whatever it costs.
        self.rolled = kind == ACTIVE and check.roll is not None
        self.refusers = vetoes(state, seat) if refusers is None else refusers
        #: The regions to ask :meth:`at` about (none without a token in hand).
        self.regions = check.candidates() if self.hand >= 1 else ()
        self._conquer, self._final = conquest_offers(seat, kind)

    def at(self, region: int) -> Action | None:
        """The action conquering ``region`` (one of :attr:`regions`) now, or None."""
        return None if self.check.candidate_refusal(region) else self._offered(region)

    def all(self) -> list[Action]:
        """Every action :meth:`at` offers, region after region (the regions refused asked no more than
        whether they are: ``ConquestCheck.allowed``)."""
        offered = self._offered
        return [action for action in map(offered, self.check.allowed(self.regions)) if action is not None]

    def _offered(self, region: int) -> Action | None:
        """The action conquering ``region``, which the check allows: a conquest the hand pays for (or any,
        after a die rolled before it), else the final conquest a die may pay the rest of, unless vetoed."""
        cost = self.check.price(region, None)
        if self.rolled or self.hand >= cost:
            action = self._conquer[region]
        elif cost - self.hand <= MAX_DIE_SHORTFALL:
            action = self._final[region]
        else:
            return None
        if self.refusers and any(r.refuse(self.check.state, self.seat, action) for r in self.refusers):
            return None
        return action


def _declined_redeploys(state: GameState, troop: Troop, own_turn: bool) -> bool:
    """An In Decline race redeploys tokens in hand, and, having conquered this turn (``declined_readied``),
    all of them, "playing exactly as if they were still Active tokens" (the race's rule, in its module)."""
    return bool(troop.hand) or (own_turn and RACES[troop.race].declined_readied(state))


def _redeploy_choices(state: GameState, seat: int, own_turn: bool) -> list[Action]:
    out = []
    for troop in state.players[seat].troops():
        if troop.declined and not _declined_redeploys(state, troop, own_turn):
            continue  # asked first: no scan of the regions for an In Decline race that stays put
        held = state.regions_of(seat, troop.race)
        if not held:
            continue
        if troop.declined and troop is not conquering_declined(state, seat):
            # "troop": "declined" names the In Decline race that still conquers; other In Decline races
            # keep one token per region and have nothing to redeploy.
            continue
        if not own_turn and not troop.hand:
            continue  # a defender places only tokens in hand (rules/redeploy.py)
        kind = DECLINED if troop.declined else ACTIVE
        # total_tokens(state, seat, troop), from the regions found above
        placed = troop.hand + sum(map(TOKENS, map(state.regions.__getitem__, held)))
        placed -= redeploy.kept_off_board(state, seat, troop, own_turn)
        # A defender's choice says what each region keeps at least: only tokens in hand are added.
        least = () if own_turn else tuple((i, state.regions[i].tokens) for i in held)
        out.append(redeploy_action(seat, kind, least, tuple(held), placed))
    return out
