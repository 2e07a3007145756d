"""The 14 races (rulebook, "The Races"); each module registers one :class:`rules.abilities.Race`."""

from . import (  # noqa: F401  (imported to register)
    amazons,
    dwarves,
    elves,
    ghouls,
    giants,
    halflings,
    humans,
    orcs,
    ratmen,
    skeletons,
    sorcerers,
    tritons,
    trolls,
    wizards,
)
