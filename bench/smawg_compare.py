"""Full random 5-player games per second: our rules engine next to smawg, in one process and one run.

    python bench/smawg_compare.py --smawg /tmp/smawg-src [--games N] [--repeats R] [--seed S]

The design target (ARCHITECTURE §8, rules: "a step (legal actions + apply), 5-player board, all races and
powers: <= 10 µs; >= 1.5x smawg in bench/smawg_compare.py (same games, same run)"; it was >= 10x the
throughput of the public Python engine smawg before) needs both engines measured side by side. Each
repeat plays ``--games`` full games with each engine, alternating which engine goes first, and the
table shows the median games/s of the repeats (wall clock, and from process CPU time, which a shared
machine disturbs less), the actions per game and the ratio.

Getting smawg
-------------
Its current public release, 0.23.0 (commit 093d91d), runs as it is: clone
https://github.com/Expurple/smawg, ``git checkout 093d91d`` and pass the clone's folder to ``--smawg``
(0.23 exports ``TurnStage`` and has a CONQUESTS stage, after which a player may not abandon a region; the
driver below plays both lines). The earlier measurement, kept for comparison:

smawg (https://github.com/Expurple/smawg, MIT) is not on PyPI, so ``--smawg`` points at a folder
that holds its ``smawg/`` package (never vendored into this repository). The version measured
(2026-11-21) is the 0.20/0.21 line (Game methods + rule plugins, pydantic 2), rebuilt file by file
from the repository:

    file (sha256 prefix)                                     from commit
    smawg/_common.py                      18c20150b24aa312   217878d32c6f30729e10e56cfe4c54e9eac08782
    smawg/basic_rules.py                  e7c34c3c81f688ee   0973c1a32a47bc45ab49336bf55010ae1fa06fd1
    smawg/default_rules.py                15c4732c9f705a59   0973c1a32a47bc45ab49336bf55010ae1fa06fd1
    smawg/assets/standard_5_players.json  9946953922989d68   35cae9a595df9b4ea6eb2d609d629ebf53cf4ad4
    smawg/__init__.py                     eb01a896b7e9a90a   the 0.17-0.18 ``Game`` (``shuffle_data``,
                                                             ``_reveal_next_combo``), which imports
                                                             exactly what _common.py above exports

The rules (basic_rules + default_rules) are those of 0.13-0.22; the Game methods' logic is the same
in the 0.17 to 0.23 versions (0.19 only moved ``shuffle_data`` to ``Assets.shuffle``), so a clone
checked out at 0973c1a3 should measure the same (not tried here: no network; the driver passes
``shuffle_data`` only to a Game that takes it). smawg needs only ``pydantic>=2`` (already a
dependency of this project) and Python >= 3.11.

What each side plays
--------------------
* Ours: ``rules.new_game(5, seed)`` on the ``5-players`` board, then ``rules.bots.random_player``
  until the game is over, every step through ``rules.apply`` (copy-on-write, full validation of the
  rules) -- ``play()`` of bench/rules_playout.py, imported, which also serialises the final state to
  JSON once per game (counted against us). All 14 races and 20 special powers are in the stacks, with
  their rules. ``random_player`` is ``rules.bots.sample_action``: before choosing, it gets every legal
  action but the conquests from the engine (``rules.engine.legal_choices``: picks, decline, abandons,
  end of the conquests, redeployment, race and power actions, Dragon and Sorcerer targets), and the
  regions a conquest could go to (the neighbours of the regions held, entry regions...); where it
  chooses uniformly among legal actions it draws those in a random order and checks each region drawn
  with the engine's own rules (``ConquestOffers.at``: refusal, cost, die or not) until one is legal --
  the same strategy as the smawg driver below, which shuffles candidate regions and tries them. It
  plays ``rules.bots.random_action``'s policy with the same probabilities (tests/rules/test_bots.py).
  ``apply`` skips the field check (``Action.check``) for the actions the engine made and checked itself
  when it offered them (``rules.actions.offer``); the rules are checked on every step as for any action.
* ours/apply (for information): the same games, recorded untimed, replayed through ``new_game`` and
  ``rules.apply`` alone -- the engine without the bot.
* smawg: ``Game(assets.shuffle(rng), shuffle_data=False)`` on its ``standard_5_players.json``
  (48 regions, 8 turns, 14 races, 20 abilities, 5 visible combos), then the random driver below
  until ``game.has_ended``. Its map is the same board as our ``5-players`` (same regions, terrain,
  symbols, Lost Tribes, border and 120 borders; checked). smawg implements the base rules only:
  pick a combo (coins on combos), conquer (3 + the defender's tokens, 1 for In Decline or a Lost
  Tribe, +1 on a Mountain: one more than the printed rules' 2), the reinforcement die, abandon,
  decline, redeploy, the redeployment pseudo-turn of attacked players, 1 coin per region held, no
  Seas/Lakes, first conquest at the border or on a border Sea's shore. The race and ability banners
  are data only: their token counts are used, none of their powers (no race or ability is
  implemented; no Fortresses, Encampments, Troll's Lairs, Dragon, Holes, Heroes, Ghouls, Diplomat,
  no bonus coins). So smawg does much less work per action.

The smawg driver (no legal-move enumeration exists in smawg)
-----------------------------------------------------------
smawg can only answer "is this action legal?" (the Game method raises ``RulesViolation``, or the
``game.rules.check_*`` dry runs). The driver mirrors the policy of ``rules.bots.random_action``
(``random_player`` plays the same policy):
decline 12% of the time when it may; otherwise conquer 85% of the time when a conquest is legal;
otherwise one of "end the conquests" and "abandon region r" uniformly; when redeploying, spread the
tokens in hand at random with one ``deploy`` per region that receives any, then ``end_turn``.
To find a random legal conquest, candidate regions are generated cheaply (the neighbours of the
player's regions, or the whole map for a first conquest), shuffled, and tried one by one through
``game.conquer`` -- the first that smawg accepts is applied (a uniform choice among the legal
ones), a region 1-3 tokens short is tried with the die (like our ``final_conquest``). Each refused
try costs one smawg rule check and one raised exception; those tries are counted ("tries/game")
but only accepted calls count as actions. Nothing is checked twice: the accepted try *is* the
move. This is as cheap as a driver of smawg's public API gets without re-implementing its rules.

Not the same game, so compare with care: same board and turn count, but our engine runs race and
power rules on every step, our bot also lists every legal action that is not a conquest before each
random choice (the smawg driver only generates candidate regions), our ``apply`` copies the state
(smawg mutates one ``Game`` in place), and our actions are coarser (one ``redeploy`` sets the whole
distribution; smawg needs ``start_redeployment`` + one ``deploy`` per region). Both sides include game
setup (shuffling the stacks) in their time.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from rules_playout import play as play_ours  # noqa: E402  (bench/rules_playout.py; puts the repo on sys.path)

import rules  # noqa: E402
from rules.bots import random_player  # noqa: E402

PLAYERS = 5
SMAWG_ASSETS = "standard_5_players.json"
SMAWG_COMMITS = "smawg 0.20/0.21 line: _common.py@217878d, basic_rules.py+default_rules.py@0973c1a"
DIE = (0, 0, 0, 1, 2, 3)


def has_metadata() -> bool:
    """Whether the smawg imported has ``_metadata`` (0.22 on: its version, read from its setup.cfg)."""
    return importlib.util.find_spec("smawg._metadata") is not None


def load_smawg(folder: str | None) -> tuple[ModuleType, Any]:
    """Import smawg from ``folder`` (which holds ``smawg/``) and load its standard 5-player assets."""
    if not folder:
        sys.exit(
            "smawg_compare: --smawg FOLDER is required: a folder holding smawg's 'smawg/' package "
            "(https://github.com/Expurple/smawg, not on PyPI; see this script's docstring to rebuild it)"
        )
    root = Path(folder).expanduser().resolve()
    package = root / "smawg" / "__init__.py"
    assets_file = root / "smawg" / "assets" / SMAWG_ASSETS
    if not package.is_file() or not assets_file.is_file():
        sys.exit(
            f"smawg_compare: {root} does not hold smawg: expected {package} and {assets_file} "
            "(point --smawg at the folder that contains the 'smawg' package, not at the package)"
        )
    sys.path.insert(0, str(root))
    try:
        smawg = importlib.import_module("smawg")
    except ImportError as e:
        sys.exit(f"smawg_compare: cannot import smawg from {root}: {e} (it needs pydantic>=2, Python>=3.11)")
    if Path(smawg.__file__).resolve() != package:
        sys.exit(f"smawg_compare: 'import smawg' found {smawg.__file__}, not {package}")
    missing = [n for n in ("Game", "Assets", "RulesViolation") if not hasattr(smawg, n)]
    if missing or not hasattr(smawg.Assets, "shuffle"):
        sys.exit(
            f"smawg_compare: {package} is not a smawg version this script drives "
            f"(missing {missing or 'Assets.shuffle'})"
        )
    from pydantic import TypeAdapter

    assets = TypeAdapter(smawg.Assets).validate_python(json.loads(assets_file.read_text()))
    return smawg, assets


class SmawgDriver:
    """Plays full random games of smawg through its public ``Game`` methods (see the module docstring)."""

    def __init__(self, smawg: ModuleType, assets: Any) -> None:
        self.smawg = smawg
        self.assets = assets
        self.violation = smawg.RulesViolation
        # 0.23 exports ``TurnStage`` (and adds its CONQUESTS stage: no abandoning once conquests began);
        # the 0.20/0.21 line kept it private in ``smawg._common``.
        stage = getattr(smawg, "TurnStage", None) or importlib.import_module("smawg._common")._TurnStage
        self.SELECT, self.CAN_DECLINE, self.DECLINED = stage.SELECT_COMBO, stage.CAN_DECLINE, stage.DECLINED
        self.ACTIVE, self.USED_DICE = stage.ACTIVE, stage.USED_DICE
        self.REDEPLOY, self.REDEPLOY_TURN = stage.REDEPLOYMENT, stage.REDEPLOYMENT_TURN
        self.adjacent = assets.map.adjacent
        self.all_regions = range(len(assets.map.tiles))
        self.not_enough = importlib.import_module("smawg.basic_rules").NotEnoughTokensToConquer
        takes_shuffle = "shuffle_data" in inspect.signature(smawg.Game.__init__).parameters
        self.no_shuffle = {"shuffle_data": False} if takes_shuffle else {}  # 0.19+ never shuffles

    def play(self, seed: int) -> dict[str, int]:
        rnd = random.Random(seed)
        game = self.smawg.Game(self.assets.shuffle(rnd), dice_roll_func=lambda: rnd.choice(DIE), **self.no_shuffle)
        self.game, self.rnd = game, rnd
        self.actions = self.tries = self.conquests = 0
        while not game.has_ended:
            self.step()
        return {
            "actions": self.actions,
            "tries": self.tries,
            "conquests": self.conquests,
            "turn": game.current_turn,
            "held": sum(len(p.active_regions) + len(p.decline_regions) for p in game.players),
            "coins": sum(p.coins for p in game.players),
        }

    def do(self, method: Any, *args: Any, **kwargs: Any) -> bool:
        self.tries += 1
        try:
            method(*args, **kwargs)
        except self.violation:
            return False
        self.actions += 1
        return True

    def step(self) -> None:
        game, rnd = self.game, self.rnd
        stage = game._turn_stage
        if stage is self.SELECT:
            order = list(range(len(game.combos)))
            rnd.shuffle(order)
            for i in order:
                if self.do(game.select_combo, i):
                    return
            raise RuntimeError("no combo can be picked")
        if stage is self.DECLINED:
            self.must(game.end_turn)
            return
        if stage is self.REDEPLOY or stage is self.REDEPLOY_TURN:
            self.spread()
            self.must(game.end_turn)
            return
        player = game.player
        if stage is self.CAN_DECLINE and rnd.random() < 0.12:
            self.must(game.decline)
            return
        if stage is not self.USED_DICE and rnd.random() < 0.85 and self.conquer():
            return
        others: list[int | None] = [None]  # None: end the conquests
        if stage is self.CAN_DECLINE or stage is self.ACTIVE:
            others += list(player.active_regions)
        choice = rnd.choice(others)
        if choice is not None:
            self.must(game.abandon, choice)
        elif player.active_regions:
            self.must(game.start_redeployment)
        else:  # no region: end the turn; with tokens in hand, conquer or else decline
            done = self.do(game.end_turn) or (stage is not self.USED_DICE and self.conquer())
            if not done and not self.do(game.decline):
                raise RuntimeError(f"stuck at stage {stage} with {player.tokens_on_hand} tokens")

    def must(self, method: Any, *args: Any) -> None:
        if not self.do(method, *args):
            raise RuntimeError(f"smawg refused {method.__name__}{args}")

    def conquer(self) -> bool:
        """Apply a random legal conquest (with the die when 1-3 tokens short); False if none is legal."""
        game = self.game
        own = game.player.active_regions
        if own:
            candidates = set().union(*(self.adjacent[r] for r in own)).difference(own)
            candidates = list(candidates)
        else:
            candidates = list(self.all_regions)
        self.rnd.shuffle(candidates)
        for region in candidates:
            self.tries += 1
            try:
                game.conquer(region)
            except self.not_enough as e:
                if e.tokens_required - e.tokens_on_hand <= 3 and self.do(game.conquer, region, use_dice=True):
                    self.conquests += 1
                    return True
                continue
            except self.violation:
                continue
            self.actions += 1
            self.conquests += 1
            return True
        return False

    def spread(self) -> None:
        """Deploy every token in hand at random over the player's regions, one ``deploy`` per region."""
        game, player = self.game, self.game.player
        regions = list(player.active_regions)
        if not regions or not player.tokens_on_hand:
            return
        extra = dict.fromkeys(regions, 0)
        for _ in range(player.tokens_on_hand):
            extra[self.rnd.choice(regions)] += 1
        for region, n in extra.items():
            if n:
                self.must(game.deploy, n, region)


def run_ours(games: int, base: int) -> tuple[float, float, list[int]]:
    steps = []
    started, cpu = time.perf_counter(), time.process_time()
    for g in range(games):
        steps.append(play_ours(PLAYERS, seed=base + g)[0])
    return time.perf_counter() - started, time.process_time() - cpu, steps


def record_ours(games: int, base: int) -> list[tuple[int, list[rules.Action]]]:
    """The action logs of the same random games ``run_ours`` plays (untimed), for ``run_replay``."""
    logs = []
    for g in range(games):
        rnd, state, log = random.Random(base + g), rules.new_game(PLAYERS, seed=base + g), []
        while not state.over:
            log.append(random_player(state, rnd))
            state = rules.apply(state, log[-1])
        logs.append((base + g, log))
    return logs


def run_replay(logs: list[tuple[int, list[rules.Action]]]) -> tuple[float, float, list[int]]:
    """Replay recorded games through ``rules.apply`` alone: the engine without the bot's enumeration."""
    started, cpu = time.perf_counter(), time.process_time()
    for seed, log in logs:
        state = rules.new_game(PLAYERS, seed=seed)
        for action in log:
            state = rules.apply(state, action)
        if not state.over:
            raise SystemExit(f"smawg_compare: replay of game {seed} did not end")
    return time.perf_counter() - started, time.process_time() - cpu, [len(log) for _, log in logs]


def run_smawg(driver: SmawgDriver, games: int, base: int) -> tuple[float, float, list[dict[str, int]]]:
    stats = []
    started, cpu = time.perf_counter(), time.process_time()
    for g in range(games):
        stats.append(driver.play(seed=base + g))
    return time.perf_counter() - started, time.process_time() - cpu, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smawg", help="folder holding smawg's 'smawg/' package (required)")
    parser.add_argument("--games", type=int, default=30, help="games per engine and repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats, alternating which engine runs first")
    parser.add_argument("--seed", type=int, default=0, help="first seed (game g of repeat r: seed + r*100000 + g)")
    args = parser.parse_args()
    smawg, assets = load_smawg(args.smawg)
    driver = SmawgDriver(smawg, assets)
    driver.play(seed=-1)  # warm-up (imports, pydantic schema caches)
    play_ours(PLAYERS, seed=-1)

    rates: dict[str, list[float]] = {"smawg": [], "ours": [], "ours/apply": []}
    cpu_rates: dict[str, list[float]] = {"smawg": [], "ours": [], "ours/apply": []}
    ours_steps: list[int] = []
    smawg_stats: list[dict[str, int]] = []
    load_before = os.getloadavg()
    cpu0 = time.process_time()
    for r in range(args.repeats):
        base = args.seed + r * 100_000
        logs = record_ours(args.games, base)
        order = ("smawg", "ours", "ours/apply") if r % 2 == 0 else ("ours/apply", "ours", "smawg")
        for engine in order:
            if engine == "ours/apply":
                seconds, cpu_seconds, _ = run_replay(logs)
            elif engine == "ours":
                seconds, cpu_seconds, steps = run_ours(args.games, base)
                ours_steps += steps
            else:
                seconds, cpu_seconds, stats = run_smawg(driver, args.games, base)
                smawg_stats += stats
            rates[engine].append(args.games / seconds)
            cpu_rates[engine].append(args.games / cpu_seconds)
    cpu = time.process_time() - cpu0  # the untimed recording of the replayed games included

    bad = [s for s in smawg_stats if s["turn"] != assets.n_turns + 1 or not s["conquests"]]
    if bad:
        raise SystemExit(f"smawg_compare: {len(bad)} smawg games did not play out: {bad[:3]}")
    med = {e: statistics.median(rates[e]) for e in rates}
    cpu_med = {e: statistics.median(cpu_rates[e]) for e in cpu_rates}
    actions = {"ours": statistics.mean(ours_steps), "smawg": statistics.mean(s["actions"] for s in smawg_stats)}
    actions["ours/apply"] = actions["ours"]
    load = os.getloadavg()
    print(
        f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs; load average {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} "
        f"before, {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} after"
    )
    print(
        f"# python bench/smawg_compare.py --smawg {args.smawg} --games {args.games} "
        f"--repeats {args.repeats} --seed {args.seed}   ({cpu:.0f} s CPU)"
    )
    version = getattr(importlib.import_module("smawg._metadata"), "VERSION", None) if has_metadata() else None
    label = f"smawg {version}" if version else SMAWG_COMMITS
    print(f"# smawg: {label}; {SMAWG_ASSETS}; base rules only (no race/ability powers)")
    print("# ours: rules.new_game(5) on board '5-players', rules.bots.random_player; 14 races, 20 powers")
    print("# ours/apply: the same games (recorded untimed) replayed through rules.apply only, no bot")
    print("# games/s: median of the repeats (wall clock); games/CPU-s: the same from process time")
    print(
        f"{'engine':<10} {'games/s':>8} {'games/CPU-s':>11} {'runs (games/s)':<36} {'actions/game':>12} "
        f"{'µs/action':>9} {'ratio':>6} {'CPU ratio':>9}"
    )
    for name in ("smawg", "ours", "ours/apply"):
        runs = " ".join(f"{x:.1f}" for x in rates[name])
        print(
            f"{name:<10} {med[name]:>8.1f} {cpu_med[name]:>11.1f} {runs:<36} {actions[name]:>12.1f} "
            f"{1e6 / (cpu_med[name] * actions[name]):>9.1f} {med[name] / med['smawg']:>5.2f}x "
            f"{cpu_med[name] / cpu_med['smawg']:>8.2f}x"
        )
    n = len(smawg_stats)
    print(
        f"# smawg per game: {sum(s['tries'] for s in smawg_stats) / n:.1f} tries (refused ones included), "
        f"{sum(s['conquests'] for s in smawg_stats) / n:.1f} conquests, "
        f"{sum(s['held'] for s in smawg_stats) / n:.1f} regions held at the end, "
        f"{sum(s['coins'] for s in smawg_stats) / n:.1f} coins in all; every game reached turn "
        f"{assets.n_turns} and ended"
    )
    print(
        f"# ratio ours/smawg: {med['ours'] / med['smawg']:.2f}x (wall), "
        f"{cpu_med['ours'] / cpu_med['smawg']:.2f}x (CPU); design target >= 1.5x and <= 10 µs per step"
    )


if __name__ == "__main__":
    main()
