"""A scanner for hidden information (ARCHITECTURE §4): nothing a player receives before the end holds another
player's coins, whether in a page, an API response or a mail.

Two checks, for every document a seat receives:

- **structure** (JSON): every ``players[i].coins`` of another seat is null, a turn's ``score`` appears only
  in the recipient's own ``last``, and the final ``result`` and ``seed`` are absent;
- **canaries** (any text: JSON, HTML, mail parts): each seat's coins are first set to a large number that
  nothing else in the game produces (:func:`with_canaries`, :func:`plant_canaries`), and every value they
  take afterwards is looked for, in every spelling a page might use (``7340017``, ``7,340,017``,
  ``7 340 017``…). A page that prints a rival's coins is caught even when no JSON key says "coins".

The canaries only work if the scanner can find them: :meth:`CoinWatch.confirm_own_coins_seen` checks that
each seat's own (visible) coins were found in its own documents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.vocabulary import Vocabulary

#: Seat ``i`` starts with ``CANARY + i * CANARY_STEP`` coins: far apart, and far from any id, version,
#: region number, token count or timestamp part the game shows.
CANARY = 7_340_017
CANARY_STEP = 1_100_009


def plant_canaries(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` (rules JSON) with every seat's coins raised to its canary value (plus what it had).

    For a game whose stored snapshot may be changed under it; a game replayed from its log (undo, the
    history page) would not have them: use :func:`with_canaries` there.
    """
    planted = json.loads(json.dumps(state))
    for seat, player in enumerate(planted["players"]):
        player["coins"] = CANARY + seat * CANARY_STEP + int(player["coins"] or 0)
    return planted


def with_canaries(new_game: Callable[..., Any]) -> Callable[..., Any]:
    """``rules.new_game`` starting every seat with its canary coins, so replays from the seed have them too."""

    def canaried(*args: Any, **kwargs: Any) -> Any:
        state = new_game(*args, **kwargs)
        for seat, player in enumerate(state.players):
            player.coins += CANARY + seat * CANARY_STEP
        return state

    return canaried


#: A number as a page or a mail may print it: 7340017, 7,340,017, 7.340.017, 7 340 017 (any space), 7_340_017.
NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:[,. \u00a0\u202f\u2009_']\d{3})+(?!\w)|(?<![\w.])\d+(?!\w)")


@dataclass
class Leak:
    seat: int
    where: str
    what: str

    def __str__(self) -> str:
        return f"seat {self.seat} saw {self.what} in {self.where}"


@dataclass
class CoinWatch:
    """What every seat's coins have been, and where a seat was shown another's."""

    players: int
    values: dict[int, set[int]] = field(default_factory=dict)
    leaks: list[Leak] = field(default_factory=list)
    own_seen: set[int] = field(default_factory=set)
    scanned: int = 0
    #: One vocabulary (issue 35), checked on every document scanned here.
    words: Vocabulary = field(default_factory=Vocabulary)

    def __post_init__(self) -> None:
        self.values = {seat: set() for seat in range(self.players)}

    def note(self, state: dict[str, Any] | None) -> None:
        """Record the true coins of every seat (from the database's state), before scanning what follows."""
        if state:
            for seat, player in enumerate(state["players"]):
                if player.get("coins") is not None and player["coins"] >= CANARY // 2:
                    self.values[seat].add(int(player["coins"]))

    def _owners(self) -> dict[int, int]:
        return {value: seat for seat, values in self.values.items() for value in values}

    def scan_text(self, text: str, viewer: int | None, where: str) -> None:
        """Look for any other seat's coins in ``text`` (a page, a mail part, a JSON body as text)."""
        self.scanned += 1
        self.words.scan(text, where)
        owners = self._owners()
        for found in NUMBER.finditer(text):
            seat = owners.get(int(re.sub(r"\D", "", found.group(0))))
            if seat is None:
                continue
            if seat == viewer:
                self.own_seen.add(seat)
            else:
                self.leaks.append(Leak(_who(viewer), where, f"seat {seat}'s coins ({found.group(0)})"))

    def scan_json(self, body: Any, viewer: int | None, where: str) -> None:
        """The structural check, then the canary check on the body as text."""
        for path, node in _walk(body):
            if not isinstance(node, dict):
                continue
            players = node.get("players")
            if isinstance(players, list) and all(isinstance(p, dict) and "coins" in p for p in players):
                for seat, player in enumerate(players):
                    if seat != viewer and player["coins"] is not None:
                        self.leaks.append(Leak(_who(viewer), f"{where} {path}.players[{seat}]", "coins"))
            last = node.get("last")
            if isinstance(last, dict) and "score" in last and last.get("player") != viewer:
                self.leaks.append(Leak(_who(viewer), f"{where} {path}.last", f"seat {last.get('player')}'s score"))
            for key in ("result", "seed", "rng"):  # the final table, and what would tell future dice
                if node.get(key) not in (None, [], ""):
                    self.leaks.append(Leak(_who(viewer), f"{where} {path}.{key}", key))
        self.scan_text(json.dumps(body, ensure_ascii=False), viewer, where)

    def assert_no_leaks(self) -> None:
        assert not self.leaks, "hidden information leaked:\n" + "\n".join(str(leak) for leak in self.leaks[:20])

    def confirm_own_coins_seen(self, seats: Iterable[int]) -> None:
        """The canaries are visible where they should be: so they would be found where they should not."""
        missing = set(seats) - self.own_seen
        assert not missing, f"the scanner never found the own coins of seats {sorted(missing)}: it cannot work"


def _who(viewer: int | None) -> int:
    return viewer if viewer is not None else -1


def _walk(node: Any, path: str = "$") -> Iterator[tuple[str, Any]]:
    pending = [(path, node)]
    while pending:
        path, node = pending.pop()
        yield path, node
        if isinstance(node, dict):
            pending.extend((f"{path}.{key}", value) for key, value in node.items())
        elif isinstance(node, list):
            pending.extend((f"{path}[{index}]", value) for index, value in enumerate(node))
