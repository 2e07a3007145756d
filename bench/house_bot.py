"""The house bot against the random bot and the one-step greedy bot: win rates and think time per turn.

    python bench/house_bot.py play --opponent greedy --first 0 --count 25 [--worlds 3 --breadth 6 ...]
    python bench/house_bot.py report

Each game is a three-player game on the rules engine alone (no service): the house bot
(``rules.bots.house_action``) in one seat, the opponent bot in the other two. Game ``g`` is dealt from seed
``g``, the house bot sits in seat ``g % 3`` (so it plays first, second and third equally often), and each
seat draws its randomness from ``random.Random(f"{g}:{seat}")``: a game replays exactly. ``play`` appends
one JSON line per game to ``bench/results/house_<opponent>.jsonl`` (a game already there is not played
again), so the 200 games of a match can be played a few at a time on a shared machine; ``report`` reads
every file and prints, per opponent: the house bot's win rate (first place, shared or not) with its 95 %
Wilson interval, against the 1/3 a bot no better than its opponents would get; the coins; and the think
time of the house bot per turn of its own (the sum of its steps' times, CPU time of the thread and wall
clock), as p50, p99 and max.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rules  # noqa: E402
from rules.bots import BOTS, Budget, house_action  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
PLAYERS = 3


def play_game(game: int, opponent: str, budget: Budget) -> dict:
    """One game: the house bot in seat ``game % 3``, ``opponent`` in the others."""
    state = rules.new_game(PLAYERS, seed=game)
    house = game % PLAYERS
    rnds = [random.Random(f"{game}:{seat}") for seat in range(PLAYERS)]
    turns_cpu: list[float] = []
    turns_wall: list[float] = []
    mover_before = None
    while not state.over:
        seat = min(rules.awaiting(state))
        if seat == house:
            wall, cpu = time.perf_counter(), time.thread_time()
            action = house_action(state, seat, rnds[seat], budget)
            cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            if mover_before != (house, state.turn, state.phase == "defend"):  # a new turn of the house bot's
                turns_cpu.append(0.0)
                turns_wall.append(0.0)
                mover_before = (house, state.turn, state.phase == "defend")
            turns_cpu[-1] += cpu
            turns_wall[-1] += wall
        else:
            action = BOTS[opponent](state, seat, rnds[seat])
            mover_before = None
        state = rules.apply(state, action)
    standings = {row["player"]: row for row in rules.final_standings(state)}
    return {
        "game": game,
        "opponent": opponent,
        "house_seat": house,
        "coins": [state.players[s].coins for s in range(PLAYERS)],
        "place": standings[house]["place"],
        "shared": standings[house]["tie_break"],
        "budget": budget_json(budget),
        "turn_cpu_s": [round(t, 5) for t in turns_cpu],
        "turn_wall_s": [round(t, 5) for t in turns_wall],
    }


def budget_json(budget: Budget) -> dict:
    return {name: getattr(budget, name) for name in Budget.__slots__}


def results_path(opponent: str) -> Path:
    return RESULTS / f"house_{opponent}.jsonl"


def read(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def play(args: argparse.Namespace) -> None:
    budget = Budget(args.worlds, args.breadth, args.deep_worlds, args.shortlist)
    path = results_path(args.opponent)
    RESULTS.mkdir(exist_ok=True)
    done = {row["game"] for row in read(path) if row["budget"] == budget_json(budget)}
    started = time.perf_counter()
    with path.open("a") as out:
        for game in range(args.first, args.first + args.count):
            if game in done:
                continue
            row = play_game(game, args.opponent, budget)
            out.write(json.dumps(row, separators=(",", ":")) + "\n")
            out.flush()
            if args.minutes and time.perf_counter() - started > args.minutes * 60:
                print(f"stopped after game {game}: --minutes {args.minutes} reached")
                break
    print(f"{path.name}: {len(read(path))} games")


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion.

    >>> [round(x, 3) for x in wilson(100, 200)]
    [0.431, 0.569]
    """
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def report(args: argparse.Namespace) -> None:
    print(
        f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    for path in sorted(RESULTS.glob("house_*.jsonl")):
        groups: dict[str, list[dict]] = {}
        for row in read(path):
            groups.setdefault(json.dumps(row["budget"], sort_keys=True), []).append(row)
        for budget, rows in sorted(groups.items(), key=lambda item: -len(item[1])):
            describe(rows, budget)


def describe(rows: list[dict], budget: str) -> None:
    """One match (an opponent, a budget): win rate with its interval, coins, think time per turn."""
    n = len(rows)
    wins = sum(1 for r in rows if r["place"] == 1)
    shared = sum(1 for r in rows if r["place"] == 1 and r["shared"])
    low, high = wilson(wins, n)
    house = [r["coins"][r["house_seat"]] for r in rows]
    others = [c for r in rows for s, c in enumerate(r["coins"]) if s != r["house_seat"]]
    cpu = [t for r in rows for t in r["turn_cpu_s"]]
    wall = [t for r in rows for t in r["turn_wall_s"]]
    print(f"\n## house bot vs 2 x {rows[0]['opponent']}: {n} three-player games, budget {budget}")
    print(
        f"wins: {wins}/{n} = {wins / n:.1%} (95 % CI {low:.1%} to {high:.1%}; {shared} of them shared); "
        "an equal bot: 33.3 %"
    )
    print(f"coins: house {statistics.mean(house):.1f} on average, each opponent {statistics.mean(others):.1f}")
    for name, times in (("CPU", cpu), ("wall", wall)):
        print(
            f"think time per turn ({name}, {len(times)} turns): p50 {percentile(times, 0.5) * 1000:.0f} ms, "
            f"p99 {percentile(times, 0.99) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("play", help="play games and append them to bench/results/")
    p.add_argument("--opponent", choices=["random", "greedy"], required=True)
    p.add_argument("--first", type=int, default=0, help="first game (seed)")
    p.add_argument("--count", type=int, default=200, help="games from --first")
    p.add_argument("--minutes", type=float, default=0, help="stop after the game that passes this many minutes")
    default = Budget()
    p.add_argument("--worlds", type=int, default=default.worlds)
    p.add_argument("--breadth", type=int, default=default.breadth)
    p.add_argument("--deep-worlds", type=int, default=default.deep_worlds)
    p.add_argument("--shortlist", type=int, default=default.shortlist)
    commands.add_parser("report", help="win rates and think times of the games played")
    args = parser.parse_args()
    play(args) if args.command == "play" else report(args)


if __name__ == "__main__":
    main()
