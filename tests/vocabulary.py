"""One vocabulary (issue 35): a combo, the map and the time left each have one form in everything a player
reads (pages, mails, the story, the chat, the API's text), taken from one place: ``rules.combo_name``
("Hill Tritons"), "the map", and ``emails.times.left_words`` ("1 day 23 hours left").

:class:`Vocabulary` scans any text for the other forms that were in use ("Tritons · Hill", "Tritons (Hill)",
"the Tritons with Hill", "Tritons + Hill"; "tokens on the board", "The board as it stands"; "Time left: 2
days"). The hidden-information scanner (``tests/hidden_information.py``) runs it on every document of a whole
game, so a new surface is covered as soon as it is scanned there.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import rules


def _names(names: object) -> str:
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))  # type: ignore[call-overload]


_RACE, _POWER = _names(rules.RACES), _names(rules.POWERS)

#: The forms of a combo other than ``rules.combo_name``'s.
OTHER_COMBOS = re.compile(rf"\b(?:{_RACE}) (?:· |\(|with |\+ )(?:{_POWER})\b")
#: The chosen form, looked for so that a scan that finds nothing can be told from one that reads nothing.
COMBOS = re.compile(rf"\b(?:{_POWER}) (?:{_RACE})\b")
#: The board called "the board" where the pages say "the map" (the rulebook's own quoted words apart).
OTHER_BOARDS = re.compile(
    r"\b(?:tokens|[Ee]ncampments) (?:on|off) the board\b|\b[Tt]he board (?:as it stands|at the start|after)\b"
    r"|\bleave the board\b|\bsees? the board\b"
)
#: Time left said as a label before a bare duration, where everything else says "2 days left".
OTHER_TIMES = re.compile(r"\bTime left:\s+\d")


@dataclass
class Vocabulary:
    found: list[str] = field(default_factory=list)
    combos_seen: int = 0

    def scan(self, text: str, where: str) -> None:
        text = html.unescape(text)
        self.combos_seen += len(COMBOS.findall(text))
        for kind, pattern in (("combo", OTHER_COMBOS), ("board", OTHER_BOARDS), ("time left", OTHER_TIMES)):
            for match in pattern.finditer(text):
                if len(self.found) < 50:
                    self.found.append(f"{where}: {kind} as {match.group(0)!r}")

    def assert_one_form(self) -> None:
        assert not self.found, "another form of a word in use:\n" + "\n".join(self.found[:20])
        assert self.combos_seen > 0, "no combo was ever read: the scan cannot work"
