"""Signed links (``service.domain.links``): signing at a given time."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from service.domain.links import ADMIN, INVITE, TURN, LinkError, signer_for


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


def test_a_token_kept_after_its_check_is_refused_once_too_old_or_signed_in_the_future(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The process keeps the tokens it checked (a player's every request carries the same one); their age is
    # checked at every call, as itsdangerous checks it.
    signer = signer_for("k" * 32)
    payload = {"g": 1, "s": 0, "k": "secret"}
    token = signer.sign(INVITE, payload)
    assert signer.verify(INVITE, token, max_age=60) == payload
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 61)
    with pytest.raises(LinkError, match="expired"):
        signer.verify(INVITE, token, max_age=60)
    assert signer.verify(INVITE, token) == payload  # no age asked: as itsdangerous answers
    monkeypatch.setattr(time, "time", lambda: real() - 3600)
    with pytest.raises(LinkError, match="expired"):
        signer.verify(INVITE, token, max_age=60)


def test_a_kept_token_gives_a_copy_of_its_payload_and_is_kept_per_purpose() -> None:
    signer = signer_for("k" * 32)
    token = signer.sign(TURN, {"g": 1, "s": 0, "k": "secret"})
    signer.verify(TURN, token)["g"] = 2
    assert signer.verify(TURN, token) == {"g": 1, "s": 0, "k": "secret"}
    with pytest.raises(LinkError):  # each purpose signs with its own salt
        signer.verify(ADMIN, token)


def test_a_link_carries_its_addresss_serial_only_once_it_moved_so_older_links_read_the_same() -> None:
    """``links.with_serial``: an address that never signed out everywhere (serial 0) gets the very tokens it got
    before the serial existed (a mail written again is the same mail); a moved serial is in the payload, and a
    payload without one reads as 0."""
    from service.domain.links import CALENDAR, CHOICES, LinkMaker, serial_of

    maker = LinkMaker(signer_for("k" * 32), "https://example.org")
    began = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
    before = maker.signer.sign(TURN, {"g": 1, "s": 0, "k": "secret"}, at=began)
    assert maker.turn_token(1, 0, "secret", serial=0, at=began) == before
    moved = maker.signer.verify(TURN, maker.turn_token(1, 0, "secret", serial=3, at=began))
    assert moved == {"g": 1, "s": 0, "k": "secret", "n": 3} and serial_of(moved) == 3
    assert serial_of({"g": 1}) == 0
    assert serial_of({"n": "3"}) is None and serial_of({"n": True}) is None and serial_of({"n": -1}) is None
    assert maker.choices_url(7, serial=0) == maker.url(f"/choices/{maker.signer.sign(CHOICES, {'p': 7})}")
    feed = maker.address_calendar_url(7, serial=2, calendar_serial=5).rsplit("/", 1)[1].removesuffix(".ics")
    assert maker.signer.verify(CALENDAR, feed) == {"p": 7, "n": 2, "c": 5}
