"""What telling the game in words costs: "Since your last turn" and the history, next to the bare replay.

    .venv/bin/python bench/story.py [--players 5] [--games 5] [--seed 0]

Each random game (``rules.bots.random_player``, a few auto-passes) is logged as the service logs it
(``GameAction`` rows, not stored); then, at every new turn of the game, as when a "your turn" mail is queued:

- the reference: the bare replay of the log from the seed (``service.domain.play.replay_steps``), which the
  game and history pages did already;
- the story: the same replay grouped into turns (``service.domain.story.turns_of``) and the awaited
  seat's "Since your last turn" told (``story.since_words``), which every turn mail and turn page now do;
- the whole history told for one reader (every turn's sentence), as the history page does.

Prints the time per call and the ratio to the reference in the same run (DESIGN §8: ratios, not absolute
times, on a shared machine).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import rules
from rules.bots import random_player
from service.domain import play, story
from service.domain.models import ActionKind, Game, GameAction
from service.domain.schemas import GameSettings


def logged_game(players: int, seed: int) -> tuple[Game, list[GameAction], list[int]]:
    """A random game as its log, and the log's length at the start of each turn mail (a new seat on turn)."""
    rnd = random.Random(seed)
    seed_text = f"bench-story-{seed}"
    state = rules.new_game(players, seed=seed_text)
    game = Game(name="bench", seed=seed_text, state=state.to_json(), settings=GameSettings().model_dump())
    log: list[GameAction] = []
    mails: list[int] = []
    on_turn = (state.turn, state.current)
    while not state.over:
        seat = min(rules.awaiting(state))
        if rnd.random() < 0.02:
            state = rules.auto_pass(state, seat)
            log.append(GameAction(game_id=1, seat=seat, kind=ActionKind.AUTO_PASS, action={"reason": "deadline"}))
        else:
            action = random_player(state, rnd)
            state = rules.apply(state, action)
            log.append(GameAction(game_id=1, seat=seat, kind=ActionKind.ACTION, action=action.to_json()))
        log[-1].version = len(log) + 1
        if (state.turn, state.current) != on_turn and not state.over:
            on_turn = (state.turn, state.current)
            mails.append(len(log))
    return game, log, mails


def timed(call: object, repeat: int = 3) -> float:
    best = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        best.append(time.perf_counter() - start)
    return min(best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    names = [f"Player {n}" for n in range(args.players)]
    bare, since, history, steps = [], [], [], []
    for g in range(args.games):
        game, log, mails = logged_game(args.players, args.seed + g)
        steps.append(len(log))
        for upto in mails:
            entries = log[:upto]
            seat = ((entries[-1].seat or 0) + 1) % args.players  # the next seat: the cost is the replay's
            bare.append(timed(lambda g=game, e=entries: list(play.replay_steps(g, e))))

            def told(g: Game = game, e: list[GameAction] = entries, s: int = seat) -> list[str]:
                return story.since_words(story.turns_of(e, play.replay_steps(g, e)), names, s)

            since.append(timed(told))
        whole = story.turns_of(log, play.replay_steps(game, log))
        history.append(timed(lambda t=whole: [story.tell(turn, names, 0) for turn in t]))
    ref, mine = statistics.median(bare), statistics.median(since)
    print(f"games: {args.games} of {args.players} players, {statistics.median(steps):.0f} steps each (median)")
    print(f"turn mails told: {len(since)} (load average {os.getloadavg()[0]:.1f})")
    print(f"bare replay of the log, median per turn mail:          {ref * 1e3:7.2f} ms")
    print(f"replay + turns + 'Since your last turn', median:       {mine * 1e3:7.2f} ms", end="")
    print(f"  ({mine / ref:.2f}x the replay)")
    print(f"telling a whole game's turns for the history, median: {statistics.median(history) * 1e3:7.2f} ms")
    print(f"command: .venv/bin/python bench/story.py --players {args.players} --games {args.games} --seed {args.seed}")


if __name__ == "__main__":
    main()
