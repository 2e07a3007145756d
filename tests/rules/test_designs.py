"""Races and powers of the host's own design (``rules/designs.py``): the vocabulary, a design checked field by
field, its card in the rules' words, dealt into a new game as the rulebook says ("Blank Race banner", "Blank
Special Power badge"), kept in the snapshot, and each kind of effect played through the engine.

On the 2-player board: 12 is an inner Forest (not on the border), 6 and 14 inner Hills, 2 a border Forest
with a Mine, 9 an inner Farmland.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from rules import (
    POWERS,
    RACES,
    Action,
    apply,
    conquest_breakdown,
    conquest_refusal,
    legal_actions,
    new_game,
    player_view,
    read_state,
    tell,
    turn_score,
)
from rules.abilities import shown, unregister
from rules.components import POWER_TOKENS, RACE_TOKENS
from rules.designs import (
    EFFECTS,
    DesignError,
    card,
    design_schema,
    game_name,
    game_powers,
    game_races,
    read_design,
    vocabulary,
)

from .builder import Builder, act
from .invariants import check_invariants


def race(*effects: dict[str, Any], name: str = "Sky Pirates", tokens: int = 6) -> dict[str, Any]:
    return {"kind": "race", "name": name, "tokens": tokens, "text": "They came by air.", "effects": list(effects)}


def power(*effects: dict[str, Any], name: str = "Lucky", tokens: int = 3) -> dict[str, Any]:
    return {"kind": "power", "name": name, "tokens": tokens, "text": "", "effects": list(effects)}


# -- the vocabulary --------------------------------------------------------------------------------------------
def test_the_vocabulary_has_the_effects_the_official_abilities_are_made_of() -> None:
    assert set(EFFECTS) >= {
        "coins_per_terrain",
        "coins_per_symbol",
        "coins_per_region",
        "coins_per_conquest",
        "coins_first_turn",
        "discount_terrain",
        "discount_symbol",
        "discount_all",
        "immune_terrain",
        "immune_symbol",
        "enters_anywhere",
        "enters_terrain",
        "tokens_first_turn",
        "tokens_each_turn",
        "keeps_tokens_in_decline",
        "conquers_in_decline",
    }
    listed = vocabulary()
    assert [e["id"] for e in listed] == list(EFFECTS)
    for entry in listed:
        assert entry["example"].endswith(".") and entry["hooks"], entry
        assert entry["in_decline"] in ("never", "always", "chosen"), entry
        schema = entry["schema"]
        assert schema["properties"]["effect"] == {"const": entry["id"]}
        assert schema["additionalProperties"] is False
        for name, param in schema["properties"].items():
            if param.get("type") == "integer":
                assert param["minimum"] <= param["maximum"], (entry["id"], name)
    assert len(design_schema()["properties"]["effects"]["items"]["oneOf"]) == len(EFFECTS)


def test_each_effect_says_whether_it_holds_in_decline_as_the_rulebook_does() -> None:
    # Rulebook, "The Races and Special Powers": benefits end In Decline unless the race says otherwise.
    assert EFFECTS["discount_all"].in_decline == "never"
    assert EFFECTS["coins_per_symbol"].in_decline == "chosen"  # Dwarves keep theirs
    assert EFFECTS["conquers_in_decline"].in_decline == "always"
    assert EFFECTS["keeps_tokens_in_decline"].kinds == {"race"}


# -- a design checked ------------------------------------------------------------------------------------------
def test_a_design_is_read_with_its_defaults_and_round_trips() -> None:
    design = read_design(race({"effect": "coins_per_symbol", "symbol": "mine"}))
    filled = {"effect": "coins_per_symbol", "symbol": "mine", "coins": 1, "in_decline": False}
    assert design.to_json()["effects"] == [filled]
    assert read_design(design.to_json()) == design
    assert read_design(race()).effects == ()  # a race that is only its tokens
    assert read_design(power(tokens=0)).tokens == 0


def mutate(base: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(base)
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


BASE = race({"effect": "coins_per_terrain", "terrain": "forest"}, {"effect": "discount_all"})
REFUSED = [
    (mutate(BASE, ("kind",), "monster"), "kind"),
    (mutate(BASE, ("name",), KeyError), "name"),
    (mutate(BASE, ("name",), "  "), "name"),
    (mutate(BASE, ("name",), "orcs"), "name"),  # an official name, whatever the case
    (mutate(BASE, ("name",), "Lost Tribe"), "name"),
    (mutate(BASE, ("name",), "x" * 25), "name"),
    (mutate(BASE, ("name",), "Pirates (v2)"), "name"),
    (mutate(BASE, ("name",), "Pi\u202erates"), "name"),  # a bidi control
    (mutate(BASE, ("tokens",), 11), "tokens"),  # rulebook: "never … higher than 10"
    (mutate(BASE, ("tokens",), 0), "tokens"),
    (mutate(BASE, ("tokens",), "6"), "tokens"),
    (mutate(BASE, ("tokens",), True), "tokens"),
    (mutate(power(), ("tokens",), 6), "tokens"),  # rulebook: a power's at most 5
    (mutate(BASE, ("text",), "x" * 281), "text"),
    (mutate(BASE, ("text",), "a\x07b"), "text"),
    (mutate(BASE, ("colour",), "red"), "colour"),
    (mutate(BASE, ("effects",), {"effect": "discount_all"}), "effects"),
    (mutate(BASE, ("effects",), [{"effect": "discount_all", "tokens": t} for t in (1, 2)] * 5), "effects"),
    (mutate(BASE, ("effects", 0), "forest"), "effects[0]"),
    (mutate(BASE, ("effects", 0, "effect"), "fly"), "effects[0].effect"),
    (mutate(BASE, ("effects", 0, "terrain"), KeyError), "effects[0].terrain"),
    (mutate(BASE, ("effects", 0, "terrain"), "sea"), "effects[0].terrain"),
    (mutate(BASE, ("effects", 0, "coins"), 4), "effects[0].coins"),
    (mutate(BASE, ("effects", 0, "in_decline"), "yes"), "effects[0].in_decline"),
    (mutate(BASE, ("effects", 1, "colour"), "red"), "effects[1].colour"),
    (mutate(BASE, ("effects", 1, "tokens"), 0), "effects[1].tokens"),
    (race({"effect": "discount_all"}, {"effect": "discount_all", "tokens": 2}), "effects[1]"),  # twice
    (race({"effect": "enters_anywhere"}, {"effect": "enters_terrain", "terrain": "hill"}), "effects[1]"),
    (race({"effect": "enters_terrain", "terrain": "hill"}, {"effect": "enters_anywhere"}), "effects[1]"),
    (power({"effect": "coins_per_region", "in_decline": True}), "effects[0].in_decline"),  # a badge is discarded
    (power({"effect": "conquers_in_decline"}), "effects[0].effect"),  # a race's only
]


@pytest.mark.parametrize(("data", "field"), REFUSED)
def test_a_design_the_rules_refuse_names_the_field(data: dict[str, Any], field: str) -> None:
    with pytest.raises(DesignError) as refused:
        read_design(data)
    assert refused.value.field == field
    assert str(refused.value).startswith(f"{field}: ")
    with pytest.raises(DesignError) as prefixed:
        read_design(data, "custom.race")
    assert prefixed.value.field == f"custom.race.{field}"


def test_two_effects_of_one_id_on_different_terrains_are_two_effects() -> None:
    both = read_design(race(*({"effect": "discount_terrain", "terrain": t} for t in ("hill", "farmland"))))
    assert len(both.effects) == 2


# -- the card in the rules' words ------------------------------------------------------------------------------
def test_the_card_is_worded_from_the_effects_with_the_hosts_text_beside_it() -> None:
    words = card(read_design(race({"effect": "coins_per_symbol", "symbol": "mine", "in_decline": True})))
    assert words["summary"] == "+1 coin per Mine region."
    assert words["description"] == (
        "Each Mine Region your Sky Pirates occupy is worth 1 bonus Victory coin at the end of your turn. "
        "This is kept even when In Decline."
    )
    assert words["text"] == "They came by air."
    assert words["effects"] == [{"effect": "coins_per_symbol", "words": words["description"], "in_decline": True}]
    badge = card(read_design(power({"effect": "discount_terrain", "terrain": "hill", "tokens": 2})))
    assert badge["description"] == (
        "You may conquer any Hill Region with 2 Race tokens less than normal. A minimum of 1 token is still required."
    )
    assert card(read_design(race()))["summary"] == "No power but their number."


def test_the_hosts_text_is_kept_as_written_once_trimmed() -> None:
    assert read_design(mutate(BASE, ("text",), "  Arr!\r\nThey sail.  ")).text == "Arr!\nThey sail."


# -- into a new game -------------------------------------------------------------------------------------------
def test_the_hosts_race_takes_the_place_of_the_named_banner_and_uses_its_box() -> None:
    state = new_game(3, seed=4, custom={"race": race(), "replaces": "Humans"})
    (name,) = state.designs
    assert name.startswith("Sky Pirates (")
    banners = state.race_stack + [c.race for c in state.combos]
    assert name in banners and "Humans" not in banners and len(banners) == len(RACE_TOKENS)
    assert RACES[name].given_tokens() == 6 and RACES[name].box_tokens() == RACE_TOKENS["Humans"][1]
    assert state.designs[name]["replaces"] == "Humans"
    assert game_races(state) == sorted(banners)
    check_invariants(state)


def test_a_random_stand_in_is_drawn_from_the_seed_among_banners_with_enough_tokens() -> None:
    tall = race(tokens=10)
    chosen = {new_game(2, seed=seed, custom={"race": tall}).designs.popitem()[1]["replaces"] for seed in range(30)}
    assert chosen and all(RACE_TOKENS[name][1] >= 10 for name in chosen)
    assert "Dwarves" not in chosen  # 8 in the box
    first = new_game(2, seed=7, custom={"race": tall})
    assert new_game(2, seed=7, custom={"race": tall}).to_json() == first.to_json()


def test_the_hosts_power_is_an_extra_badge_and_first_deals_the_combo_on_top() -> None:
    state = new_game(4, seed=2, custom={"race": race(), "power": power(), "first": True})
    names = {d["kind"]: key for key, d in state.designs.items()}
    assert (state.combos[0].race, state.combos[0].power) == (names["race"], names["power"])
    badges = state.power_stack + [c.power for c in state.combos]
    assert len(badges) == len(POWER_TOKENS) + 1 and game_powers(state) == sorted(badges)
    assert POWERS[names["power"]].given_tokens() == 3
    state = apply(state, Action("pick", 0, combo=0))
    assert state.players[0].active.hand == 6 + 3
    check_invariants(state)


def test_a_game_without_designs_deals_none_of_those_another_game_registered() -> None:
    new_game(2, seed=1, custom={"race": race(name="Elsewhere"), "power": power(name="Elsewhere Too")})
    state = new_game(2, seed=1)
    dealt = state.race_stack + state.power_stack + [n for c in state.combos for n in (c.race, c.power)]
    assert not any(name.startswith("Elsewhere") for name in dealt)
    assert state.designs == {} and "designs" not in state.to_json()


@pytest.mark.parametrize(
    ("custom", "field"),
    [
        ({"race": race(tokens=10), "replaces": "Dwarves"}, "custom.replaces"),  # 8 stand-in tokens
        ({"race": race(), "replaces": "Dragons"}, "custom.replaces"),
        ({"replaces": "Humans"}, "custom.replaces"),
        ({"power_replaces": "Forest"}, "custom.power_replaces"),
        ({"race": power()}, "custom.race.kind"),
        ({"power": race()}, "custom.power.kind"),
        ({"race": mutate(BASE, ("effects", 0, "terrain"), "lava")}, "custom.race.effects[0].terrain"),
        ({"first": "yes"}, "custom.first"),
        ({"colour": "red"}, "custom.colour"),
        ("a race", "custom"),
    ],
)
def test_a_custom_setup_the_rules_refuse_names_the_field(custom: Any, field: str) -> None:
    with pytest.raises(DesignError) as refused:
        new_game(3, seed=1, custom=custom)
    assert refused.value.field == field


def test_the_story_names_a_design_as_the_host_named_it() -> None:
    # Its name in the game carries a fingerprint (rules/designs.py); the words leave it out.
    state = new_game(2, seed=1, custom={"race": race(), "power": power(), "first": True})
    after = apply(state, Action("pick", 0, combo=0))
    assert tell(state, after, Action("pick", 0, combo=0), ("Ann", "Bob")) == (
        "Ann picked combo 1: the Lucky Sky Pirates; 9 tokens in hand"
    )
    assert all(shown(name) in ("Sky Pirates", "Lucky") for name in state.designs)
    assert shown("Orcs") == "Orcs"


# -- in the snapshot -------------------------------------------------------------------------------------------
def test_the_design_is_in_the_snapshot_and_a_fresh_process_reads_it_back() -> None:
    state = new_game(2, seed=3, custom={"race": race({"effect": "discount_all"}), "power": power(), "first": True})
    state = apply(state, Action("pick", 0, combo=0))
    data = state.to_json()
    assert data["schema"] == 3 and set(data["designs"]) == set(state.designs)
    for name in state.designs:
        unregister(name)  # as a worker that never saw this design
    again = read_state(copy.deepcopy(data))
    assert again == state and again.to_json() == data
    check_invariants(again)


def test_the_designs_are_public_in_every_seats_view_and_the_stacks_stay_secret() -> None:
    state = new_game(3, seed=8, custom={"race": race(), "power": power()})
    view = player_view(state, 1)
    assert view["designs"] == state.to_json()["designs"]  # the table sees the host's banner and badge
    assert view["race_stack"] == len(state.race_stack) and view["power_stack"] == len(state.power_stack)
    assert "rng" not in view


def test_a_later_edit_of_the_design_changes_no_running_game() -> None:
    before = race({"effect": "coins_per_region"}, name="Tinkers")
    running = new_game(2, seed=5, custom={"race": before, "replaces": "Orcs", "first": True})
    edited = race({"effect": "coins_per_region", "coins": 3}, name="Tinkers")
    later = new_game(2, seed=5, custom={"race": edited, "replaces": "Orcs", "first": True})
    (old_name,), (new_name,) = running.designs, later.designs
    assert old_name != new_name and old_name.startswith("Tinkers (")
    state = read_state(running.to_json())
    assert RACES[state.combos[0].race].summary == "+1 coin per region held."
    assert game_name(read_design(edited), RACE_TOKENS["Orcs"][1]) == new_name


def test_a_snapshot_whose_design_was_tampered_with_is_refused_naming_it() -> None:
    data = new_game(2, seed=3, custom={"race": race(), "replaces": "Humans"}).to_json()
    (name,) = data["designs"]
    cheat = copy.deepcopy(data)
    cheat["designs"][name]["tokens"] = 10  # same name, more tokens
    with pytest.raises(ValueError, match=rf"designs\.{name.replace('(', '.').replace(')', '.')}: not the name"):
        read_state(cheat)
    missing = copy.deepcopy(data)
    del missing["designs"]  # its banner is still dealt: not a race of this game
    with pytest.raises(ValueError, match="is not a race of this game"):
        read_state(missing)
    bad = copy.deepcopy(data)
    bad["designs"][name]["effects"] = [{"effect": "fly"}]
    with pytest.raises(ValueError, match=r"effects\[0\]\.effect"):
        read_state(bad)


# -- each kind of effect, played -------------------------------------------------------------------------------
def designed(custom: dict[str, Any], seed: int = 1, redeploy: str = "auto") -> tuple[Builder, dict[str, str]]:
    builder = Builder(2, seed=seed, custom=custom, redeploy=redeploy).clear_board()
    return builder, {d["kind"]: key for key, d in builder.state.designs.items()}


def test_a_discount_shows_in_the_cost_breakdown_and_never_below_one() -> None:
    builder, names = designed({"power": power({"effect": "discount_terrain", "terrain": "hill", "tokens": 2})})
    state = builder.active(0, "Ratmen", names["power"], hand=8).region(3, seat=0).at(0, "conquer").build()
    troop = state.players[0].active
    cost = conquest_breakdown(state, 0, troop, 4)  # a Hill next to 3
    assert cost.parts == (("base", 2), ("Lucky", -2), ("at least 1", 1)) and cost.total == 1  # as players read it


def test_immune_regions_refuse_enemy_conquests_until_the_race_declines() -> None:
    builder, names = designed({"power": power({"effect": "immune_terrain", "terrain": "forest"})})
    state = builder.combos(("Ratmen", names["power"]), ("Orcs", "Hill")).at(0).build()
    state = act(state, "pick", 0, combo=0)
    state = act(state, "conquer", 0, region=2)  # a border Forest
    state = act(state, "end_conquest", 0)
    state = apply(state, {"type": "redeploy", "player": 0, "tokens": {"2": state.players[0].active.hand + 2}})
    state = act(state, "end_turn", 0)
    state = act(state, "pick", 1, combo=0)
    orcs = state.players[1].active
    assert conquest_refusal(state, 1, orcs, 2) == "Region 2 is immune: the Lucky protect it"
    assert not [a for a in legal_actions(state, 1) if a.region == 2]
    check_invariants(state)
    state = act(state, "end_conquest", 1)
    state = act(state, "end_turn", 1)
    state = act(state, "decline", 0)  # the immunity ends In Decline
    assert conquest_refusal(state, 1, state.players[1].active, 2) is None
    assert names["power"] not in state.abilities


def test_entering_by_a_terrain_allows_a_first_conquest_on_an_inner_region_of_it() -> None:
    builder, names = designed({"race": race({"effect": "enters_terrain", "terrain": "forest"}), "replaces": "Humans"})
    state = builder.active(0, names["race"], "Hill", hand=10).at(0, "conquer").build()
    troop = state.players[0].active
    assert conquest_refusal(state, 0, troop, 12) is None  # an inner Forest
    assert "border region" in str(conquest_refusal(state, 0, troop, 6))  # an inner Hill
    offered = {a.region for a in legal_actions(state, 0) if a.type == "conquer"}
    assert 12 in offered and 6 not in offered
    check_invariants(act(state, "conquer", 0, region=12))


def test_extra_tokens_on_the_pick_and_at_each_redeployment_while_active() -> None:
    custom = {
        "race": race({"effect": "tokens_first_turn", "tokens": 3}, tokens=5),
        "replaces": "Ratmen",  # 13 stand-in tokens
        "power": power({"effect": "tokens_each_turn", "tokens": 2}, tokens=2),
    }
    builder, names = designed(custom)
    state = builder.combos((names["race"], names["power"])).at(0).build()
    state = act(state, "pick", 0, combo=0)
    assert state.players[0].active.hand == 5 + 2 + 3
    state = act(state, "conquer", 0, region=2)
    hand = state.players[0].active.hand
    state = act(state, "end_conquest", 0)
    assert state.players[0].active.hand == hand + 2
    assert turn_score(state, 0)["total"] == 1  # the region; the tokens cost no coin
    check_invariants(state)


def test_a_race_that_scores_in_decline_keeps_only_the_bonus_it_says() -> None:
    custom = {
        "race": race({"effect": "coins_per_region", "in_decline": True}, {"effect": "coins_each_turn", "coins": 3}),
        "replaces": "Humans",
    }
    builder, names = designed(custom)
    mine = names["race"]
    state = builder.declined(0, mine).region(3, seat=0, race=mine).region(9, seat=0, race=mine).at(0).build()
    assert turn_score(state, 0) == {"regions": 2, "bonus": {names["race"]: 2}, "total": 4}


def test_tokens_kept_in_decline_taken_back_by_an_attack_are_placed_by_the_auto_rule() -> None:
    # Only the host's race keeps all its tokens In Decline without conquering: an attack gives it tokens in
    # hand with no step of its own, in ``ask`` mode too; they go on its regions when the turn ends.
    keeper = {"race": race({"effect": "keeps_tokens_in_decline"}), "replaces": "Humans"}
    builder, names = designed(keeper, redeploy="ask")
    state = (
        builder.declined(1, names["race"])
        .region(2, seat=1, tokens=3, race=names["race"])
        .region(3, seat=1, tokens=1, race=names["race"])
        .active(0, "Ratmen", "Hill", hand=12)
        .at(0, "conquer")
        .build()
    )
    state = act(state, "conquer", 0, region=2)
    assert state.players[1].declined[0].hand == 2  # 3 tokens: 1 lost, 2 back in hand
    state = act(state, "end_conquest", 0)
    state = apply(state, {"type": "redeploy", "player": 0, "tokens": {"2": 12}})
    state = act(state, "end_turn", 0)
    assert state.phase != "defend" and state.regions[3].tokens == 3
    assert state.players[1].declined[0].hand == 0
    check_invariants(state)
