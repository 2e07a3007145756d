"""Orders written in a mail (ARCHITECTURE §10): a small grammar, read line by line, each order turned into the
actions it takes, one at a time, against the state of that moment.

The grammar (upper or lower case; commas, full stops and ``#`` are ignored; ``;`` separates two orders
on one line)::

    pick 3                  pick the 3rd combo of the column (numbered from 1, the cheapest, as on the page)
    decline                 put your Active race In Decline (a Stout race: at the end of the turn)
    conquer 7               conquer region 7; with too few tokens, the final conquest with the die
    conquer 7 9 12          conquer 7, then 9, then 12
    abandon 5               give up region 5 (before your first conquest)
    redeploy 7:3 9:1        3 tokens on region 7, 1 on region 9; regions not named keep what they have
    end                     end the conquests, place the tokens still in hand, end the turn
    help                    nothing: the answer lists what you may do now

and every race's and power's own verbs, declared in its module (``Ability.verbs``, :class:`Verb`), e.g.
``dragon 12``, ``fortress 5``, ``heroes 3 7``, ``encamp 3:2 5:1``, ``ally 2``, ``convert 9``, ``berserk``.

The reading stops at the first line that does not begin with a verb (the rest is taken as a note to
oneself, a greeting, a signature the reply parser left): a mail whose first line is not an order has
none, and :func:`parse` says which line it could not read. An order with a verb but unreadable arguments
(``conquer seven``) is an order with a :attr:`Order.problem`: it fails where it stands.

Nothing here does I/O; ``service.domain.inbound`` applies the actions through the same domain operation
as the turn page.

>>> orders = parse("Conquer 7, 9\\nredeploy 7:3 9:1\\nend\\n\\nThanks!")
>>> [(o.word, o.args) for o in orders.orders], orders.stopped_at
([('conquer', (7, 9)), ('redeploy', ((7, 3), (9, 1))), ('end', ())], 'Thanks!')
>>> parse("conquer seven").orders[0].problem
"'conquer' takes region numbers, e.g. 'conquer 7 9 12'; 'seven' is not one"
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .abilities import ACTION_OWNERS, VERBS, hooks_of
from .actions import ACTIVE, DECLINED, Action, IllegalAction, Verb
from .cost import conquest_breakdown
from .engine import awaiting, legal_actions
from .redeploy import unplaced
from .regions import region_markers
from .state import CONQUER, DEFEND, PICK, REDEPLOY, START, GameState
from .telling import combo_name, plural, region_name
from .troops import acting_troop

#: The base game's verbs. ``conquer`` takes one region per step; ``end`` and ``decline`` may take several
#: steps (see :class:`Intent`).
BASE_VERBS: tuple[Verb, ...] = (
    Verb("pick", "pick", "region", "pick the combo of that number (1 is the first of the column)"),
    Verb("decline", "decline", "none", "put your Active race In Decline"),
    Verb("conquer", "conquer", "regions", "conquer these regions, one after the other"),
    Verb("abandon", "abandon", "region", "give up a region before your first conquest"),
    Verb("redeploy", "redeploy", "tokens", "tokens on each region named (region:count); the others keep theirs"),
    Verb("end", "end_turn", "none", "end the conquests, place the tokens still in hand, end the turn"),
    Verb("help", "help", "none", "do nothing: the answer lists what you may do now"),
)
#: A few other words for the same orders.
SYNONYMS = {"done": "end", "pass": "end", "attack": "conquer", "take": "conquer", "choose": "pick"}
#: How many orders one mail may carry; the rest are not read (a mail is a turn, not a script).
MAX_ORDERS = 40


def verbs() -> dict[str, Verb]:
    """Every verb known now: the base game's and the registered races' and powers'."""
    found = {verb.word: verb for verb in BASE_VERBS}
    for word, verb in VERBS.items():
        assert word not in found, f"the verb {word!r} of {ACTION_OWNERS[verb.action].name} is a base verb"
        found[word] = verb
    return found


@dataclass(frozen=True, slots=True)
class Order:
    """One order as written: its line, its verb's word and its arguments (numbers, ``(region, count)``
    pairs, or a player's name as text), or the :attr:`problem` that makes it unreadable."""

    text: str
    word: str
    args: tuple[Any, ...] = ()
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Orders:
    orders: tuple[Order, ...]
    #: The first line that was not an order (reading stopped there), or None.
    stopped_at: str | None = None


_SPLIT = re.compile(r"[;\n]")
_PAIR = re.compile(r"^(\d{1,3})[:=x](\d{1,3})$")


#: A greeting on the first line of a reply ("Hi there,", "Bonjour !"), in the languages of the mail clients'
#: quote headers the service reads: it is skipped, not taken for the end of the orders.
_GREETING = re.compile(
    r"(?i)^(?:hi|hello|hey|hiya|dear|greetings|good (?:morning|afternoon|evening|day)|bonjour|bonsoir|salut|"
    r"coucou|hallo|moin|servus|guten (?:tag|morgen|abend)|liebe|lieber|hola|buenas|buenos días|querid[oa]s?|ciao)"
    r"\b"
)


def is_greeting(line: str) -> bool:
    """Whether ``line`` (not an order) reads as the greeting a reply may open with: a greeting word, or a
    few words ending with a comma ("Team," "Ann,"); not a sentence that opens with one.

    >>> is_greeting("Hi there,"), is_greeting("Bonjour à tous !"), is_greeting("Ann,"), is_greeting("Thanks!")
    (True, True, True, False)
    >>> is_greeting("Hello! I attack the hills")
    False
    """
    line = line.strip()
    words = len(line.split())
    if _GREETING.match(line):
        return words <= 4 or (line.endswith(",") and words <= 8)
    return line.endswith(",") and words <= 3


def parse(text: str) -> Orders:
    """The orders at the top of ``text`` (a reply without its quoted part), as the grammar reads them; a
    greeting on its first line is skipped (:func:`is_greeting`).

    >>> [o.text for o in parse("Hi there,\\n\\npick 2\\nend").orders]
    ['pick 2', 'end']
    """
    orders: list[Order] = []
    first = True
    for raw in _SPLIT.split(text):
        line = " ".join(raw.replace(",", " ").replace("#", " ").split()).strip(" .!")
        if not line:
            continue
        words = line.lower().split()
        word = SYNONYMS.get(words[0], words[0])
        verb = verbs().get(word)
        greeting, first = first and verb is None and is_greeting(raw), False
        if greeting:
            continue
        if verb is None:
            return Orders(tuple(orders), raw.strip()[:200])
        if len(orders) >= MAX_ORDERS:
            return Orders(tuple(orders), raw.strip()[:200])
        orders.append(_read(line, verb, words[1:]))
    return Orders(tuple(orders), None)


def _read(line: str, verb: Verb, words: list[str]) -> Order:
    word = verb.word
    if verb.takes == "none":
        # "end turn", "decline now": a trailing word or two is harmless.
        if any(w.isdigit() for w in words):
            return Order(line, word, problem=f"'{word}' takes nothing after it")
        return Order(line, word)
    if verb.takes == "seat":
        if not words:
            return Order(line, word, problem=f"'{word}' takes a player's number or name, e.g. '{word} 2'")
        return Order(line, word, (" ".join(line.split()[1:]),))
    if verb.takes in ("region", "regions"):
        example = f"'{word} 7'" if verb.takes == "region" else f"'{word} 7 9 12'"
        what = "a region number" if word != "pick" else "a combo number"
        if not words:
            return Order(line, word, problem=f"'{word}' takes {what}, e.g. {example}")
        numbers = []
        for w in words:
            w = w.removeprefix("region").removeprefix("r")
            if not w.isdigit() or len(w) > 3:
                kind = "region numbers" if verb.takes == "regions" else what
                return Order(line, word, problem=f"'{word}' takes {kind}, e.g. {example}; {w!r} is not one")
            numbers.append(int(w))
        if verb.takes == "region" and len(numbers) > 1:
            return Order(line, word, problem=f"'{word}' takes one {what[2:]}, e.g. {example}")
        return Order(line, word, tuple(numbers))
    # tokens: region:count pairs
    pairs: list[tuple[int, int]] = []
    for w in words:
        found = _PAIR.match(w)
        if found is None:
            return Order(
                line, word, problem=f"'{word}' takes region:count pairs, e.g. '{word} 7:3 9:1'; {w!r} is not one"
            )
        region, count = int(found.group(1)), int(found.group(2))
        if region in dict(pairs):
            return Order(line, word, problem=f"'{word}': region {region} is named twice")
        pairs.append((region, count))
    if not pairs and word != "encamp":
        return Order(line, word, problem=f"'{word}' takes region:count pairs, e.g. '{word} 7:3 9:1'")
    return Order(line, word, tuple(pairs))


# -- from an order to actions ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Intent:
    """One thing an order asks for: ``conquer 7 9`` asks for two. :meth:`next_action` gives the action that
    carries it out from ``state``; ``end`` and ``decline`` may take several (end the conquests, place the
    tokens in hand, end the turn), so they are asked again after each until they give None."""

    word: str
    arg: Any = None
    #: Asked again after each of its actions until it gives None.
    repeats: bool = False

    def next_action(self, state: GameState, seat: int, names: Sequence[str] = ()) -> Action | None:
        """The action to apply now, None when there is nothing (more) to do; :class:`IllegalAction`, with
        the reason, when the order cannot be carried out from here."""
        if seat not in awaiting(state):
            if self.repeats:
                return None
            raise IllegalAction("It is not your turn any more")
        return _RESOLVERS.get(self.word, _ability)(self, state, seat, names)


def intents(order: Order) -> Iterator[Intent]:
    """What ``order`` asks for, in order (its :attr:`Order.problem` must be None)."""
    verb = verbs()[order.word]
    if order.word == "conquer":
        for region in order.args:
            yield Intent("conquer", region)
    elif order.word in ("end", "decline"):
        yield Intent(order.word, None, repeats=True)
    elif verb.takes in ("region", "seat"):
        yield Intent(order.word, order.args[0])
    elif verb.takes == "none":
        yield Intent(order.word)
    else:
        yield Intent(order.word, order.args)


def _pick(intent: Intent, state: GameState, seat: int, names: Sequence[str]) -> Action:
    number = int(intent.arg)
    if state.phase != PICK:
        raise IllegalAction("You already have an Active race: there is nothing to pick this turn")
    if not 1 <= number <= len(state.combos):
        raise IllegalAction(f"The combos are numbered 1 to {len(state.combos)}")
    return Action("pick", seat, combo=number - 1)


def _conquer(intent: Intent, state: GameState, seat: int, names: Sequence[str]) -> Action:
    region = int(intent.arg)
    if state.phase == REDEPLOY:
        raise IllegalAction("Your conquests are over this turn: redeploy, then end the turn")
    offered = [a for a in legal_actions(state, seat) if a.region == region and a.type in ("conquer", "final_conquest")]
    for kind, troop in (("conquer", ACTIVE), ("final_conquest", ACTIVE), ("conquer", DECLINED)):
        for action in offered:
            if action.type == kind and action.troop == troop:
                return action
    if offered:
        return offered[0]
    # Not offered: the rules say why (apply refuses it with their reason).
    troop = DECLINED if state.phase == PICK else ACTIVE
    return Action("conquer", seat, region=region, troop=troop)


def _abandon(intent: Intent, state: GameState, seat: int, names: Sequence[str]) -> Action:
    return Action("abandon", seat, region=int(intent.arg))


def _redeploy(intent: Intent, state: GameState, seat: int, names: Sequence[str]) -> Action:
    wanted = dict(intent.arg)
    if state.phase in (START, CONQUER):
        return Action("end_conquest", seat)  # redeploying ends the conquests; asked again for the redeploy
    choices = [a for a in legal_actions(state, seat) if a.type == "redeploy"]
    for choice in sorted(choices, key=lambda a: a.troop != ACTIVE):
        if set(wanted) <= set(choice.regions):
            spread = {r: state.regions[r].tokens for r in choice.regions} | wanted
            return Action("redeploy", seat, troop=choice.troop, tokens=tuple(sorted(spread.items())))
    if not choices:
        raise IllegalAction("You have nothing to redeploy now")
    held = sorted({r for choice in choices for r in choice.regions})
    foreign = sorted(set(wanted) - set(held))
    raise IllegalAction(
        f"Region{'s' if len(foreign) > 1 else ''} {', '.join(map(str, foreign))} "
        f"{'are' if len(foreign) > 1 else 'is'} not yours to redeploy on; yours: {', '.join(map(str, held))}"
    )


def _end(intent: Intent, state: GameState, seat: int, names: Sequence[str], decline: bool = False) -> Action | None:
    phase = state.phase
    if phase == PICK:
        if not state.combos:
            return Action("end_conquest", seat)
        raise IllegalAction("Pick a combo first (e.g. 'pick 1')")
    if phase in (START, CONQUER):
        return Action("end_conquest", seat)
    own_turn = phase != DEFEND
    if unplaced(state, seat, own_turn):
        placed = auto_distribution(state, seat)
        if placed is not None:
            return placed
    return Action("end_turn", seat, decline=decline)


def _decline(intent: Intent, state: GameState, seat: int, names: Sequence[str]) -> Action | None:
    phase = state.phase
    if phase == START:
        return Action("decline", seat)
    troop = state.players[seat].active
    if phase in (CONQUER, REDEPLOY) and troop is not None and hooks_of(troop).declines_after_scoring:
        if state.last.get("kind") == "end_turn":
            return None
        return _end(intent, state, seat, names, decline=True)
    if phase == PICK:
        raise IllegalAction("You have no Active race to put In Decline")
    raise IllegalAction("A race goes In Decline at the start of a turn, instead of conquering")


def _help(intent: Intent, state: GameState, seat: int, names: Sequence[str]) -> None:
    return None


def _ability(intent: Intent, state: GameState, seat: int, names: Sequence[str]) -> Action:
    verb = verbs()[intent.word]
    if verb.takes == "none":
        return Action(verb.action, seat)
    if verb.takes == "region":
        return Action(verb.action, seat, region=int(intent.arg))
    if verb.takes == "regions":
        return Action(verb.action, seat, regions=tuple(intent.arg))
    if verb.takes == "tokens":
        return Action(verb.action, seat, tokens=tuple(sorted(intent.arg)))
    return Action(verb.action, seat, target=player_named(str(intent.arg), state, names))


def player_named(text: str, state: GameState, names: Sequence[str]) -> int:
    """The seat a player means by ``text``: a number as the game shows it (1 = the first seat) or a name.

    >>> from rules.setup import new_game
    >>> state, names = new_game(3, seed="s"), ["Ann", "Bob", "Cy"]
    >>> player_named("2", state, names), player_named("cy", state, names)
    (1, 2)
    """
    text = text.strip()
    if text.isdigit() and 1 <= int(text) <= len(state.players):
        return int(text) - 1
    for seat, name in enumerate(names):
        if name.strip().lower() == text.lower():
            return seat
    raise IllegalAction(f"There is no player {text!r} in this game: give their number (1 to {len(state.players)})")


#: The base verbs' resolvers; every race's and power's verb resolves by :func:`_ability`.
_RESOLVERS: dict[str, Callable[[Intent, GameState, int, Sequence[str]], Action | None]] = {
    "pick": _pick,
    "conquer": _conquer,
    "abandon": _abandon,
    "redeploy": _redeploy,
    "end": _end,
    "decline": _decline,
    "help": _help,
}


def auto_distribution(state: GameState, seat: int) -> Action | None:
    """A ``redeploy`` placing the tokens still in hand by the ``auto`` rule (ARCHITECTURE §4: one at a time on
    the region with the fewest tokens, ties to the lowest number), for the first troop with some; None if
    none has."""
    for choice in legal_actions(state, seat):
        if choice.type != "redeploy":
            continue
        spread = {r: state.regions[r].tokens for r in choice.regions}
        extra = (choice.count or 0) - sum(spread.values())
        if extra <= 0:
            continue
        for _ in range(extra):
            spread[min(spread, key=lambda r: (spread[r], r))] += 1
        return Action("redeploy", seat, troop=choice.troop, tokens=tuple(sorted(spread.items())))
    return None


# -- the legal actions as orders ------------------------------------------------------------------------------
def describe(state: GameState, seat: int, names: Sequence[str] = ()) -> list[str]:
    """What ``seat`` may do now, one line per kind of order, each beginning with the order to write:
    what a turn mail and an answer list. Public facts only (the combos' coins lie on the table)."""
    actions = legal_actions(state, seat)
    if not actions:
        return []
    lines: list[str] = []
    by_type: dict[str, list[Action]] = {}
    for action in actions:
        by_type.setdefault(action.type, []).append(action)
    if "pick" in by_type:
        for action in by_type["pick"]:
            combo = state.combos[action.combo or 0]
            extra = f", {combo.coins} coin{'s' if combo.coins != 1 else ''} on it" if combo.coins else ""
            cost = f"costs {action.combo} coin{'s' if action.combo != 1 else ''}" if action.combo else "free"
            lines.append(f"pick {(action.combo or 0) + 1}  -  {combo_name(combo.race, combo.power)} ({cost}{extra})")
    if "decline" in by_type:
        lines.append("decline  -  put your Active race In Decline (your turn ends after scoring)")
    conquests = by_type.get("conquer", []) + by_type.get("final_conquest", [])
    if conquests:
        targets = []
        for action in sorted(conquests, key=lambda a: a.region or 0):
            note = " (with the die)" if action.type == "final_conquest" else ""
            note += " (In Decline race)" if action.troop == DECLINED else ""
            targets.append(f"{action.region}{note}")
        lines.append("conquer R [R ...]  -  regions you may conquer now: " + ", ".join(_unique(targets)))
    if "abandon" in by_type:
        held = ", ".join(str(a.region) for a in by_type["abandon"])
        lines.append(f"abandon R  -  give up one of your regions first: {held}")
    for action in by_type.get("redeploy", []):
        regions = ", ".join(str(r) for r in action.regions)
        if state.phase == DEFEND:
            now = " ".join(f"{r}:{n}" for r, n in action.tokens)
            in_hand = (action.count or 0) - sum(n for _, n in action.tokens)
            lines.append(
                f"redeploy R:N ...  -  add your {in_hand} token{'s' if in_hand != 1 else ''} in hand to your regions "
                f"(now {now}); each count is the region's new total"
            )
        else:
            troop = "In Decline " if action.troop == DECLINED else ""
            lines.append(
                f"redeploy R:N ...  -  spread your {action.count} {troop}tokens over {regions} "
                "(regions not named keep what they have)"
            )
    if "end_conquest" in by_type or "end_turn" in by_type:
        if state.phase == DEFEND:
            lines.append("end  -  done: tokens still in hand go to your regions with the fewest")
        else:
            lines.append("end  -  end your turn (tokens still in hand go to your regions with the fewest)")
    if any(a.type == "end_turn" and a.decline for a in actions):
        lines.append("decline  -  end your turn and put your race In Decline")
    words = {verb.action: verb for verb in VERBS.values()}
    for kind, offered in by_type.items():
        verb = words.get(kind)
        if verb is None:
            continue
        if verb.takes == "none":
            lines.append(f"{verb.word}  -  {verb.help}")
        elif verb.takes == "seat":
            who = ", ".join(_seat_name(a.target, names) for a in offered if a.target is not None)
            lines.append(f"{verb.word} P  -  {verb.help}: {who}")
        elif verb.takes == "region":
            where = ", ".join(str(a.region) for a in offered)
            lines.append(f"{verb.word} R  -  {verb.help}: {where}")
        else:
            where = ", ".join(str(r) for r in offered[0].regions)
            shape = "R:N ..." if verb.takes == "tokens" else "R R"
            count = f" (up to {offered[0].count})" if offered[0].count is not None else ""
            lines.append(f"{verb.word} {shape}  -  {verb.help}{count}, on {where}")
    return lines


def conquests(state: GameState, seat: int, names: Sequence[str] = ()) -> list[str]:
    """Each region ``seat`` may conquer now, one line each, in region order: its name, what conquering it
    costs with the parts of the cost (rulebook, "Conquering a Region": the cost function's breakdown, as the
    turn page shows it), and what holds it. What a turn mail, a reminder and an answer list for text play
    (ARCHITECTURE §10); public facts only: the board is on the table.

    >>> from rules import new_game, apply, Action
    >>> orders = conquests(apply(new_game(3, seed="conquests-0"), Action("pick", 0, combo=0)), 0)
    >>> orders[0]
    'Forest 1: 2 tokens (2 base); empty'
    """
    lines: list[str] = []
    seen: set[int] = set()
    for action in sorted(legal_actions(state, seat), key=lambda a: (a.region or 0, a.type)):
        if action.type not in ("conquer", "final_conquest") or action.region is None or action.region in seen:
            continue
        seen.add(action.region)
        try:
            cost = conquest_breakdown(state, seat, acting_troop(state, seat, action.troop), action.region)
        except IllegalAction:
            continue
        die = ", with the die" if action.type == "final_conquest" else ""
        troop = " (your In Decline race)" if action.troop == DECLINED else ""
        parts = str(cost).rsplit(" = ", 1)[0]
        lines.append(
            f"{region_name(state, action.region)}{troop}: {plural(cost.total, 'token')} ({parts}){die}; "
            f"{_holder(state, action.region, names)}"
        )
    return lines


def _holder(state: GameState, region: int, names: Sequence[str]) -> str:
    """What holds ``region``: "empty", "Lost Tribes (1 token)", "Ann's Orcs (3 tokens)", and its markers."""
    here = state.regions[region]
    if not here.tokens:
        held = "empty"
    elif here.owner < 0:
        held = f"held by the {here.race or 'Lost Tribes'} ({plural(here.tokens, 'token')})"
    else:
        name = names[here.owner] if here.owner < len(names) else f"Player {here.owner + 1}"
        held = f"held by {name}'s {here.race} ({plural(here.tokens, 'token')})"
    shown = region_markers(state, region).items()
    markers = [name if count is True else plural(int(count), name) for name, count in shown]
    return held + (", " + ", ".join(markers) if markers else "")


def _seat_name(seat: int, names: Sequence[str]) -> str:
    name = names[seat] if seat < len(names) else f"Player {seat + 1}"
    return f"{seat + 1} ({name})"


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def grammar() -> list[str]:
    """The grammar in a few lines, for an answer to a mail that had no order in it."""
    lines = [
        "pick 3 | decline | conquer 7 | conquer 7 9 12 | abandon 5 | redeploy 7:3 9:1 | end | help",
    ]
    own = sorted(VERBS.values(), key=lambda v: v.word)
    if own:
        lines.append("and with the right race or power: " + ", ".join(_example(v) for v in own))
    return lines


def _example(verb: Verb) -> str:
    return {
        "none": verb.word,
        "region": f"{verb.word} 7",
        "regions": f"{verb.word} 3 7",
        "tokens": f"{verb.word} 3:2 7:1",
        "seat": f"{verb.word} 2",
    }[verb.takes]
