"""emails.render: every message from its templates; snapshots of the plain-text parts.

The snapshots in ``golden/`` are the plain-text part (with its subject) of every sample in
``emails/samples.py``. After an intended change of wording, rewrite them with
``SMALLWORLD_UPDATE_GOLDEN=1 make test PYTEST_ARGS=tests/emails`` and read the diff before committing.
"""

from __future__ import annotations

import dataclasses
import doctest
import os
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emails import render as render_module
from emails import times
from emails.board import png
from emails.board.palette import contrast
from emails.board.public import PublicBoard
from emails.messages import KINDS, MessageError, from_json
from emails.render import NOTICE, REMINDER, TALK, RenderError
from emails.samples import ALL, SAMPLES, Sample

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("SMALLWORLD_UPDATE_GOLDEN") == "1"


def rendered(sample: Sample, **changes: object) -> render_module.Rendered:
    return sample.render(**changes)


def test_every_message_has_its_three_templates_and_a_sample() -> None:
    folders = {p.name for p in render_module.TEMPLATES.iterdir() if p.is_dir()}
    assert folders == set(KINDS) == set(SAMPLES)
    for message in KINDS:
        for name in ("subject.txt", "body.txt", "body.html"):
            assert (render_module.TEMPLATES / message / name).is_file(), f"{message}/{name}"


@pytest.mark.parametrize("name", sorted(ALL))
def test_the_text_part_matches_its_snapshot(name: str) -> None:
    mail = rendered(ALL[name])
    snapshot = f"Subject: {mail.subject}\n\n{mail.text}"
    golden = GOLDEN / f"{name}.txt"
    if UPDATE or not golden.exists():
        golden.write_text(snapshot, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"{golden} did not exist; written now: read it, then commit it")
    assert snapshot == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(ALL))
def test_the_text_part_works_alone(name: str) -> None:
    """Every link of the HTML is in the text too, and the text has no markup."""
    mail = rendered(ALL[name])
    links = set(re.findall(r'href="([^"]+)"', mail.html))
    assert links, "every mail carries a link"
    for link in links:
        assert link.startswith("https://"), f"{link} is not absolute"
        assert link.replace("&amp;", "&") in mail.text, f"{link} is missing from the text part"
    assert "<" not in mail.text.replace("<https", "")
    assert all(
        len(line) <= 72 or line.lstrip().startswith("http") or ": http" in line for line in mail.text.splitlines()
    )


@pytest.mark.parametrize("name", sorted(ALL))
def test_the_html_has_its_style_inlined(name: str) -> None:
    html = rendered(ALL[name]).html
    assert "<style" not in html
    assert 'style="' in html
    assert "{{" not in html and "{%" not in html


def test_the_deadline_is_shown_in_the_readers_time_zone_and_as_time_left() -> None:
    sample = SAMPLES["your_turn"]
    paris = rendered(sample).text
    assert "Tuesday 3 March 2026, 14:00 CET (Europe/Paris)" in paris
    assert "2 days 1 hour left." in paris
    tokyo = sample.mail.render(now=sample.now, time_zone="Asia/Tokyo", game_url=sample.game_url).text
    assert "Tuesday 3 March 2026, 22:00 JST (Asia/Tokyo)" in tokyo
    sao_paulo = sample.mail.render(now=sample.now, time_zone="America/Sao_Paulo", game_url=sample.game_url).text
    assert "Tuesday 3 March 2026, 10:00 UTC-03:00 (America/Sao_Paulo)" in sao_paulo


def test_an_unknown_time_zone_falls_back_to_utc() -> None:
    sample = SAMPLES["your_turn"]
    text = sample.mail.render(now=sample.now, time_zone="Mars/Olympus_Mons", game_url=sample.game_url).text
    assert "Tuesday 3 March 2026, 13:00 UTC\n" in text


def test_time_left_counts_from_when_the_mail_is_written() -> None:
    sample = SAMPLES["reminder"]
    later = sample.mail.render(now=datetime(2026, 3, 3, 12, 15, tzinfo=UTC), time_zone="UTC", game_url=sample.game_url)
    assert "45 minutes left." in later.text
    assert later.headline.startswith("Reminder: 45 minutes left for your turn")


def test_a_redeploy_reminder_speaks_of_the_redeployment() -> None:
    mail = rendered(SAMPLES["reminder"], defending=True)
    assert "redeployment" in mail.headline and "Redeploy here:" in mail.text


def test_only_reminders_notices_and_table_talk_have_an_unsubscribe_link() -> None:
    for name, sample in SAMPLES.items():
        mail = rendered(sample)
        has_link = sample.unsubscribe_url is not None and sample.unsubscribe_url in mail.text
        assert has_link == (sample.mail.category in (REMINDER, NOTICE, TALK)), name
        assert has_link == (sample.mail.kind.unsubscribe is not None), name
    assert "Stop these reminders:" in rendered(SAMPLES["reminder"]).text
    assert "Turn off notices like this one:" in rendered(SAMPLES["auto_passed"]).text
    assert "Stop mails of table talk:" in rendered(SAMPLES["table_talk"]).text


def test_the_turn_mail_has_the_board_picture_and_the_board_in_words() -> None:
    mail = rendered(SAMPLES["your_turn"])
    assert set(mail.images) == {render_module.BOARD_CID}
    assert mail.images[render_module.BOARD_CID].startswith(b"\x89PNG")
    assert f'src="cid:{render_module.BOARD_CID}"' in mail.html
    assert "Bob (you): Wealthy Giants in 14\u00a0(2)" in mail.text


def test_the_board_is_worded_and_drawn_once_per_game_state_as_it_is_directly() -> None:
    board = SAMPLES["your_turn"].context["board"]
    # Every reader of a game state shares one key: what is public; whose mail it is is not in it.
    assert render_module.public_key(dict(board, you=0)) == render_module.public_key(dict(board, you=None))
    moved = dict(board, regions=[dict(board["regions"][0], tokens=9), *board["regions"][1:]])
    assert render_module.public_key(moved) != render_module.public_key(board)
    for you in (None, 0, 1):
        for shown in (board, moved):
            mail = rendered(SAMPLES["your_turn"], board=dict(shown, you=you))
            lines = render_module.board_lines(dict(shown, you=you))
            assert "\n".join(f"  {line}" for line in lines) in mail.text.replace("\n    ", " ")
            picture = png.draw(PublicBoard.from_mail(shown))
            assert mail.images[render_module.BOARD_CID] == picture.data
            assert f'width="{picture.width}"' in mail.html


def test_a_board_that_is_not_json_is_worded_and_drawn_directly() -> None:
    board = SAMPLES["your_turn"].context["board"]
    marked = next(n for n, region in enumerate(board["regions"]) if region.get("marks"))
    odd = dict(board, regions=[*board["regions"]])
    odd["regions"][marked] = dict(odd["regions"][marked], marks=set(odd["regions"][marked]["marks"]))
    assert render_module.public_key(odd) is None
    values: dict[str, object] = {}
    images = render_module.add_board(values, odd, picture=True)
    assert images[render_module.BOARD_CID] == png.draw(PublicBoard.from_mail(board)).data
    assert values["board_lines"] == render_module.board_lines(board)


def inlined_whole(monkeypatch: pytest.MonkeyPatch, sample: Sample, **changes: object) -> str:
    """The sample's HTML with its style inlined as a whole page, not through the shapes."""
    with monkeypatch.context() as patch:
        patch.setattr(
            render_module, "_html", lambda template, values: render_module._inliner.inline(template.render(values))
        )
        return rendered(sample, **changes).html


ODD_VALUES = [
    "A & B\u00a0'x' é\n\tz",
    "&amp;",
    'Eve "<b>"',
    "line\r\nbreak",
    "nul\x00",
    "\ue0000\ue001",
    " ",
    "x" * 300,
]


@pytest.mark.parametrize("name", sorted(ALL))
def test_the_html_inlined_by_shape_is_the_page_inlined_whole(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sample = ALL[name]
    assert rendered(sample).html == inlined_whole(monkeypatch, sample)
    fields = type(sample.mail).model_fields
    for odd in ODD_VALUES:
        changes = {"player_name": odd, "game_name": odd + "!", "since": [odd, "and then"]}
        changes = {key: value for key, value in changes.items() if key in fields}
        assert rendered(sample, **changes).html == inlined_whole(monkeypatch, sample, **changes), repr(odd)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(codec="utf-8"), min_size=1, max_size=20), min_size=3, max_size=3))
def test_any_name_reads_the_same_in_the_html_inlined_by_shape(texts: list[str]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        sample = SAMPLES["your_turn"]
        changes = {"player_name": texts[0], "game_name": texts[1], "since": texts[2:]}
        assert rendered(sample, **changes).html == inlined_whole(monkeypatch, sample, **changes)


def test_mails_that_differ_only_in_their_readers_share_one_shape() -> None:
    render_module._inlined_shape.cache_clear()
    for name in ("Ann", "Bob", "Zoë & co"):
        reader = dataclasses.replace(SAMPLES["your_turn"], game_url=f"https://smallworld.example/play/{name}")
        rendered(reader, player_name=name)
    assert render_module._inlined_shape.cache_info().misses == 1


def test_the_final_table_names_the_winner_and_the_tie_break() -> None:
    mail = rendered(SAMPLES["game_over"])
    assert mail.headline == "Tuesday Night Conquest is over: Bob wins"
    assert mail.subject == "Small World: Tuesday Night Conquest" and mail.text.startswith(mail.headline + "\n\n")
    assert "Bob wins with 61 coins." in mail.text
    assert "Tie-break: Bob and Ann both had 61 coins" in mail.text
    assert "Bob had 14, Ann 11" in mail.text
    shared = rendered(ALL["game_over-shared"])
    assert "Ann and Bob share the victory" in shared.headline
    assert "1st=   Ann (you)" in shared.text


def test_a_message_without_its_required_context_is_refused() -> None:
    sample = SAMPLES["your_turn"]
    with pytest.raises(RenderError, match="^your_turn: the context lacks game_name$"):
        rendered(sample, game_name="")
    with pytest.raises(MessageError, match="unknown message"):
        from_json("no_such_message", {})


def test_the_seat_link_is_the_one_delivery_mints_at_sending_and_none_without_a_seat() -> None:
    for name in ("your_turn", "redeploy_needed", "reminder", "orders_answer", "invitation-replacing"):
        sample = ALL[name]
        fresh = dataclasses.replace(sample, game_url="https://smallworld.example/play/minted-at-sending")
        assert "minted-at-sending" in rendered(fresh).text and "minted-at-sending" in rendered(fresh).html
        # A reader who holds no seat when the mail leaves gets no link, never a dead or an empty one.
        seatless = rendered(dataclasses.replace(sample, game_url=None))
        assert "/play/" not in seatless.text and "/play/" not in seatless.html, name
        assert "None" not in seatless.text and 'href="None"' not in seatless.html, name


def test_rendering_is_pure() -> None:
    for sample in ALL.values():
        assert rendered(sample) == rendered(sample)


def test_names_are_escaped_in_the_html_only() -> None:
    mail = rendered(SAMPLES["your_turn"], game_name="<b>Tom & Jerry</b>")
    assert "&lt;b&gt;Tom &amp; Jerry&lt;/b&gt;" in mail.html and "<b>Tom" not in mail.html
    assert '"<b>Tom & Jerry</b>"' in mail.text


def test_time_formatting_examples() -> None:
    assert doctest.testmod(times).failed == 0
    assert times.time_left(datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC) - datetime(2026, 1, 1, tzinfo=UTC)) == (
        "less than a minute"
    )
    assert times.time_left(datetime(2026, 1, 1, tzinfo=UTC) - datetime(2026, 1, 2, tzinfo=UTC)).startswith("no time")


class _Contrasts(HTMLParser):
    """Each text of an inlined HTML mail with its colour and the background it is written on."""

    VOID = {"br", "img", "meta", "hr", "input", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, str, str]] = [("", "#000000", "#ffffff")]
        self.found: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            return
        style = dict(attrs).get("style") or ""
        _, colour, background = self.stack[-1]
        colour = next(iter(re.findall(r"(?:^|;)\s*color:\s*(#[0-9a-fA-F]{3,6})", style)), colour)
        background = next(iter(re.findall(r"background-color:\s*(#[0-9a-fA-F]{3,6})", style)), background)
        self.stack.append((tag, colour, background))

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and len(self.stack) > 1:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if data.strip() and self.stack[-1][0] not in ("title", "style"):
            _, colour, background = self.stack[-1]
            self.found.append((data.strip(), colour, background))


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_text_of_the_html_has_a_contrast_of_at_least_4_5(name: str) -> None:
    """WCAG 2, "Contrast (Minimum)": every text, links and the footer's fine print included."""
    parser = _Contrasts()
    parser.feed(rendered(ALL[name]).html)
    assert parser.found
    for text, colour, background in parser.found:
        assert contrast(colour, background) >= 4.5, (text, colour, background)


def test_an_invitation_lists_each_player_s_record_beside_their_name() -> None:
    lines = ["Ann: 12 games, missed 2 % of deadlines, rating 21", "Bob: no finished game yet"]
    mail = rendered(SAMPLES["invitation"], records=lines)
    assert "Players:\n- Ann: 12 games, missed 2 % of deadlines, rating 21\n- Bob: no finished game yet\n" in mail.text
    assert "<li>Ann: 12 games, missed 2 % of deadlines, rating 21</li>" in mail.html
    assert "Players: Ann, Bob, Chloé" in rendered(SAMPLES["invitation"]).text, "rows written before: names only"


def test_the_templates_compiled_at_a_workers_start_are_all_a_mail_needs() -> None:
    # A mail worker compiles every template as it starts (worker/tasks/mail.py): no sample loads one afterwards.
    render_module.prepare()
    compiled = dict(render_module._env.cache or {})
    assert len(compiled) == len(render_module._env.list_templates())
    for sample in ALL.values():
        rendered(sample)
    assert dict(render_module._env.cache or {}) == compiled


def test_a_host_told_of_their_own_missed_turns_reads_you() -> None:
    mail = rendered(ALL["host_alert-yourself"])
    assert mail.headline == "Tuesday Night Conquest: you missed 2 turns in a row"
    assert "You have missed 2 turns in a row" in mail.text and "for you" in mail.text
    assert "Chloé has missed" not in mail.text and "for them" not in mail.text and "for them" not in mail.html
    other = rendered(SAMPLES["host_alert"])
    assert other.headline == "Tuesday Night Conquest: Chloé missed 2 turns in a row" and "for them" in other.text


def test_the_footers_webcal_address_breaks_between_its_parts_never_mid_word_on_a_phone() -> None:
    """Issue 34, finding 9: the footer's ``webcal://`` address broke mid-word on a phone (``word-break:
    break-all``): it may now break only after a ``/`` or before a ``.``."""
    sample = SAMPLES["your_turn"]
    assert sample.calendar_url
    html = rendered(sample).html
    webcal = sample.calendar_url.replace("https://", "webcal://")
    shown = re.search(r"may want it as (.*?)\)", html)
    assert shown, html
    assert shown[1].replace("<wbr>", "") == webcal
    pieces = shown[1].split("<wbr>")
    assert len(pieces) >= 5 and all(p.endswith("/") or pieces[i + 1].startswith(".") for i, p in enumerate(pieces[:-1]))
    assert "break-all" not in html.split("may want it as")[1].split(")")[0]
