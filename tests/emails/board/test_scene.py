"""emails.board.scene: one description of the board for the page and the mail."""

from __future__ import annotations

from dataclasses import replace

import pytest

import rules
from emails.board import MAIL, PAGE, RegionMark, board_scene, legend, palette
from emails.board.public import PublicBoard
from emails.board.scene import describe_region, summary
from emails.board.shapes import Ellipse, Group, Polygon, Rect, Shape, Text
from emails.board.symbols import PATTERNS


def a_board(players: int = 3) -> PublicBoard:
    state = rules.new_game(players, seed="scene").to_json()
    state["players"][0]["active"] = {"race": "Orcs", "power": "Flying"}
    state["players"][1]["declined"] = [{"race": "Ratmen", "power": "Hill", "declined": True}]
    state["regions"][3] = {"owner": 0, "race": "Orcs", "tokens": 4, "fortress": True}
    state["regions"][4] = {"owner": 1, "race": "Ratmen", "tokens": 1, "lair": True, "encampments": 2}
    state["regions"][5] = {"hero": True, "dragon": True, "hole": True}
    return PublicBoard.from_state(state, ["Ann", "Bob", "Cy"])


def test_the_legend_names_each_thing_once_and_shows_the_lost_tribe() -> None:
    names = [entry.name for entry in legend()]
    assert len(names) == len(set(names))
    assert names.count("Mountain") == 1
    assert "Lost Tribe" in names


def test_the_mails_key_shows_only_what_its_board_holds() -> None:
    board = a_board()
    names = [entry.name for entry in legend(board)]
    assert {"Fortress", "Troll's Lair", "Encampment", "Heroes", "Dragon", "Hole-in-the-Ground"} <= set(names)
    assert "In Decline tokens" in names and "Lost Tribe" in names
    assert not any(name.startswith("Tokens needed") for name in names)  # the turn page's only


def test_the_summary_is_a_short_sentence() -> None:
    board = a_board()
    lost = sum(1 for r in board.regions if r.troops and r.troops.owner is None)
    sentence = summary(board)
    assert sentence == f"Map of the 3-player board, 30 regions; regions held: Ann 1, Bob 1, Cy 0, Lost Tribes {lost}."
    assert len(sentence) < 120


def test_regions_are_described_in_words() -> None:
    board = a_board()
    assert describe_region(board, 3).endswith("Ann's Orcs: 4 tokens, Fortress")
    assert describe_region(board, 4).endswith("Bob's Ratmen In Decline: 1 token, Troll's Lair, 2 Encampments")


def test_the_page_and_the_mail_draw_the_same_regions_and_pieces() -> None:
    board = a_board()
    page, mail = board_scene(board, style=PAGE), board_scene(board, style=MAIL)
    assert page.links == mail.links and page.frame == mail.frame
    for on_page, in_mail in zip(page.areas, mail.areas, strict=True):
        # The mail fills a terrain with its pattern's background colour (a lighter picture), the page with it.
        terrain = on_page.outline.fill.removeprefix("pattern:")
        assert in_mail.outline.fill == PATTERNS[terrain].background
        assert replace(in_mail, outline=replace(in_mail.outline, fill=on_page.outline.fill)) == on_page
    for on_page, in_mail in zip(page.labels, mail.labels, strict=True):
        assert [row.cls for row in on_page.items] == [row.cls for row in in_mail.items]  # type: ignore[union-attr]
    # No key under the mail's map: the mail's words name the seats.
    assert not mail.key and not page.key
    assert mail.box == page.box


def test_marks_and_selection_are_drawn_over_the_regions() -> None:
    scene = board_scene(a_board(), marks={7: RegionMark(3), 8: RegionMark(4, die=True)}, selected=9)
    assert [h.cls for h in scene.highlights] == ["target-outline", "target-outline", "selected-outline"]
    assert "target" in scene.areas[7].outline.cls


def _contrasts(shape: Shape, background: str | None, out: list[tuple[str, str, str]]) -> None:
    if isinstance(shape, Text):
        assert background is not None, f"{shape.text!r} is written on nothing of its own"
        if background == "pattern:decline":
            out += [(shape.text, shape.fill, palette.DECLINE_LIGHT), (shape.text, shape.fill, palette.DECLINE_DARK)]
        else:
            out.append((shape.text, shape.fill, background))
    elif isinstance(shape, Group):
        first = shape.items[0] if shape.items else None
        if isinstance(first, Rect | Ellipse | Polygon) and first.fill:
            background = first.fill
        for item in shape.items:
            _contrasts(item, background, out)


@pytest.mark.parametrize("style", [PAGE, MAIL], ids=["page", "mail"])
def test_every_label_has_a_contrast_of_at_least_4_5(style) -> None:
    scene = board_scene(a_board(), marks={7: RegionMark(3, die=True)}, style=style)
    found: list[tuple[str, str, str]] = []
    for shape in (*scene.labels, *scene.key):
        _contrasts(shape, palette.PAPER if shape in scene.key else None, found)
    assert found
    for text, colour, background in found:
        assert palette.contrast(colour, background) >= 4.5, (text, colour, background)
