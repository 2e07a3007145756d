"""A game's admin page in the browser (Flask's test client, forms sent with their CSRF token): every act,
its audit entry and its mail to the players, the refusals in the domain's words, and who may not come in."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from flask import Flask
from sqlmodel import Session

import rules
from service.domain.models import OutboxMail, Seat, utcnow
from service.infra.db import get_engine
from tests.api.conftest import seat_link

from .browsing import (
    act,
    admin_path,
    audit_of,
    host,
    mails_of,
    messages,
    new_game,
    send,
    stored,
    turn_path,
)

PARIS = ZoneInfo("Europe/Paris")


def notices(app: Flask, game_id: int) -> list[str]:
    """The admin_change mails of a game, as (change, address)."""
    return sorted(f"{m.context['change']} {m.to_email}" for m in mails_of(app, game_id, "admin_change"))


def test_the_admin_link_opens_the_game_s_page_in_the_host_s_time_zone(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Zones")
    browser = host(admin_app, game_id)
    page = browser.get(f"/admin/games/{game_id}")
    assert "You manage this game as the game&#39;s host" in page.text
    assert "Turn</dt><dd>1 of 10" in page.text and "Waiting for</dt><dd>Player 0" in page.text
    local = stored(admin_app, game_id).deadline_at.astimezone(PARIS)  # type: ignore[union-attr]
    assert f"{local:%H:%M %Z} (Europe/Paris)" in page.text, "the host player's zone by default"
    assert 'Time left</dt><dd><span class="countdown"' in page.text

    page = act(browser, game_id, "zone", zone="Asia/Tokyo")
    assert messages(page) == ["done: Times are shown in Asia/Tokyo."]
    assert "(Asia/Tokyo)" in page.text and "(Europe/Paris)" not in page.text
    page = act(browser, game_id, "zone", zone="Mars/Olympus")
    assert messages(page) == [
        "refusal: Mars/Olympus is not a time zone this server knows: try a name like Europe/Paris."
    ]


def test_extend_by_a_duration_and_to_a_moment_in_the_admin_s_zone(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Extend")
    browser = host(admin_app, game_id)
    before = stored(admin_app, game_id).deadline_at
    assert before is not None

    page = act(browser, game_id, "extend", mode="by", amount="1.5", unit="days")
    assert messages(page) == ["done: The deadline was moved; the player the game waits for was told."]
    assert stored(admin_app, game_id).deadline_at == before + timedelta(days=1, hours=12)
    entry = audit_of(admin_app, game_id)[-1]
    assert (entry.actor, entry.act, entry.details["to"]) == (
        "host",
        "extend",
        (before + timedelta(hours=36)).isoformat(),
    )
    # Only the player the game waits for is mailed: the deadline is theirs (issue 18).
    assert notices(admin_app, game_id) == ["deadline_extended p0@extend.example"]

    # To a moment typed in the host's zone (Europe/Paris, the host player's).
    target = (before + timedelta(days=4)).astimezone(PARIS).replace(second=0, microsecond=0)
    page = act(browser, game_id, "extend", mode="to", to=f"{target:%Y-%m-%dT%H:%M}")
    assert stored(admin_app, game_id).deadline_at == target
    assert "moved the deadline to" in page.text and f"{target:%H:%M} CET (Europe/Paris)" in page.text

    # Refusals are the domain's words; nothing changes, nothing is logged.
    logged = len(audit_of(admin_app, game_id))
    page = act(browser, game_id, "extend", mode="to", to="2020-01-01T10:00")
    assert messages(page) == ["refusal: The new deadline is in the past"]
    page = act(browser, game_id, "extend", mode="by", amount="soon", unit="hours")
    assert messages(page) == ["refusal: The extension: 'soon' is not a number."]
    page = act(browser, game_id, "extend", mode="by", amount="90", unit="days")
    assert messages(page) == ["refusal: A deadline can be extended by at most 60 days at a time"]
    assert len(audit_of(admin_app, game_id)) == logged
    assert stored(admin_app, game_id).deadline_at == target


def test_pause_with_a_reason_then_resume_with_the_time_that_was_left(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Pause")
    browser = host(admin_app, game_id)
    page = act(browser, game_id, "pause", reason="")
    assert messages(page) == ["refusal: Say why the game is paused; the players will see it"]

    left = stored(admin_app, game_id).deadline_at - utcnow()  # type: ignore[operator]
    page = act(browser, game_id, "pause", reason="Ann is moving house")
    assert messages(page) == ["done: The game is paused; the players were told why."]
    paused = stored(admin_app, game_id)
    assert paused.status == "paused" and paused.deadline_at is None
    assert abs(paused.paused_remaining - left.total_seconds()) <= 2  # type: ignore[operator]
    assert "Paused because</dt><dd>Ann is moving house" in page.text
    assert f'action="/admin/games/{game_id}/resume"' in page.text and "/extend" not in page.text

    resumed_at = utcnow()
    page = act(browser, game_id, "resume")
    assert messages(page) == ["done: The game runs again with the time that was left; the players were told."]
    deadline = stored(admin_app, game_id).deadline_at
    assert deadline is not None
    assert abs((deadline - resumed_at - timedelta(seconds=paused.paused_remaining or 0)).total_seconds()) <= 2
    assert [(e.actor, e.act) for e in audit_of(admin_app, game_id)] == [("host", "pause"), ("host", "resume")]
    assert audit_of(admin_app, game_id)[0].details["reason"] == "Ann is moving house"
    assert notices(admin_app, game_id) == sorted(
        [f"paused p{i}@pause.example" for i in range(3)] + [f"resumed p{i}@pause.example" for i in range(3)]
    )
    page = send(browser, game_id, "resume")
    assert messages(page) == ["refusal: The game is not paused"]


def test_pass_now_is_confirmed_first_and_refused_once_the_turn_moved_on(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Pass")
    browser = host(admin_app, game_id)
    page = browser.get(f"/admin/games/{game_id}")
    assert f'action="/admin/games/{game_id}/pass"' not in page.text, "no pass button before the confirmation"
    assert "Pass Player 0's turn now…" in page.text

    confirming = browser.get(f"/admin/games/{game_id}?confirm=pass")
    assert "Pass Player 0's turn now?" in confirming.text
    page = act(browser, game_id, "pass", shown="?confirm=pass")
    assert messages(page) == ["done: The turn was passed; the next player was told."]
    state = rules.read_state(stored(admin_app, game_id).state)  # type: ignore[arg-type]
    assert rules.awaiting(state) == {1}
    assert [m.to_email for m in mails_of(admin_app, game_id, "auto_passed")] == ["p0@pass.example"]
    assert [(e.actor, e.act, e.details) for e in audit_of(admin_app, game_id)] == [("host", "pass", {"seat": 0})]

    # A confirmation drawn for Player 1's turn, sent after that turn was passed: refused, not applied to
    # Player 2's turn.
    stale = browser.get(f"/admin/games/{game_id}?confirm=pass")
    act(browser, game_id, "pass", shown="?confirm=pass")
    token = stale.text.split('name="csrf_token" value="')[1].split('"')[0]
    step = stale.text.split('name="step" value="')[1].split('"')[0]
    sent = browser.post(f"/admin/games/{game_id}/pass", data={"csrf_token": token, "step": step})
    page = browser.get(sent.headers["Location"])
    assert messages(page)[0].startswith("refusal: The game moved on since this page was shown")
    assert [e.details["seat"] for e in audit_of(admin_app, game_id)] == [0, 1]


def test_settings_for_the_turns_to_come(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Settings")
    browser = host(admin_app, game_id)
    page = act(
        browser,
        game_id,
        "settings",
        turn_hours="12",
        defender_hours="12",
        reminders=str(6 * 3600),
        redeploy="ask",
        vacation_days="3",
    )
    assert messages(page) == ["done: The settings were changed for the turns to come; the players were told."]
    settings = stored(admin_app, game_id).settings
    assert (settings["turn_length_seconds"], settings["reminders_before_seconds"]) == (12 * 3600, [6 * 3600])
    assert (settings["redeploy"], settings["vacation_days"]) == ("ask", 3)
    assert stored(admin_app, game_id).state["options"]["redeploy"] == "ask"  # type: ignore[index]
    entry = audit_of(admin_app, game_id)[-1]
    assert entry.act == "settings"
    assert entry.details == {
        "turn_length_seconds": 12 * 3600,
        "reminders_before_seconds": [6 * 3600],
        "redeploy": "ask",
        "vacation_days": 3,
    }
    assert "a turn lasts 12 hours; reminders 6 hours before the deadline" in page.text
    assert notices(admin_app, game_id) == [f"settings p{i}@settings.example" for i in range(3)]

    same = act(
        browser,
        game_id,
        "settings",
        turn_hours="12",
        defender_hours="12",
        reminders=str(6 * 3600),
        redeploy="ask",
        vacation_days="3",
    )
    assert messages(same) == ["refusal: Nothing was changed: the settings are as they were."]
    wrong = act(browser, game_id, "settings", turn_hours="0", defender_hours="12", redeploy="ask", vacation_days="3")
    assert messages(wrong)[0].startswith("refusal: Time for a turn:")
    assert len(audit_of(admin_app, game_id)) == 1


def test_replacing_a_player_kills_the_old_links_and_invites_the_new_one(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Replace")
    old_link = turn_path(admin_app, game_id, 1)
    player = admin_app.test_client()
    assert player.get(old_link).status_code == 302
    assert player.get(f"/games/{game_id}").status_code == 200

    browser = host(admin_app, game_id)
    page = act(browser, game_id, "replace", seat="1", name="Newcomer", email="not an address")
    assert messages(page)[0].startswith("refusal: Email:")
    page = act(browser, game_id, "replace", seat="1", name="Newcomer", email="Newcomer@Example.org")
    assert messages(page) == [
        "done: The seat has a new player, who was invited; the old links of the seat no longer work."
    ]
    # The old player's open session and their turn link both die with a readable page.
    refused = player.get(f"/games/{game_id}")
    assert refused.status_code == 403 and "the seat was given to someone else" in refused.text
    again = admin_app.test_client().get(old_link)
    assert again.status_code == 403 and "Replace" not in again.text
    # The newcomer is invited with a link that works; the replaced player is told, and nobody else by mail
    # (issue 18: a host's act mails only those it concerns; the history tells everyone).
    [invitation] = [m for m in mails_of(admin_app, game_id, "invitation") if m.to_email == "newcomer@example.org"]
    assert invitation.context["replacing"] == "Player 1"
    newcomer = admin_app.test_client()
    assert newcomer.get(seat_link(admin_app, invitation).removeprefix("http://127.0.0.1:5000")).status_code == 302
    assert newcomer.get(f"/games/{game_id}").status_code == 200
    assert notices(admin_app, game_id) == ["player_replaced p1@replace.example"]
    entry = audit_of(admin_app, game_id)[-1]
    assert (entry.act, entry.details) == ("replace", {"seat": 1, "from": "Player 1", "to": "Newcomer"})


def test_removing_a_player_is_confirmed_first(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Remove")
    browser = host(admin_app, game_id)
    confirming = browser.get(f"/admin/games/{game_id}?confirm=remove&seat=2")
    assert "Remove Player 2 from the game?" in confirming.text
    page = act(browser, game_id, "remove", shown="?confirm=remove&seat=2")
    assert messages(page) == ["done: The player was removed: their turns are passed automatically."]
    with Session(get_engine(admin_app)) as session:
        seat = session.exec(sa.select(Seat).where(Seat.game_id == game_id, Seat.seat == 2)).scalar_one()
        assert seat.removed
    assert "Player 2 removed" not in page.text and "The host removed Player 2" in page.text
    assert notices(admin_app, game_id) == ["player_removed p2@remove.example"]  # only the player concerned
    assert admin_app.test_client().get(turn_path(admin_app, game_id, 2)).status_code == 403


def test_cancelling_is_confirmed_first_and_ends_every_act(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Cancel")
    browser = host(admin_app, game_id)
    assert f'action="/admin/games/{game_id}/cancel"' not in browser.get(f"/admin/games/{game_id}").text
    page = act(browser, game_id, "cancel", shown="?confirm=cancel", reason="not enough time")
    assert messages(page) == ["done: The game is cancelled; the players were told."]
    assert stored(admin_app, game_id).status == "cancelled"
    assert notices(admin_app, game_id) == [f"cancelled p{i}@cancel.example" for i in range(3)]
    assert "The host cancelled the game: not enough time." in page.text
    assert "/pause" not in page.text and "/extend" not in page.text
    # A form drawn before the cancellation, sent after it: the domain's refusal.
    assert messages(send(browser, game_id, "pause", reason="late")) == [
        "refusal: The game is cancelled: nothing to manage"
    ]


def test_a_failed_mail_is_shown_with_its_error_and_sent_again(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Mail")
    [mail] = mails_of(admin_app, game_id, "admin_link")
    with Session(get_engine(admin_app)) as session:
        row = session.get(OutboxMail, mail.id)
        assert row is not None
        row.status, row.attempts, row.last_error = "failed", 12, "550 5.1.1 mailbox unavailable"
        row.next_attempt_at = None
        session.add(row)
        session.commit()
    browser = host(admin_app, game_id)
    page = browser.get(f"/admin/games/{game_id}")
    assert "550 5.1.1 mailbox unavailable" in page.text and "<strong>failed</strong> after 12 attempts" in page.text

    page = act(browser, game_id, f"mail/{mail.id}/resend")
    assert messages(page) == ["done: The mail will be sent again within a minute."]
    with Session(get_engine(admin_app)) as session:
        row = session.get(OutboxMail, mail.id)
        assert row is not None
        assert (row.status, row.attempts) == ("pending", 0)
        assert row.next_attempt_at is not None and abs((row.next_attempt_at - utcnow()).total_seconds()) < 5
    entry = audit_of(admin_app, game_id)[-1]
    assert (entry.actor, entry.act, entry.details["mail"]) == ("host", "resend", mail.id)
    assert mails_of(admin_app, game_id, "admin_change") == [], "resending tells the players nothing"
    # Only failed mail goes back; the button is gone and a stale one is refused.
    page = send(browser, game_id, f"mail/{mail.id}/resend")
    assert messages(page)[0].startswith("refusal: That mail has not failed")


def test_a_player_s_turn_link_reaches_no_admin_page_nor_act(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Player link")
    player = admin_app.test_client()
    turn = turn_path(admin_app, game_id, 0)
    assert player.get(turn).status_code == 302
    turn_page = player.get(f"/games/{game_id}/turn")  # the player's own forms: a valid CSRF token
    token = turn_page.text.split('name="csrf_token" value="')[1].split('"')[0]
    refused = player.get(f"/admin/games/{game_id}")
    assert refused.status_code == 403 and "Player link" not in refused.text
    for name, data in (("pause", {"reason": "mine"}), ("extend", {"mode": "by", "amount": "5", "unit": "days"})):
        assert player.post(f"/admin/games/{game_id}/{name}", data={"csrf_token": token, **data}).status_code == 403
    # The turn link's token is no admin link either.
    as_admin = player.get("/admin/" + turn.rsplit("/", 1)[1])
    assert as_admin.status_code == 403 and "Player link" not in as_admin.text
    assert player.get(f"/admin/games/{game_id}").status_code == 403
    assert audit_of(admin_app, game_id) == []


def test_a_host_link_manages_its_own_game_only(admin_app: Flask) -> None:
    mine = new_game(admin_app, name="Mine")
    theirs = new_game(admin_app, name="Theirs")
    browser = host(admin_app, mine)
    refused = browser.get(f"/admin/games/{theirs}")
    assert refused.status_code == 403 and "Theirs" not in refused.text
    # Even with a valid CSRF token of this browser's session, an act on the other game is refused.
    page = browser.get(f"/admin/games/{mine}")
    token = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    assert browser.post(f"/admin/games/{theirs}/pause", data={"csrf_token": token, "reason": "x"}).status_code == 403
    assert browser.post(f"/admin/games/{theirs}/cancel", data={"csrf_token": token}).status_code == 403
    assert stored(admin_app, theirs).status == "active" and audit_of(admin_app, theirs) == []
    # A tampered admin link is refused with a page that says so.
    tampered = admin_path(admin_app, theirs)[:-3] + "xyz"
    page = admin_app.test_client().get(tampered)
    assert page.status_code == 403 and "This admin link does not work" in page.text


def test_a_form_without_its_csrf_token_is_refused(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="CSRF")
    browser = host(admin_app, game_id)
    refused = browser.post(f"/admin/games/{game_id}/pause", data={"reason": "no token"})
    assert refused.status_code == 400 and "This form is out of date" in refused.text
    assert stored(admin_app, game_id).status == "active"


def test_a_game_still_inviting_its_players_can_have_a_seat_given_away_or_be_cancelled(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Inviting", start=False)
    browser = host(admin_app, game_id)
    page = browser.get(f"/admin/games/{game_id}")
    assert "The clock starts when every player has accepted the invitation" in page.text
    page = act(browser, game_id, "replace", seat="2", name="Dana", email="dana@example.org")
    assert messages(page)[0].startswith("done:")
    [invitation] = [m for m in mails_of(admin_app, game_id, "invitation") if m.to_email == "dana@example.org"]
    assert "/invite/" in invitation.context["invite_url"] and not invitation.context["starts_at_once"]
    page = act(browser, game_id, "cancel", shown="?confirm=cancel", reason="")
    assert messages(page) == ["done: The game is cancelled; the players were told."]
    assert [e.act for e in audit_of(admin_app, game_id)] == ["replace", "cancel"]
    assert stored(admin_app, game_id).version == 2


def test_every_player_reads_the_log_of_changes_on_the_game_page(admin_app: Flask) -> None:
    game_id = new_game(admin_app, name="Public log")
    browser = host(admin_app, game_id)
    act(browser, game_id, "extend", mode="by", amount="2", unit="hours")
    act(browser, game_id, "pause", reason="Server move")
    player = admin_app.test_client()
    player.get(turn_path(admin_app, game_id, 2))
    page = player.get(f"/games/{game_id}")
    assert page.status_code == 200
    assert "Changes by the host" in page.text
    assert "The host paused the game" in page.text and "Server move" in page.text
    assert "The host moved the deadline to" in page.text
    log = page.text[page.text.index("Changes by the host") :]
    assert log.index("The host paused") < log.index("The host moved"), "newest first"


def test_the_host_hides_a_message_of_the_table_talk_from_the_admin_page(admin_app: Flask) -> None:
    from service.domain import table_talk
    from service.domain.models import Game, TableMessage

    game_id = new_game(admin_app, name="Talkative")
    with Session(get_engine(admin_app)) as session:
        game = session.get(Game, game_id)
        assert game is not None
        table_talk.post_message(session, game, 1, "Something <b>rude</b>")
        message_id = session.exec(sa.select(TableMessage.id)).scalar_one()  # type: ignore[call-overload]
    browser = host(admin_app, game_id)
    page = browser.get(f"/admin/games/{game_id}")
    assert "Something &lt;b&gt;rude&lt;/b&gt;" in page.text and f"/talk/{message_id}/hide" in page.text
    page = act(browser, game_id, f"talk/{message_id}/hide")
    assert "The message is hidden for everyone: the pages show it as hidden by the host." in page.text
    assert "rude" not in page.text and "hidden by the host" in page.text
    with Session(get_engine(admin_app)) as session:
        hidden = session.get(TableMessage, message_id)
        assert hidden is not None and hidden.hidden_by == "host" and hidden.hidden_at is not None
    # A browser without the host's right cannot.
    stranger = admin_app.test_client()
    assert stranger.post(f"/admin/games/{game_id}/talk/{message_id}/hide").status_code in (400, 403)


def test_the_page_warns_when_a_reminder_is_longer_than_a_turn(admin_app: Flask) -> None:
    """Issue 35: a reminder 24 hours before the deadline of a 12-hour turn would never be sent: the page says so."""
    game_id = new_game(admin_app, name="Long reminder")
    browser = host(admin_app, game_id)
    assert 'id="reminder-warning"' not in browser.get(f"/admin/games/{game_id}").text
    page = act(
        browser,
        game_id,
        "settings",
        turn_hours="12",
        defender_hours="12",
        reminders=str(24 * 3600),
        redeploy="auto",
        vacation_days="3",
    )
    assert messages(page) == ["done: The settings were changed for the turns to come; the players were told."]
    warning = re.search(r'<p class="message message-warning" id="reminder-warning">(.*?)</p>', page.text)
    assert warning is not None and 'aria-describedby="reminder-warning"' in page.text
    assert html.unescape(warning.group(1)) == (
        "The reminder 24 hours before the deadline is longer than a turn (12 hours): it is never sent."
    )
