"""How long ``rules.legal_actions`` takes, position by position, over random 5-player games.

    python bench/legal_actions.py [--games N] [--repeats R] [--players P]

The games are played by ``rules.bots.random_player`` (all races and powers in the stacks) and recorded
untimed; then, ``--repeats`` times, ``rules.legal_actions(state, seat)`` is timed at every position of
every game for the seat the game awaits, the whole list made as the service makes it for a player's
page (conquests included: every region is checked, unlike the bot's sampling). Each call is timed in
CPU time of the thread (``time.thread_time_ns``: what other work on a shared machine disturbs least)
and in wall-clock time. Printed: the percentiles of the calls over all positions (p50, p90, p99, max;
the median of the repeats), by phase too, with ``rules.apply`` of the recorded step at the same
positions in the same run beside them for reference, and the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rules_playout import preamble  # noqa: E402  (bench/rules_playout.py; puts the repo on sys.path)

import rules  # noqa: E402
from rules.bots import random_player  # noqa: E402
from rules.engine import awaited  # noqa: E402
from rules.state import GameState  # noqa: E402

PERCENTILES = (50, 90, 99)


def record(players: int, games: int) -> list[tuple[GameState, int, rules.Action]]:
    """Every position of ``games`` random games: (state, the seat awaited, the action played there)."""
    positions = []
    for g in range(games):
        rnd = random.Random(g)
        state = rules.new_game(players, seed=g)
        while not state.over:
            seat = awaited(state)
            assert seat is not None
            action = random_player(state, rnd)
            positions.append((state, seat, action))
            state = rules.apply(state, action)
    return positions


def timed(positions: list[tuple[GameState, int, rules.Action]]) -> dict[str, dict[str, list[int]]]:
    """CPU and wall nanoseconds of legal_actions and of apply at each position, by phase ("all" too)."""
    cpu, wall = time.thread_time_ns, time.perf_counter_ns
    out: dict[str, dict[str, list[int]]] = {}
    legal, apply = rules.legal_actions, rules.apply
    for state, seat, action in positions:
        c0, w0 = cpu(), wall()
        legal(state, seat)
        c1, w1 = cpu(), wall()
        apply(state, action)
        c2 = cpu()
        for key in ("all", str(state.phase)):
            row = out.setdefault(key, {"legal_cpu": [], "legal_wall": [], "apply_cpu": []})
            row["legal_cpu"].append(c1 - c0)
            row["legal_wall"].append(w1 - w0)
            row["apply_cpu"].append(c2 - c1)
    return out


def percentiles(values: list[int]) -> list[float]:
    """p50, p90, p99 and the max, in µs."""
    ordered = sorted(values)
    n = len(ordered)
    picks = [ordered[min(n - 1, (n * p) // 100)] for p in PERCENTILES] + [ordered[-1]]
    return [v / 1000 for v in picks]


def medians(rows: list[list[float]]) -> list[float]:
    """Column by column, the median of the repeats' percentiles."""
    return [statistics.median(col) for col in zip(*rows, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50, help="random games recorded")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes over every position (median shown)")
    parser.add_argument("--players", type=int, default=5, help="board (player count)")
    args = parser.parse_args()
    preamble(f"python bench/legal_actions.py --games {args.games} --repeats {args.repeats} --players {args.players}")
    positions = record(args.players, args.games)
    runs = [timed(positions) for _ in range(args.repeats)]
    print(f"# {len(positions)} positions of {args.games} games; µs per call, the median of {args.repeats} passes")
    header = f"{'phase':<9} {'calls':>6} | {'legal_actions CPU p50/p90/p99/max':>36} | {'wall p99':>8}"
    print(header + f" | {'apply CPU p50/p99':>18}")
    for phase in ["all", *sorted(k for k in runs[0] if k != "all")]:
        legal = medians([percentiles(r[phase]["legal_cpu"]) for r in runs])
        wall = statistics.median(percentiles(r[phase]["legal_wall"])[2] for r in runs)
        applied = medians([percentiles(r[phase]["apply_cpu"]) for r in runs])
        calls = len(runs[0][phase]["legal_cpu"])
        cells = " / ".join(f"{v:.1f}" for v in legal)
        print(f"{phase:<9} {calls:>6} | {cells:>36} | {wall:>8.1f} | {applied[0]:>8.1f} / {applied[2]:.1f}")
    load = os.getloadavg()
    print(f"# load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
