"""emails.messages: one typed message per template, its JSON round trip, its dedupe key, its refusals."""

from __future__ import annotations

import doctest
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from emails import messages, render
from emails.messages import (
    AdminChange,
    AdminLink,
    AdminLogin,
    AutoPassed,
    GameOver,
    HostAlert,
    Invitation,
    Message,
    MessageError,
    RedeployNeeded,
    Reminder,
    YourTurn,
    from_json,
)
from emails.samples import ALL, SAMPLES

DEADLINE = datetime(2026, 3, 3, 13, 0, tzinfo=UTC)


def test_every_template_has_one_message_class_and_its_sample_is_one() -> None:
    folders = {p.name for p in render.TEMPLATES.iterdir() if p.is_dir()}
    assert set(messages.KINDS) == set(messages.CATEGORIES) == folders
    for name, kind in messages.KINDS.items():
        assert kind.template == name
        assert type(SAMPLES[name].mail) is kind


@pytest.mark.parametrize("name", sorted(ALL))
def test_a_message_comes_back_equal_from_its_json(name: str) -> None:
    mail = ALL[name].mail
    stored = json.loads(json.dumps(mail.context()))  # as the outbox row's JSON column gives it back
    assert from_json(mail.template, stored) == mail
    assert from_json(mail.template, stored).context() == stored


def test_times_are_stored_as_iso_8601() -> None:
    assert SAMPLES["your_turn"].context["deadline_at"] == "2026-03-03T13:00:00+00:00"
    assert SAMPLES["admin_change"].mail.context()["deadline_at"] == DEADLINE.replace(day=4).isoformat()


def _step(**fields: Any) -> dict[str, Any]:
    return {**SAMPLES["your_turn"].context, "game_id": 17, **fields}


#: Every dedupe key as the service made it before messages were typed: rows in databases rely on them.
KEYS: list[tuple[Message, str]] = [
    (SAMPLES["invitation"].mail, "game:17:invite:1"),
    (ALL["invitation-replacing"].mail, "game:17:replace:1:sample-new-seat-secret"),
    (AdminLink(game_id=17, game_name="g", admin_url="https://x/admin/t"), "game:17:admin-link"),
    (
        AdminLogin(login_url="https://x/admin/login/t", valid_minutes=30, account_id=3, window=14802465),
        "site-admin:3:sign-in:14802465",
    ),
    (SAMPLES["sign_in"].mail, "address-sign-in:9"),
    (SAMPLES["your_links"].mail, "game:17:links:4:1234567"),
    (YourTurn(**_step(step_key="4:1:-")), "game:17:step:4:1:-"),
    (RedeployNeeded(**_step(step_key="4:0:1", defending=True)), "game:17:step:4:0:1"),
    (SAMPLES["reminder"].mail, "game:17:reminder:4:1:-:7200:1"),
    (SAMPLES["auto_passed"].mail, "game:17:auto-pass:31"),
    (SAMPLES["host_alert"].mail, "game:17:alert:2:2"),
    (SAMPLES["game_over"].mail, "game:17:over:1"),
    (SAMPLES["admin_change"].mail, "game:17:admin:31:4"),
    (ALL["admin_change-outage"].mail, "game:17:outage:2026-03-01T09:10:00+00:00:1"),
    (SAMPLES["confirm_game"].mail, "game:17:confirm"),
    (SAMPLES["orders_answer"].mail, "inbound:52:answer"),
    (SAMPLES["bounce_alert"].mail, "game:17:bounce:2:53"),
    (SAMPLES["seat_to_bot"].mail, "game:17:seat-to-bot:41"),
    (SAMPLES["table_talk"].mail, "game:17:talk:42:1"),
    (SAMPLES["daily_digest"].mail, "digest:4:2026-03-01"),
]


@pytest.mark.parametrize(("mail", "key"), KEYS, ids=[f"{m.template}-{k}" for m, k in KEYS])
def test_the_dedupe_key_names_the_event_as_it_always_did(mail: Message, key: str) -> None:
    assert mail.dedupe_key == key


def test_one_turn_mail_per_step_whoever_reads_it() -> None:
    assert YourTurn(**_step(seat=0)).dedupe_key == YourTurn(**_step(seat=1, player_name="Ann")).dedupe_key


def test_a_row_that_is_not_a_message_is_refused_with_what_is_wrong() -> None:
    good = SAMPLES["auto_passed"].context
    with pytest.raises(MessageError, match="unknown message 'no_such_mail'"):
        from_json("no_such_mail", good)
    with pytest.raises(MessageError, match="^auto_passed: unknown fields coins, secret$"):
        from_json("auto_passed", {**good, "coins": 3, "secret": "x"})
    with pytest.raises(MessageError, match="^auto_passed: missing field version$"):
        from_json("auto_passed", {k: v for k, v in good.items() if k != "version"})
    with pytest.raises(MessageError, match="^your_turn: missing fields game_id, player_name, turn, turns"):
        from_json("your_turn", {"game_name": "Broken"})
    with pytest.raises(MessageError, match="^auto_passed: version: Input should be a valid integer"):
        from_json("auto_passed", {**good, "version": "twelve"})
    with pytest.raises(MessageError, match="unknown field board.regions.0.coins"):
        board = SAMPLES["your_turn"].context["board"]
        from_json("your_turn", _step(board={**board, "regions": [{"terrain": "sea", "coins": 5}]}))
    with pytest.raises(MessageError, match="deadline_at: Input should have timezone info"):
        from_json("reminder", {**SAMPLES["reminder"].context, "deadline_at": "2026-03-03T13:00:00"})
    with pytest.raises(MessageError, match="the context is not a JSON object"):
        from_json("auto_passed", ["not", "an", "object"])  # type: ignore[arg-type]


def test_an_admin_notice_names_its_event() -> None:
    notice = {"game_id": 1, "game_name": "g", "player_name": "p", "actor": "host", "details": {}, "deadline_at": None}
    with pytest.raises(ValueError, match="version and the reader's player_id"):
        AdminChange(**notice, change="paused")
    with pytest.raises(ValueError, match="reader's seat"):
        AdminChange(**notice, change="outage", seat=None)
    with pytest.raises(ValueError, match="change"):
        AdminChange(**notice, change="redecorated", version=2, player_id=3)


def test_messages_are_values() -> None:
    mail = SAMPLES["auto_passed"].mail
    with pytest.raises(ValueError, match="frozen"):
        mail.version = 3  # type: ignore[misc]
    assert mail == AutoPassed(**mail.context())
    assert hash(HostAlert(**SAMPLES["host_alert"].context)) == hash(SAMPLES["host_alert"].mail)


def test_a_message_renders_as_its_template_with_its_context() -> None:
    sample = SAMPLES["reminder"]
    reader = {"now": sample.now, "time_zone": "UTC", "game_url": sample.game_url}
    subject = render.conversation_subject(sample.mail.game_name)
    assert sample.mail.render(**reader) == render.write("reminder", sample.mail.values(**reader), subject=subject)
    assert sample.mail.category == render.REMINDER == messages.CATEGORIES["reminder"]
    assert Invitation.template == "invitation" and GameOver.template == "game_over"
    assert (
        Reminder(**{**sample.context, "deadline_at": DEADLINE})
        .render(now=sample.now, game_url=sample.game_url)
        .headline.startswith("Reminder: 2 hours left")
    )


@pytest.mark.parametrize("name", ["invitation", "your_turn", "redeploy_needed", "reminder", "orders_answer"])
def test_a_row_written_with_the_seat_link_in_it_is_sent_with_the_link_minted_at_sending(name: str) -> None:
    """Rows written before the seat's link was minted at sending hold it as ``turn_url``: still a message, the
    stored link ignored for the one delivery gives."""
    sample = SAMPLES[name]
    stored = {**sample.context, "turn_url": "https://smallworld.example/play/minted-when-written"}
    mail = from_json(name, stored)
    assert mail == sample.mail and "turn_url" not in mail.context()
    text = mail.render(now=sample.now, game_url=sample.game_url).text
    assert "minted-when-written" not in text
    assert sample.game_url is not None and (sample.game_url in text or name == "invitation")


def test_every_kind_declares_its_policy_on_its_class() -> None:
    for name, kind in messages.KINDS.items():
        policy = kind.kind
        assert policy.template == name
        assert policy.category in (render.ESSENTIAL, render.REMINDER, render.NOTICE, render.TALK, render.DIGEST)
        assert policy.audience in (render.PLAYER, render.HOST, render.ADDRESS)
        assert policy.replies in (None, render.ORDERS, render.AT_THE_TABLE)
        assert set(policy.required) <= set(kind.model_fields), name
        # The key names the event by its fields; a kind whose key depends on what happened words it itself.
        assert policy.dedupe or "dedupe_key" in kind.__dict__, name
        assert set(re.findall(r"{(\w+)}", policy.dedupe)) <= set(kind.model_fields), name
    assert {name for name, kind in messages.KINDS.items() if kind.kind.picture} == {"your_turn", "redeploy_needed"}
    assert {name for name, kind in messages.KINDS.items() if not kind.kind.choices} == {
        "confirm_game",
        "admin_login",
        "sign_in",
        # To an address as such (a stranger's mail answered, the operator): no choices page to link.
        "not_read",
        "operator_forward",
    }


def test_the_doctests() -> None:
    assert doctest.testmod(messages).failed == 0


def test_a_bounce_alert_says_only_fixed_words_from_the_status_code_never_a_report_s_text() -> None:
    # Issue 32, finding 8: a forged report's Diagnostic-Code carried a phishing link to the host.
    from emails.messages import BounceAlert

    common = {"game_id": 1, "game_name": "G", "player_name": "Bob", "seat": 1, "address": "b@example.org"}
    common |= {"admin_url": "https://smallworld.example/admin/x", "inbound_id": 3}
    for given, shown in (
        ("550 5.1.1 re-confirm your seat at https://evil.example/login", "5.1.1 mailbox unknown"),
        ("5.2.2", "5.2.2 mailbox full"),
        ("re-confirm your seat at https://evil.example/login", "undelivered"),
    ):
        alert = BounceAlert(**common, reason=given)
        assert alert.reason == shown
        assert BounceAlert.model_validate(alert.context()).reason == shown
