"""The numbers of the box (``components.md``: "Race banners", "Special power badges", "Other pieces")."""

from __future__ import annotations

#: Race banner value and tokens in the box (the hard cap). Components, "Race banners".
RACE_TOKENS: dict[str, tuple[int, int]] = {
    "Amazons": (6, 15),  # +4 used only for conquest, so 10 to start (the engine adds the 4).
    "Dwarves": (3, 8),
    "Elves": (6, 11),
    "Ghouls": (5, 10),
    "Giants": (6, 11),
    "Halflings": (6, 11),
    "Humans": (5, 10),
    "Orcs": (5, 10),
    "Ratmen": (8, 13),
    "Skeletons": (6, 20),
    "Sorcerers": (5, 18),
    "Tritons": (6, 11),
    "Trolls": (5, 10),
    "Wizards": (5, 10),
}

#: Tokens added by each Special Power badge. Components, "Special power badges".
POWER_TOKENS: dict[str, int] = {
    "Alchemist": 4,
    "Berserk": 4,
    "Bivouacking": 5,
    "Commando": 4,
    "Diplomat": 5,
    "Dragon Master": 5,
    "Flying": 5,
    "Forest": 4,
    "Fortified": 3,
    "Heroic": 5,
    "Hill": 4,
    "Merchant": 2,
    "Mounted": 5,
    "Pillaging": 5,
    "Seafaring": 5,
    "Spirit": 5,
    "Stout": 4,
    "Swamp": 4,
    "Underworld": 5,
    "Wealthy": 4,
}

#: Reinforcement die faces. Components, "Other pieces".
DIE_FACES: tuple[int, ...] = (0, 0, 0, 1, 2, 3)

LOST_TRIBE_TOKENS = 18
TROLL_LAIRS = 10
FORTRESSES = 6
MOUNTAINS = 9
ENCAMPMENTS = 5
HOLES = 2
HEROES = 2

STARTING_COINS = 5
VISIBLE_COMBOS = 6

#: Game turns by player count. Components, "Other pieces".
GAME_TURNS: dict[int, int] = {2: 10, 3: 10, 4: 9, 5: 8}

#: Rulebook, "Conquering a Region": 2 tokens, plus the defences.
BASE_CONQUEST_COST = 2
#: Rulebook, "Final Conquest Attempt": a target at most 3 tokens short.
MAX_DIE_SHORTFALL = 3
