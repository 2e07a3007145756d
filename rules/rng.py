"""A small, serialisable random number generator (SplitMix64).

Randomness is part of the game state (ARCHITECTURE §3): the state stores the generator's single 64-bit word, so a
game replays exactly from its seed and action log, and the JSON stays small.
"""

from __future__ import annotations

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def seed_state(seed: int | str) -> int:
    """Turn any seed (an int or a string) into the generator's starting word."""
    if isinstance(seed, str):
        value = 0
        for byte in seed.encode():
            value = ((value * 131) + byte) & _MASK
        seed = value
    return seed & _MASK


def next_word(state: int) -> tuple[int, int]:
    """Return ``(new_state, 64-bit output)``."""
    state = (state + _GOLDEN) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def below(state: int, n: int) -> tuple[int, int]:
    """Return ``(new_state, k)`` with ``0 <= k < n``, unbiased (rejection sampling)."""
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        state, word = next_word(state)
        if word < limit:
            return state, word % n


def shuffled(state: int, items: list) -> tuple[int, list]:
    """Return ``(new_state, a Fisher-Yates shuffled copy of items)``."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        state, j = below(state, i + 1)
        out[i], out[j] = out[j], out[i]
    return state, out
