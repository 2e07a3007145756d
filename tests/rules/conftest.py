"""The host's designs a test deals are made known to the engine for the whole process (``rules/designs.py``:
as in a worker, they stay registered); each test here starts from the registry as it found it, so that a test
that lists every race or power (``rules.RACES``) never meets another test's design."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rules.abilities import ABILITIES, unregister


@pytest.fixture(autouse=True)
def forget_designs() -> Iterator[None]:
    known = set(ABILITIES)
    yield
    for name in [name for name, ability in ABILITIES.items() if ability.designed and name not in known]:
        unregister(name)
