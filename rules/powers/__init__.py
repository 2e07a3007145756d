"""The 20 special powers (rulebook, "Special Powers"); each module registers one Power."""

from . import (  # noqa: F401  (imported to register)
    alchemist,
    berserk,
    bivouacking,
    commando,
    diplomat,
    dragon_master,
    flying,
    fortified,
    heroic,
    merchant,
    mounted,
    pillaging,
    seafaring,
    spirit,
    stout,
    terrain,
    underworld,
    wealthy,
)
