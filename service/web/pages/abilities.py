"""What each race and special power does, in one line for the combo table (rulebook, "The Races" and
"Special Powers"; the numbers are the rules engine's)."""

from __future__ import annotations

RACES = {
    "Amazons": "+4 tokens for conquering only; they leave the board at redeployment.",
    "Dwarves": "+1 coin per Mine region, even In Decline.",
    "Elves": "Lose no token when a region of theirs is conquered.",
    "Ghouls": "All tokens stay going In Decline, and In Decline they still conquer.",
    "Giants": "1 token fewer to conquer a region next to a Mountain they hold.",
    "Halflings": "First conquest anywhere; Holes-in-the-Ground protect their first two regions.",
    "Humans": "+1 coin per Farmland region.",
    "Orcs": "+1 coin per non-empty region conquered this turn.",
    "Ratmen": "No power but their number.",
    "Skeletons": "1 new token for every 2 non-empty regions conquered.",
    "Sorcerers": "Once per turn per opponent, replace a lone Active enemy token with one of theirs.",
    "Tritons": "1 token fewer to conquer a region bordering a Sea or the Lake.",
    "Trolls": "A Troll's Lair (+1 defence) in each region, kept In Decline.",
    "Wizards": "+1 coin per Magic Source region.",
}

POWERS = {
    "Alchemist": "+2 coins each turn while Active.",
    "Berserk": "Roll the die before each conquest, then name the target.",
    "Bivouacking": "5 Encampments, +1 defence each, moved at every redeployment.",
    "Commando": "Every conquest costs 1 token fewer.",
    "Diplomat": "At the end of the turn, make peace with one player you did not attack.",
    "Dragon Master": "Once per turn, conquer with 1 token; the Dragon makes the region immune.",
    "Flying": "Conquer any land region, adjacent or not.",
    "Forest": "+1 coin per Forest region.",
    "Fortified": "One Fortress per turn (+1 defence, +1 coin while Active).",
    "Heroic": "2 Heroes make 2 regions immune.",
    "Hill": "+1 coin per Hill region.",
    "Merchant": "+1 coin per region held.",
    "Mounted": "Hills and Farmlands cost 1 token fewer.",
    "Pillaging": "+1 coin per non-empty region conquered this turn.",
    "Seafaring": "Conquer the Seas and the Lake, and keep them In Decline.",
    "Spirit": "In Decline, does not count toward the one-race-In-Decline limit.",
    "Stout": "May go In Decline at the end of a turn of conquests.",
    "Swamp": "+1 coin per Swamp region.",
    "Underworld": "Caverns cost 1 token fewer and are adjacent to each other.",
    "Wealthy": "+7 coins once, at the end of the first turn.",
}
