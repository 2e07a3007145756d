"""Signed links (``service.domain.links``): signing at a given time."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from service.domain.links import TURN, LinkError, signer_for


def test_a_link_signed_at_a_given_time_is_the_same_token_each_time_and_still_verifies() -> None:
    signer = signer_for("k" * 32)
    payload = {"g": 1, "s": 0, "k": "secret"}
    began = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
    first, second = signer.sign(TURN, payload, at=began), signer.sign(TURN, payload, at=began)
    assert first == second
    assert signer.verify(TURN, first) == payload
    assert signer.sign(TURN, payload, at=datetime(2026, 11, 2, tzinfo=UTC)) != first
    # The time is inside the signature: changing it by hand breaks the link.
    tampered = first.rsplit(".", 2)
    tampered[1] = signer.sign(TURN, payload).rsplit(".", 2)[1]
    with pytest.raises(LinkError):
        signer.verify(TURN, ".".join(tampered))
