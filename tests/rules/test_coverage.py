"""Random games play every race, every special power and every action type.

Games between random legal players (``rules.bots``), over every player count and both defender
redeployment modes (ARCHITECTURE §4: ``auto`` and ``ask``), with a deadline missed now and then
(``auto_pass``), are played until each race and each power has been picked, each action type has
been applied (In Decline Ghouls conquering and Stout's decline at the end of a turn included) and
each race and power has been auto-passed, checking the invariants after every step and after one
other legal action, not taken, too. The test fails if anything is still missing after ``MAX_GAMES``
games; the counts are printed (``pytest -s``) and attached to the report (``pytest -rA``)."""

from __future__ import annotations

import random
from collections import Counter

from rules import POWERS, RACES, apply, auto_pass, awaiting, legal_actions, new_game
from rules.actions import ACTION_FIELDS, DECLINED, Action
from rules.bots import concrete, random_player

from .invariants import check_invariants

#: Played even when everything was reached sooner: every player count in both modes, several times.
MIN_GAMES = 40
MAX_GAMES = 200
MAX_STEPS_PER_GAME = 5000
#: How often a deadline is missed instead of acting.
AUTO_PASS_RATE = 0.04

ACTION_KINDS = sorted(ACTION_FIELDS) + ["conquer troop=declined", "end_turn decline=true"]


def action_kind(action: Action) -> list[str]:
    kinds = [action.type]
    if action.type == "conquer" and action.troop == DECLINED:
        kinds.append("conquer troop=declined")
    if action.type == "end_turn" and action.decline:
        kinds.append("end_turn decline=true")
    return kinds


def play(game: int, counts: dict[str, Counter]) -> None:
    players = 2 + game % 4
    mode = "ask" if (game // 4) % 2 else "auto"
    state = new_game(players, seed=f"coverage-{game}", options={"redeploy": mode})
    rnd = random.Random(game)
    check_invariants(state)
    for _ in range(MAX_STEPS_PER_GAME):
        if state.over:
            counts["games"][f"{players}p/{mode}"] += 1
            return
        seat = min(awaiting(state))
        legal = legal_actions(state, seat)
        assert legal, f"game {game}: nothing legal for seat {seat} in phase {state.phase}"
        # A road not taken: any legal action applies and leaves a valid state.
        check_invariants(apply(state, concrete(rnd.choice(legal), rnd)))
        if rnd.random() < AUTO_PASS_RATE:
            troop = state.players[seat].active
            state = auto_pass(state, seat)
            if troop is not None:
                counts["auto_pass races"][troop.race] += 1
                counts["auto_pass powers"][troop.power] += 1
        else:
            action = random_player(state, rnd)
            state = apply(state, action)
            for kind in action_kind(action):
                counts["actions"][kind] += 1
            if action.type == "pick":
                troop = state.players[seat].active
                counts["races"][troop.race] += 1
                counts["powers"][troop.power] += 1
        check_invariants(state)
    raise AssertionError(f"game {game} did not end within {MAX_STEPS_PER_GAME} steps")


def missing(counts: dict[str, Counter]) -> dict[str, list[str]]:
    wanted = {
        "races": sorted(RACES),
        "powers": sorted(POWERS),
        "actions": ACTION_KINDS,
        "auto_pass races": sorted(RACES),
        "auto_pass powers": sorted(POWERS),
    }
    out = {group: [name for name in names if not counts[group][name]] for group, names in wanted.items()}
    return {group: names for group, names in out.items() if names}


def report(counts: dict[str, Counter], games: int) -> str:
    lines = [f"coverage after {games} random games:"]
    for group in ("games", "races", "powers", "actions", "auto_pass races", "auto_pass powers"):
        items = ", ".join(f"{name}: {n}" for name, n in sorted(counts[group].items()))
        lines.append(f"  {group}: {items}")
    return "\n".join(lines)


def test_random_games_play_every_race_power_and_action(request, record_property):
    counts: dict[str, Counter] = {
        group: Counter() for group in ("games", "races", "powers", "actions", "auto_pass races", "auto_pass powers")
    }
    games = 0
    while games < MAX_GAMES:
        play(games, counts)
        games += 1
        if games >= MIN_GAMES and not missing(counts):
            break
    text = report(counts, games)
    print("\n" + text)
    request.node.add_report_section("call", "coverage", text)
    record_property("coverage", text)
    assert not missing(counts), f"never reached in {games} games: {missing(counts)}\n{text}"
