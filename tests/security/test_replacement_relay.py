"""Finding 7 of issue 32, a relay through seat replacement: a host who confirmed their own game gave its seat to
stranger after stranger ("You take over a seat", spam text as the seat's name), and every stranger replaced
out of it got "the seat changed hands", counted nowhere: about 200 strangers a day per game, thousands per
client. Now invitations, replacements and "changed hands" mails to addresses that never played with the host
count against a daily limit per host and one per client (``service.domain.strangers``,
``RATELIMIT_STRANGERS_PER_HOST``, ``RATELIMIT_STRANGERS_PER_CLIENT``), refused with 429 naming the addresses
and ``Retry-After``, from the admin API and the admin page alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask

from tests.admin.browsing import submit

from .conftest import HOST_MACHINE, STRANGER, bearer, body, created_and_confirmed, invitations, mails, token_of

ATTACKER = "attacker@example.net"
SPAM = "Cheap pills at spam.example"


def from_address(address: str) -> dict[str, Any]:
    return {"environ_base": {"REMOTE_ADDR": address}}


def not_to(app: Flask, *addresses: str) -> list[tuple[str, str]]:
    """Every mail written so far to anyone but ``addresses``: (template, to)."""
    return [(m.template, m.to_email) for m in mails(app) if m.to_email not in addresses]


def test_replacing_stranger_after_stranger_stops_at_the_host_s_daily_limit(any_app: Callable[..., Flask]) -> None:
    app = any_app(RATELIMIT_ENABLED=True, RATELIMIT_STRANGERS_PER_HOST="6 per day")
    game = created_and_confirmed(app, body(["Me", "My other me"], [ATTACKER, "me2@example.net"]), STRANGER)
    admin = bearer(token_of(game["admin_url"]))
    answers = []
    for n in range(20):
        answer = app.test_client().post(
            f"/api/admin/games/{game['id']}/replace",
            headers=admin,
            json={"seat": 1, "email": f"victim{n}@example.org", "name": SPAM},
            **from_address(f"192.0.2.{n + 1}"),
        )
        answers.append(answer)
        if answer.status_code != 200:
            break
    # me2 (invited at the confirmation) was a stranger: 1; each replacement mails two strangers (the newcomer's
    # invitation and "the seat changed hands" to the one replaced): 1 + 2 + 2 = 5, and a third would make 7.
    assert [a.status_code for a in answers] == [200, 200, 429], [a.get_json() for a in answers]
    refused = answers[-1]
    assert "victim2@example.org" in refused.get_json()["error"] and ATTACKER in refused.get_json()["error"]
    assert int(refused.headers["Retry-After"]) > 0
    strangers_mailed = not_to(app, ATTACKER)
    assert len(strangers_mailed) == 5, strangers_mailed
    assert mails(app, to="victim2@example.org") == [], "nothing went to the address refused"
    assert {to for template, to in strangers_mailed if template == "invitation"} == {
        "me2@example.net",
        "victim0@example.org",
        "victim1@example.org",
    }


def test_the_changed_hands_mail_counts(any_app: Callable[..., Flask]) -> None:
    # Room for the newcomer's invitation, not for the "changed hands" mail to the stranger replaced.
    app = any_app(RATELIMIT_ENABLED=True, RATELIMIT_STRANGERS_PER_HOST="2 per day")
    game = created_and_confirmed(app, body(["Me", "Bob"], [ATTACKER, "bob@example.org"]), STRANGER)
    refused = app.test_client().post(
        f"/api/admin/games/{game['id']}/replace",
        headers=bearer(token_of(game["admin_url"])),
        json={"seat": 1, "email": "carol@example.org", "name": "Carol"},
    )
    assert refused.status_code == 429
    assert "carol@example.org, bob@example.org: never played with" in refused.get_json()["error"]
    assert not_to(app, ATTACKER) == [("invitation", "bob@example.org")]


def test_one_client_confirming_many_hosts_games_stops_at_the_client_s_daily_limit(
    any_app: Callable[..., Flask],
) -> None:
    app = any_app(RATELIMIT_ENABLED=True, RATELIMIT_STRANGERS_PER_CLIENT="5 per day")
    for n in range(2):  # two strangers each, all confirmed from HOST_MACHINE
        players = [f"host{n}@example.net", f"a{n}@example.org", f"b{n}@example.org"]
        created_and_confirmed(app, body(["H", "A", "B"], players), f"192.0.2.{n + 1}")
    third = app.test_client().post(
        "/api/games", json=body(["H", "A", "B"], ["host9@example.net", "a9@example.org", "b9@example.org"])
    )
    assert third.status_code == 201
    [asking] = [m for m in mails(app, "confirm_game") if m.game_id == third.get_json()["id"]]
    refused = app.test_client().post(
        "/api/games/confirm", headers=bearer(token_of(asking.context["confirm_url"])), **from_address(HOST_MACHINE)
    )
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert "a9@example.org, b9@example.org" in refused.get_json()["error"]
    assert "your address" in refused.get_json()["error"]
    assert [m for m in mails(app, "invitation") if m.game_id == third.get_json()["id"]] == []
    # From another machine, the host confirms (the limit is the client's, not the host's).
    again = app.test_client().post(
        "/api/games/confirm", headers=bearer(token_of(asking.context["confirm_url"])), **from_address("192.0.2.77")
    )
    assert again.status_code == 200


def test_an_address_that_played_with_the_host_before_is_no_stranger(any_app: Callable[..., Flask]) -> None:
    app = any_app(RATELIMIT_ENABLED=True, RATELIMIT_STRANGERS_PER_HOST="1 per day")
    first = created_and_confirmed(app, body(["Hal", "Friend"], ["hal@example.org", "friend@example.org"]))
    invite = token_of(invitations(app, first["id"])[1].context["invite_url"])
    assert app.test_client().post("/api/invitations/accept", headers=bearer(invite)).status_code == 200
    # Hal's limit is used up, but the friend played with Hal: a new game with the friend is confirmed.
    again = created_and_confirmed(app, body(["Hal", "Friend"], ["hal@example.org", "friend@example.org"]))
    assert again["status"] == "inviting"
    # A newcomer is a stranger: refused.
    created = app.test_client().post("/api/games", json=body(["Hal", "New"], ["hal@example.org", "new@example.org"]))
    [asking] = [m for m in mails(app, "confirm_game") if m.game_id == created.get_json()["id"]]
    refused = app.test_client().post("/api/games/confirm", headers=bearer(token_of(asking.context["confirm_url"])))
    assert refused.status_code == 429 and "new@example.org" in refused.get_json()["error"]


def test_the_admin_page_answers_429_with_retry_after_and_says_why(any_app: Callable[..., Flask]) -> None:
    app = any_app(RATELIMIT_ENABLED=True, RATELIMIT_STRANGERS_PER_HOST="2 per day")
    game = created_and_confirmed(app, body(["Me", "Bob"], [ATTACKER, "bob@example.org"]), STRANGER)
    browser = app.test_client()
    opened = browser.get(game["admin_url"].removeprefix("http://127.0.0.1:5000"))
    assert opened.status_code == 302
    page = f"/admin/games/{game['id']}"
    answer = submit(browser, page, f"{page}/replace", seat="1", name=SPAM, email="victim@example.org")
    assert answer.status_code == 429 and int(answer.headers["Retry-After"]) > 0
    assert "victim@example.org, bob@example.org: never played with" in answer.text
    assert mails(app, to="victim@example.org") == []
