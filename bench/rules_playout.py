"""Full random games per second, per board, through the public rules API.

    python bench/rules_playout.py [--games N] [--repeats R]

Every game is played to the end by ``rules.bots.random_player`` with all races and powers in the stacks;
each step goes through ``rules.apply`` (copy-on-write, validation); the bot (``rules.bots.sample_action``)
gets the legal actions from the engine, the conquests region by region as it draws them. Prints a
table: games/s (wall clock, and from process CPU time, which other work on a shared machine disturbs less),
steps per game, microseconds (of CPU) per step, snapshot size at the end, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rules  # noqa: E402
from rules.bots import random_player  # noqa: E402


def play(players: int, seed: int) -> tuple[int, int]:
    rnd = random.Random(seed)
    state = rules.new_game(players, seed=seed)
    steps = 0
    while not state.over:
        state = rules.apply(state, random_player(state, rnd))
        steps += 1
    return steps, len(json.dumps(state.to_json(), separators=(",", ":")))


def bench(players: int, games: int, repeats: int) -> dict[str, float]:
    rates, cpu_rates, steps_all, sizes = [], [], [], []
    for r in range(repeats):
        started, cpu = time.perf_counter(), time.process_time()
        for g in range(games):
            steps, size = play(players, seed=r * 100_000 + g)
            steps_all.append(steps)
            sizes.append(size)
        rates.append(games / (time.perf_counter() - started))
        cpu_rates.append(games / (time.process_time() - cpu))
    rate, cpu_rate = statistics.median(rates), statistics.median(cpu_rates)
    mean_steps = statistics.mean(steps_all)
    return {
        "games_per_s": rate,
        "games_per_cpu_s": cpu_rate,
        "steps": mean_steps,
        "us_per_step": 1e6 / (cpu_rate * mean_steps),
        "snapshot_bytes_max": max(sizes),
    }


def preamble(command: str) -> None:
    """The first lines of a benchmark's output: the interpreter, the command and the load average."""
    print(f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}")
    print(f"# {command}")
    load = os.getloadavg()
    print(f"# load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per run and board")
    parser.add_argument("--repeats", type=int, default=3, help="runs per board (the median is shown)")
    args = parser.parse_args()
    preamble(f"python bench/rules_playout.py --games {args.games} --repeats {args.repeats}")
    print(f"{'board':<10} {'games/s':>9} {'games/CPU-s':>12} {'steps/game':>11} {'µs/step':>8} {'max JSON bytes':>15}")
    for players in (2, 3, 4, 5):
        row = bench(players, args.games, args.repeats)
        print(
            f"{players}-players {row['games_per_s']:>9.1f} {row['games_per_cpu_s']:>12.1f} {row['steps']:>11.1f} "
            f"{row['us_per_step']:>8.1f} {row['snapshot_bytes_max']:>15}"
        )
    load = os.getloadavg()
    print(f"# load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
