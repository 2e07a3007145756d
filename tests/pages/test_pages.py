"""The pages through Flask's test client: who may see them, CSRF, hidden coins, refusals, lobby, mailbox.

(The browser tests, ``test_browser.py``, play the same pages in Chromium.)
"""

from __future__ import annotations

import copy
import html
import re
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlmodel import Session, select
from werkzeug.datastructures import MultiDict

import rules
from service.domain import games
from service.domain.models import Game, GameAction, OutboxMail, Seat
from service.domain.schemas import CreateGame
from service.infra.db import get_engine
from service.web.access import REVOKED
from service.web.pages.forms import action_from_form
from tests.factories import confirmed_game, reseed_new_game
from tests.pages.steps import play_randomly_until


def start_game(app: Flask, players: int = 2, *, seed: str | None = None, **settings: Any) -> tuple[int, list[str]]:
    """A game started at once; its id and each seat's turn link (as a path). With ``seed``, the game is dealt
    from that seed instead of a secret random one: the same game every run."""
    request = CreateGame.model_validate(
        {
            "name": "Page test",
            "players": [{"name": f"P{i}", "email": f"p{i}@example.org"} for i in range(players)],
            "settings": {"start_when_all_accepted": False, **settings},
        }
    )
    links = app.extensions["smallworld.links"]
    with Session(get_engine(app)) as session:
        game, _ = confirmed_game(session, request, links)
        game_id = game.id or 0
        if seed is not None:
            reseed_new_game(session, game_id, seed)
        paths = [
            links.turn_url(game_id, seat.seat, seat.secret, serial=0).removeprefix(links.base_url)
            for seat, _ in games.seats_of(session, game_id)
        ]
    return game_id, paths


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "the page has a form with a CSRF token"
    return found.group(1)


def stored(app: Flask, game_id: int) -> Game:
    with Session(get_engine(app)) as session:
        game = session.get(Game, game_id)
        assert game is not None
        return game


def edit_state(app: Flask, game_id: int, change: Any) -> None:
    with Session(get_engine(app)) as session:
        game = session.get(Game, game_id)
        assert game is not None and game.state is not None
        state = copy.deepcopy(game.state)
        change(state)
        game.state = state
        session.add(game)
        session.commit()


def step(client: Any, game_id: int, **fields: Any) -> Any:
    page = client.get(f"/games/{game_id}/turn")
    version = fields.pop("version", None)
    if version is None:
        version = re.search(r'name="version" value="(\d+)"', page.text).group(1)  # type: ignore[union-attr]
    data = {"csrf_token": csrf_of(page.text), "version": version, **fields}
    return client.post(f"/games/{game_id}/turn", data=data)


# -- who may see a page -----------------------------------------------------------------------------------
def test_without_the_seat_s_session_a_page_shows_nothing_of_the_game(app: Flask) -> None:
    game_id, _ = start_game(app)
    client = app.test_client()
    for path in (f"/games/{game_id}", f"/games/{game_id}/turn", f"/games/{game_id}/history"):
        page = client.get(path)
        assert page.status_code == 403
        assert "Page test" not in page.text and "Open the link from your game" in page.text


def test_a_seat_s_session_opens_only_its_own_game(app: Flask) -> None:
    first, links = start_game(app)
    second, _ = start_game(app)
    client = app.test_client()
    assert client.get(links[0]).status_code == 302
    assert client.get(f"/games/{first}").status_code == 200
    assert client.get(f"/games/{second}").status_code == 403


def test_the_session_of_a_replaced_player_dies(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    client.get(links[1])
    assert client.get(f"/games/{game_id}").status_code == 200
    with Session(get_engine(app)) as session:  # the host gives seat 1 to someone else: its secret rotates
        seat = session.exec(select(Seat).where(Seat.game_id == game_id, Seat.seat == 1)).one()
        seat.secret = "rotated"
        session.add(seat)
        session.commit()
    refused = client.get(f"/games/{game_id}")
    assert refused.status_code == 403 and REVOKED in html.unescape(refused.text)
    assert client.get(f"/games/{game_id}/turn").status_code == 403


def test_the_link_lands_on_the_turn_page_or_the_game_page(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    assert client.get(links[0], follow_redirects=True).request.path == f"/games/{game_id}/turn"
    # Seat 2 waits: its link shows the game page, and its turn page sends there too.
    assert client.get(links[1], follow_redirects=True).request.path == f"/games/{game_id}"
    assert client.get(f"/games/{game_id}/turn").headers["Location"] == f"/games/{game_id}"


def test_the_maps_are_labelled_with_a_short_sentence(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    turn = client.get(links[0], follow_redirects=True).get_data(as_text=True)
    game = app.test_client().get(links[1], follow_redirects=True).get_data(as_text=True)
    labels = [
        html.unescape(m)
        for page in (turn, game)
        for m in re.findall(r'class="board-map"[^>]*aria-label="([^"]*)"', page)
    ]
    assert labels[0] == "Map of the 2-player board. Select a region to act on it."
    assert labels[1] == "Map of Page test"
    assert all(len(label) < 120 and "(" not in label for label in labels)


# -- forms ------------------------------------------------------------------------------------------------
def test_a_form_without_its_csrf_token_is_refused(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    client.get(links[0])
    refused = client.post(f"/games/{game_id}/turn", data={"version": "1", "type": "pick", "combo": "0"})
    assert refused.status_code == 400 and "Reload the page" in refused.text
    assert stored(app, game_id).version == 1
    assert step(client, game_id, type="pick", combo="0").status_code == 302
    assert stored(app, game_id).version == 2


def test_the_json_api_takes_no_csrf_token(app: Flask) -> None:
    body = {"name": "API game", "players": [{"name": "A", "email": "a@example.org"}, {"name": "B", "email": "b@x.org"}]}
    assert app.test_client().post("/api/games", json=body).status_code == 201


def test_a_refused_step_shows_the_rules_own_message(app: Flask) -> None:
    game_id, links = start_game(app, seed="a-refused-step")
    client = app.test_client()
    client.get(links[0])
    # Halflings and Flying may enter anywhere: pick a combo that must enter from the border.
    combos = rules.read_state(stored(app, game_id).state or {}).combos
    combo = next(i for i, c in enumerate(combos) if c.race != "Halflings" and c.power != "Flying")
    step(client, game_id, type="pick", combo=str(combo))
    state = rules.read_state(stored(app, game_id).state or {})
    inland = next(r.id for r in state.board.regions if r.id not in state.board.entry and not r.is_water)
    with pytest.raises(rules.IllegalAction) as refusal:
        rules.apply(state, {"type": "conquer", "player": 0, "region": inland})
    answer = step(client, game_id, type="conquer", region=str(inland))
    page = client.get(answer.headers["Location"])
    assert f'role="alert" id="turn-refusal">{refusal.value}' in html.unescape(page.text)
    # Said once: not again in a region's panel.
    assert html.unescape(page.text).count(str(refusal.value)) == 1
    assert stored(app, game_id).version == 2


def test_the_same_form_sent_twice_is_one_step(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    client.get(links[0])
    page = client.get(f"/games/{game_id}/turn")
    data = {"csrf_token": csrf_of(page.text), "version": "1", "type": "pick", "combo": "0"}
    client.post(f"/games/{game_id}/turn", data=data)
    assert "already taken" not in client.get(f"/games/{game_id}/turn").text
    client.post(f"/games/{game_id}/turn", data=data)  # the same form again, from an old tab (issue 35)
    assert stored(app, game_id).version == 2
    again = html.unescape(client.get(f"/games/{game_id}/turn").text)
    assert "changed since this page" not in again
    assert '<p class="message message-notice" data-announce>That step was already taken' in again


def test_a_form_from_an_older_page_says_the_game_moved_on(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    client.get(links[0])
    step(client, game_id, type="pick", combo="0")
    step(client, game_id, type="end_conquest", version="1")
    assert "The game changed since this page was drawn" in client.get(f"/games/{game_id}/turn").text


def test_undo_takes_back_the_steps_since_the_pick(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    client.get(links[0])
    step(client, game_id, type="pick", combo="0")
    state = rules.read_state(stored(app, game_id).state or {})
    target = next(a.region for a in rules.legal_actions(state, 0) if a.type == "conquer")
    step(client, game_id, type="conquer", region=str(target))
    page = client.get(f"/games/{game_id}/turn")
    assert ">Undo your last step</button>" in page.text
    client.post(f"/games/{game_id}/turn/undo", data={"csrf_token": csrf_of(page.text), "version": "3"})
    assert rules.read_state(stored(app, game_id).state or {}).regions[target].owner != 0
    assert "Undo" not in client.get(f"/games/{game_id}/turn").text.split("</form>")[-1]


def test_undo_step_by_step_names_each_step_and_goes_back_to_the_one_chosen(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    client.get(links[0])
    step(client, game_id, type="pick", combo="0")
    after_pick = rules.read_state(stored(app, game_id).state or {})
    for _ in range(2):
        state = rules.read_state(stored(app, game_id).state or {})
        target = next(a.region for a in rules.legal_actions(state, 0) if a.type == "conquer")
        step(client, game_id, type="conquer", region=str(target))
    page = client.get(f"/games/{game_id}/turn").text
    listed = page.split('class="undo-steps"')[1].split("</ol>")[0]
    # Earliest first, each in words (rules.tell), each with its own undo.
    assert listed.count('undo-step-words">P0 conquered ') == 2 and ">Undo your last 2 steps</button>" in listed
    assert ">Undo your last step</button>" in listed and 'aria-label="Undo' not in listed
    assert [int(n) for n in re.findall(r'name="steps" value="(\d+)"', listed)] == [2, 1]
    # Undo to the first conquest: both conquests are taken back, and the message names them.
    client.post(f"/games/{game_id}/turn/undo", data={"csrf_token": csrf_of(page), "version": "4", "steps": "2"})
    assert rules.read_state(stored(app, game_id).state or {}).regions == after_pick.regions
    assert "Undone: your last 2 steps (P0 conquered " in client.get(f"/games/{game_id}/turn").text
    refused = client.post(
        f"/games/{game_id}/turn/undo", data={"csrf_token": csrf_of(page), "version": "5", "steps": "two"}
    )
    assert refused.status_code == 302
    assert "That form was incomplete" in client.get(f"/games/{game_id}/turn").text


@pytest.mark.parametrize(
    ("fields", "action"),
    [
        ({"type": "pick", "combo": "2"}, {"type": "pick", "combo": 2}),
        (
            {"type": "conquer", "region": "7", "troop": "declined"},
            {"type": "conquer", "region": 7, "troop": "declined"},
        ),
        ({"type": "redeploy", "tokens-3": "4", "tokens-12": "1"}, {"type": "redeploy", "tokens": {"3": 4, "12": 1}}),
        ({"type": "end_turn", "decline": "1"}, {"type": "end_turn", "decline": True}),
        ({"type": "place_heroes", "regions": ["4", "9"]}, {"type": "place_heroes", "regions": [4, 9]}),
        ({"type": "choose_ally", "target": "1", "region": ""}, {"type": "choose_ally", "target": 1}),
    ],
)
def test_a_form_reads_as_the_action_it_describes(fields: dict[str, Any], action: dict[str, Any]) -> None:
    form = MultiDict(
        [(k, v) for k, values in fields.items() for v in (values if isinstance(values, list) else [values])]
    )
    assert action_from_form(form) == action


def test_a_form_with_a_word_for_a_number_is_refused() -> None:
    with pytest.raises(ValueError):
        action_from_form(MultiDict({"type": "conquer", "region": "seven"}))


# -- hidden information -----------------------------------------------------------------------------------
def test_another_seat_s_coins_never_reach_a_page_before_the_end(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    client.get(links[0])
    step(client, game_id, type="pick", combo="0")

    def coins(state: dict[str, Any]) -> None:
        state["players"][0]["coins"] = 424242
        state["players"][1]["coins"] = 987654

    edit_state(app, game_id, coins)
    pages = [client.get(f"/games/{game_id}/turn"), client.get(f"/games/{game_id}")]
    pages += [client.get(f"/games/{game_id}/history"), client.get(f"/games/{game_id}/history?step=1")]
    for page in pages:
        assert page.status_code == 200
        assert "987654" not in page.text
    assert "424242" in pages[0].text and "424242" in pages[1].text  # one's own coins are shown
    game = stored(app, game_id)
    for page in pages:
        assert game.seed not in page.text


def test_the_history_replays_public_views_of_each_step(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    client.get(links[0])
    step(client, game_id, type="pick", combo="0")
    state = rules.read_state(stored(app, game_id).state or {})
    target = next(a.region for a in rules.legal_actions(state, 0) if a.type == "conquer")
    step(client, game_id, type="conquer", region=str(target))
    with Session(get_engine(app)) as session:
        versions = [a.version for a in session.exec(select(GameAction).where(GameAction.game_id == game_id)).all()]
    assert versions == [2, 3]
    after_pick = client.get(f"/games/{game_id}/history?step=2").text
    after_conquest = client.get(f"/games/{game_id}/history?step=3").text
    assert "After step 1: P0 picked combo 1" in after_pick  # the first step kept (version 2)
    assert f"P0 conquered {rules.region_name(state, target)} " in after_conquest
    assert "P0&#39;s" not in after_pick.split("</svg>")[0] and "P0&#39;s" in after_conquest.split("</svg>")[0]
    start = client.get(f"/games/{game_id}/history?step=0").text
    assert "The map at the start" in start


# -- lobby ------------------------------------------------------------------------------------------------
def new_game_form(client: Any, **fields: Any) -> dict[str, Any]:
    page = client.get("/games/new")
    assert page.status_code == 200
    data = {
        "csrf_token": csrf_of(page.text),
        "name": "Lobby game",
        "name-0": "Ann",
        "email-0": "ann@example.org",
        "zone-0": "Europe/Paris",
        "name-1": "Bob",
        "email-1": "bob@example.org",
        "turn_hours": "48",
        "defender_hours": "12",
        "reminders": ["24", "2"],
        "redeploy": "ask",
        "start": "accepted",
        "auto_pass_alert_after": "3",
    }
    data.update(fields)
    return data


def confirm_from_mail(app: Flask, client: Any) -> Any:
    """The host opens the link of the ``confirm_game`` mail and presses "Confirm" (ARCHITECTURE §9: the game mails
    nobody else until then). The answer to the button."""
    with Session(get_engine(app)) as session:
        mail = session.exec(select(OutboxMail).where(OutboxMail.template == "confirm_game")).all()[-1]
    path = mail.context["confirm_url"].removeprefix(app.extensions["smallworld.links"].base_url)
    page = client.get(path)
    assert page.status_code == 200
    return client.post(path, data={"csrf_token": csrf_of(page.text), "act": "confirm", "time_zone": "UTC"})


def test_the_host_creates_a_game_and_sees_the_admin_link(app: Flask) -> None:
    client = app.test_client()
    answer = client.post("/games/new", data=new_game_form(client))
    assert answer.status_code == 303
    answer = confirm_from_mail(app, client)
    created = client.get(answer.headers["Location"]).text
    assert "Lobby game is created" in created and "/admin/" in created
    with Session(get_engine(app)) as session:
        game = session.exec(select(Game)).one()
    assert game.settings["redeploy"] == "ask"
    assert game.settings["turn_length_seconds"] == 48 * 3600
    assert game.settings["reminders_before_seconds"] == [24 * 3600, 2 * 3600]
    assert game.settings["auto_pass_alert_after"] == 3
    assert game.status == "inviting"


def test_the_host_who_plays_takes_their_seat_on_confirming_without_an_invitation(app: Flask) -> None:
    """Issue 35: the confirm page asks the host's seat name and time zone once; no invitation to themselves."""
    client = app.test_client()
    form = new_game_form(client)
    assert client.post("/games/new", data=form).status_code == 303
    with Session(get_engine(app)) as session:
        mail = session.exec(select(OutboxMail).where(OutboxMail.template == "confirm_game")).all()[-1]
    path = mail.context["confirm_url"].removeprefix(app.extensions["smallworld.links"].base_url)
    page = client.get(path)
    assert 'id="seat_name"' in page.text and "no invitation is sent to you" in page.text
    # A blank name is refused, naming the field; nothing is confirmed.
    blank = {"csrf_token": csrf_of(page.text), "act": "confirm", "time_zone": "Asia/Tokyo", "seat_name": "  "}
    refused = client.post(path, data=blank)
    assert refused.status_code == 400 and "Your name in this game is blank" in refused.text
    with Session(get_engine(app)) as session:
        assert session.exec(select(Game)).one().status == "unconfirmed"
    answer = client.post(path, data=blank | {"seat_name": "Ann at home"})
    assert answer.status_code == 303
    with Session(get_engine(app)) as session:
        game = session.exec(select(Game)).one()
        seats = games.seats_of(session, game.id or 0)
        invited = [m.to_email for m in session.exec(select(OutboxMail).where(OutboxMail.template == "invitation"))]
    host = next((s, p) for s, p in seats if p.email == game.host_email)
    assert host[0].display_name == "Ann at home" and host[0].accepted_at is not None
    assert host[1].time_zone == "Asia/Tokyo"
    assert game.host_email not in invited and len(invited) == len(seats) - 1
    assert all(s.accepted_at is None for s, p in seats if p.email != game.host_email)
    assert "You have taken your own seat" in client.get(answer.headers["Location"]).text


def test_the_create_form_refuses_with_readable_words_and_keeps_what_was_typed(app: Flask) -> None:
    client = app.test_client()
    answer = client.post(
        "/games/new", data=new_game_form(client, **{"email-1": "not an address", "host_zone": "Mars/Base"})
    )
    assert answer.status_code == 400
    assert "Player 2 email" in answer.text and "Your time zone" in answer.text
    assert 'value="Lobby game"' in answer.text
    same = client.post("/games/new", data=new_game_form(client, **{"email-1": "ANN@example.org"}))
    assert same.status_code == 400 and "different email" in same.text


# -- the mailbox ------------------------------------------------------------------------------------------
def write_mail(folder: Path, name: str, to: str, subject: str, at: datetime, html: bool = True) -> None:
    message = EmailMessage()
    message["From"] = "Small World by Mail <game@example.org>"
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = format_datetime(at)
    message.set_content(f"Hello,\n\nYour link: http://localhost/play/token-for-{subject.replace(' ', '-')}\n")
    if html:
        message.add_alternative(f"<p>Hello, <a href='http://localhost/play/x'>{subject}</a></p>", subtype="html")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(message.as_bytes())


def test_the_mailbox_lists_mails_newest_first_per_recipient(app: Flask) -> None:
    folder = Path(app.config["MAIL_DIR"])
    now = datetime(2030, 1, 1, 12, tzinfo=UTC)
    write_mail(folder, "20300101-120000-aaaa.eml", "ann@example.org", "first for Ann", now)
    write_mail(folder, "20300101-130000-bbbb.eml", "bob@example.org", "for Bob", now + timedelta(hours=1))
    write_mail(folder, "20300101-140000-cccc.eml", "ann@example.org", "second for Ann", now + timedelta(hours=2))
    (folder / ".writing-dddd.eml").write_bytes(b"half written")
    client = app.test_client()
    listing = client.get("/mailbox/").text
    assert listing.index("second for Ann") < listing.index("for Bob") < listing.index("first for Ann")
    assert "half written" not in listing
    anns = client.get("/mailbox/?to=ann@example.org").text
    assert "for Bob" not in anns and "first for Ann" in anns
    text = client.get("/mailbox/20300101-140000-cccc.eml").text
    assert '<a href="http://localhost/play/token-for-second-for-Ann">' in text
    html = client.get("/mailbox/20300101-140000-cccc.eml/html")
    assert html.mimetype == "text/html" and "second for Ann</a>" in html.text
    for bad in ("/mailbox/..%2Fsmallworld.sqlite", "/mailbox/nothing.eml", "/mailbox/.writing-dddd.eml"):
        assert client.get(bad).status_code == 404


def test_there_is_no_mailbox_in_production(make_app: Any) -> None:
    app = make_app(ENV="production", SECRET_KEY="a-long-random-production-secret")
    write_mail(Path(app.config["MAIL_DIR"]), "20300101-120000-aaaa.eml", "ann@example.org", "hi", datetime.now(UTC))
    client = app.test_client()
    for path in ("/mailbox/", "/mailbox/20300101-120000-aaaa.eml", "/mailbox/20300101-120000-aaaa.eml/html"):
        assert client.get(path).status_code == 404
    assert "Mailbox" not in client.get("/").text


def test_the_die_of_a_final_conquest_is_shown(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    client.get(links[0])
    state = rules.read_state(stored(app, game_id).state or {})
    combo = next(i for i, c in enumerate(state.combos) if c.power != "Berserk")  # Berserk rolls before naming
    step(client, game_id, type="pick", combo=str(combo))

    def one_token_in_hand(data: dict[str, Any]) -> None:
        data["players"][0]["active"]["hand"] = 1

    edit_state(app, game_id, one_token_in_hand)
    state = rules.read_state(stored(app, game_id).state or {})
    target = next(a.region for a in rules.legal_actions(state, 0) if a.type == "final_conquest")
    page = client.get(f"/games/{game_id}/turn?region={target}")
    assert f"Roll the die for region {target}" in page.text
    step(client, game_id, type="final_conquest", region=str(target))
    die = rules.read_state(stored(app, game_id).state or {}).last["die"]
    page = client.get(f"/games/{game_id}/turn").text
    assert f"The die rolled {die}:" in page
    assert f'<span class="die" aria-hidden="true">{die}</span>' in page


def test_an_attacked_player_redeploys_on_their_page_when_the_game_asks(app: Flask) -> None:
    game_id, links = start_game(app, seed="an-attacked-player", redeploy="ask")
    assert play_randomly_until(app, game_id, seed=3, done=lambda state: state.phase == "defend")
    state = rules.read_state(stored(app, game_id).state or {})
    defender = state.defenders[0]
    client = app.test_client()
    page = client.get(links[defender], follow_redirects=True)
    assert page.request.path == f"/games/{game_id}/turn"
    assert "Redeploy after the attack" in page.text
    # The inputs start with what each region keeps plus the tokens in hand, spread: saving them is legal.
    inputs = dict(
        re.findall(
            r'name="(tokens-\d+)" type="number" inputmode="numeric"\s+min="\d+" max="\d+" value="(\d+)"', page.text
        )
    )
    assert inputs
    assert step(client, game_id, type="redeploy", **inputs).status_code == 302
    assert "Redeployment saved" in client.get(f"/games/{game_id}/turn").text
    confirm = client.get(f"/games/{game_id}/turn?confirm=end_turn").text
    assert "Finish your redeployment?" in confirm and "You will score" not in confirm
    step(client, game_id, type="end_turn")
    after = rules.read_state(stored(app, game_id).state or {})
    assert after.phase != "defend" and defender not in after.defenders
    assert "redeployment is done" in client.get(f"/games/{game_id}", follow_redirects=True).text


def test_the_pages_of_a_game_still_inviting(app: Flask) -> None:
    players = [{"name": "A", "email": "a@example.org"}, {"name": "B", "email": "b@example.org"}]
    request = CreateGame.model_validate({"name": "Not yet", "players": players})
    links = app.extensions["smallworld.links"]
    with Session(get_engine(app)) as session:
        game, _ = confirmed_game(session, request, links)
        game_id = game.id or 0
        seat = games.seats_of(session, game_id)[0][0]
        invite = links.invite_url(game_id, 0, seat.secret, serial=0).removeprefix(links.base_url)
    client = app.test_client()
    page = client.get(invite)  # the invitation and its button: opening it accepts nothing
    accepted = client.post(invite, data={"csrf_token": csrf_of(page.text), "name": "A"}, follow_redirects=True)
    assert accepted.request.path == f"/games/{game_id}"
    assert "Waiting for every player to accept" in client.get(f"/games/{game_id}").text
    assert "has not started yet" in client.get(f"/games/{game_id}/history").text


def test_a_paused_game_names_the_player_whose_turn_it_is(app: Flask) -> None:
    from service.domain import admin

    game_id, links = start_game(app, 3)
    with Session(get_engine(app)) as session:
        admin.pause(session, game_id, admin.HOST, app.extensions["smallworld.links"], "holidays")
    client = app.test_client()
    client.get(links[1])  # P1, who waits for P0
    page = client.get(f"/games/{game_id}")
    words = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.text)).split())
    assert "the game is paused while P0 was picking a combo" in words
    client = app.test_client()
    client.get(links[0])
    page = client.get(f"/games/{game_id}")
    words = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.text)).split())
    assert "the game is paused while you were picking a combo" in words


def test_each_wrong_field_of_the_create_form_is_marked_and_tied_to_its_line(app: Flask) -> None:
    client = app.test_client()
    answer = client.post(
        "/games/new", data=new_game_form(client, **{"email-1": "not an address", "host_zone": "Mars/Base"})
    )
    assert answer.status_code == 400
    for field, words in (("email-1", "Player 2 email"), ("host_zone", "Your time zone")):
        tag = re.search(rf'<input id="{field}"[^>]*>', answer.text)
        assert tag is not None and 'aria-invalid="true"' in tag.group(0), field
        line = re.search(r'aria-describedby="([^"]+)"', tag.group(0))
        assert line is not None
        said = re.search(rf'<li id="{line.group(1)}">([^<]*)</li>', answer.text)
        assert said is not None and words in html.unescape(said.group(1)), (field, said)
    # The fields that were right are not marked.
    assert len(re.findall(r'aria-invalid="true"', answer.text)) == 2
    turn = client.post("/games/new", data=new_game_form(client, turn_hours="soon"))
    tag = re.search(r'<input id="turn_hours"[^>]*>', turn.text)
    assert turn.status_code == 400 and tag is not None and 'aria-invalid="true"' in tag.group(0)


def test_a_refused_redeployment_marks_the_region_the_rules_name(app: Flask) -> None:
    game_id, links = start_game(app, seed="a-refused-redeployment")
    client = app.test_client()
    client.get(links[0])
    combos = rules.read_state(stored(app, game_id).state or {}).combos
    combo = next(i for i, c in enumerate(combos) if c.power not in ("Berserk", "Dragon Master", "Bivouacking"))
    step(client, game_id, type="pick", combo=str(combo))
    state = rules.read_state(stored(app, game_id).state or {})
    target = next(a.region for a in rules.legal_actions(state, 0) if a.type == "conquer")
    step(client, game_id, type="conquer", region=str(target))
    step(client, game_id, type="end_conquest")
    # Every token taken off the region: the rules refuse, naming it.
    answer = step(client, game_id, type="redeploy", **{f"tokens-{target}": "0"})
    page = client.get(answer.headers["Location"])
    tag = re.search(rf'<input id="tokens-{target}"[^>]*>', page.text)
    assert tag is not None and 'aria-invalid="true" aria-describedby="turn-refusal"' in tag.group(0)
    assert re.search(r'<p class="message message-refusal" role="alert" id="turn-refusal">', page.text)


def test_the_legend_names_each_thing_once_and_the_lost_tribes_too(app: Flask) -> None:
    game_id, links = start_game(app)
    client = app.test_client()
    client.get(links[0])
    page = client.get(f"/games/{game_id}/turn").text
    legend = re.search(r'<ul class="legend">(.*?)</ul>', page, flags=re.S)
    assert legend is not None
    names = [html.unescape(n).strip() for n in re.findall(r"</svg>([^<]+)</li>", legend.group(1))]
    assert len(names) == len(set(names)), names
    assert "Mountain" in names and any("Lost Tribe" in n for n in names), names
    # The map's name is a sentence, and every region's name reads as the region, its cost and a tap's effect.
    label = re.search(r'<svg [^>]*class="board-map"[^>]*aria-label="([^"]+)"', page)
    assert label is not None and label.group(1).startswith("Map of the 2-player board")
    for name in re.findall(r'<a href="[^"]*" class="region-link"[^>]*aria-label="([^"]+)"', page):
        assert re.match(r"^[A-Z][a-z]+ \d+, .+, (details|[^,]*: .+)$", html.unescape(name)), name


def finished_and_tallied(app: Flask, seed: str) -> tuple[int, str]:
    """A two-player game played to its end by random legal steps and tallied; its id and seat 0's link."""
    from service.domain import tally

    game_id, links = start_game(app, seed=seed)
    assert not play_randomly_until(app, game_id, seed=7, done=lambda state: False), "the game ends"
    with Session(get_engine(app)) as session:
        assert tally.tally_game(session, game_id)
    return game_id, links[0]


def test_the_final_standings_print_each_rating_once_and_no_change_for_a_first_rated_game(app: Flask) -> None:
    """Issue 35: the rating is shown once (the record beside it without it), and a first rated game shows no
    change from openskill's starting point, which would read as a loss for any place but the first."""
    first_id, first_link = finished_and_tallied(app, "standings-1")
    client = app.test_client()
    client.get(first_link)
    page = html.unescape(client.get(f"/games/{first_id}").text)
    table = page.split('id="standings-title"')[1].split("</table>")[0]
    assert table.count("(first rated game)") == 2 and "(+" not in table and "(-" not in table
    assert "rating " not in table and table.count("1 game, missed") == 2
    # The same two addresses' second game: a change from the first game's ratings, in the rating column.
    second_id, second_link = finished_and_tallied(app, "standings-2")
    client = app.test_client()
    client.get(second_link)
    page = html.unescape(client.get(f"/games/{second_id}").text)
    table = page.split('id="standings-title"')[1].split("</table>")[0]
    changes = re.findall(r'<td>(-?\d+) <span class="muted">\(([+-]\d+)\)</span>', table)
    assert len(changes) == 2 and "first rated game" not in table and "rating " not in table
    assert table.count("2 games, missed") == 2
