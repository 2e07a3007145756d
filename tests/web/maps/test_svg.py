"""The board picture (service.web.maps.board_svg): every region, clickable when asked, with what lies on it."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

import rules
from service.web.maps import MapOptions, RegionMark, board_svg, legend_svg, seat_badge_svg

SVG = "{http://www.w3.org/2000/svg}"


def a_state(players: int = 3) -> dict:
    state = rules.new_game(players, seed="map").to_json()
    state["players"][0]["active"] = {"race": "Orcs", "power": "Flying"}
    state["players"][1]["declined"] = [{"race": "Ratmen", "power": "Hill", "declined": True}]
    state["regions"][3] = {"owner": 0, "race": "Orcs", "tokens": 4, "fortress": True}
    state["regions"][4] = {"owner": 1, "race": "Ratmen", "tokens": 1, "lair": True, "encampments": 2}
    state["regions"][5] = {"hero": True, "dragon": True, "hole": True}
    return state


@pytest.mark.parametrize("board", rules.BOARD_NAMES)
def test_each_region_is_drawn_once_as_well_formed_svg(board: str) -> None:
    players = int(board[0])
    svg = board_svg(rules.player_view(rules.new_game(players, seed=1), None))
    root = ET.fromstring(str(svg))
    regions = root.findall(f".//{SVG}path[@class]")
    drawn = [p for p in regions if "region " in p.get("class", "") + " "]
    assert len(drawn) == len(rules.board_for_players(players))


def test_tokens_owner_badge_and_decline_are_shown() -> None:
    svg = str(board_svg(a_state(), MapOptions(seat_names=["Ann", "Bob", "Cy"])))
    titles = [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}title")]
    assert any("Ann's Orcs: 4 tokens, Fortress" in t for t in titles)
    assert any("Bob's Ratmen In Decline: 1 token, Troll's Lair, 2 Encampments" in t for t in titles)
    assert svg.count('class="chip declined"') == 1
    # Markers and symbols are drawn with their own pictures.
    for marker in ("fortress", "lair", "camp", "hero", "dragon", "hole"):
        assert f'href="#map-symbol-{marker}"' in svg


def test_regions_are_links_with_labels_when_asked() -> None:
    svg = str(
        board_svg(
            a_state(),
            MapOptions(href=lambda r: f"/turn?region={r}", marks={7: RegionMark(cost=3), 8: RegionMark(4, die=True)}),
        )
    )
    root = ET.fromstring(svg)
    links = root.findall(f".//{SVG}a")
    assert len(links) == len(rules.board_for_players(3))
    assert all(a.get("aria-label", "").startswith("Region ") for a in links)
    assert svg.count('class="target-outline"') == 2
    assert re.search(r'class="cost"[^>]*stroke-dasharray', svg), "a die conquest's cost is dashed"


def test_text_is_escaped() -> None:
    svg = str(board_svg(a_state(), MapOptions(seat_names=["<b>Ann</b>", "Bob", "Cy"], label='A "map"')))
    assert "<b>" not in svg
    ET.fromstring(svg)


def test_the_map_is_labelled_with_a_sentence_by_default() -> None:
    svg = str(board_svg(a_state(), MapOptions(seat_names=["Ann", "Bob", "Cy"])))
    label = ET.fromstring(svg).get("aria-label", "")
    assert label.startswith("Map of the 3-player board, 30 regions; regions held: Ann 1, Bob 1, Cy 0, Lost Tribes")
    assert label.endswith(".") and "{" not in label and "Board(" not in label


def test_the_legend_names_the_mountain_once_and_shows_the_lost_tribe() -> None:
    items = re.findall(r"</svg>([^<]+)</li>", str(legend_svg()))
    assert items.count("Mountain") == 1
    assert "Lost Tribe" in items and "In Decline tokens" in items
    assert len(items) == len(set(items))


def test_a_seats_badge_has_its_shape_colour_and_number() -> None:
    badge = ET.fromstring(str(seat_badge_svg(2)))
    triangle = badge.find(".//path")
    assert triangle is not None and triangle.get("fill") == "#F0E442"
    assert triangle.get("d", "").count("L") == 2  # three corners
    assert [t.text for t in badge.iter("text")] == ["3"]
