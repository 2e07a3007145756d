"""``service/domain/previews.py``: the engine's previews and explanations of a stored game, as a seat may see
them; a proposed redeployment's board, checked by the rules."""

from __future__ import annotations

import pytest
from sqlmodel import Session

import rules
from service.domain import play, previews
from service.domain.errors import BadRequest, IllegalMove
from service.domain.links import LinkMaker
from tests.domain.test_play import started_game


def redeploying(session: Session, links: LinkMaker):
    """Seat 0 picked, conquered one region, ended the conquests: the game awaits its redeployment."""
    game = started_game(session)
    play.submit_action(session, game.id, 0, {"type": "pick", "combo": 0}, 1, links)
    state = rules.read_state(game.state)
    conquest = next(a for a in rules.legal_actions(state, 0) if a.type == "conquer")
    play.submit_action(session, game.id, 0, conquest.to_json(), 2, links)
    play.submit_action(session, game.id, 0, {"type": "end_conquest"}, 3, links)
    return game, conquest.region


def test_the_board_after_a_proposed_redeployment_is_the_one_the_step_then_makes(
    db_session: Session, links: LinkMaker
) -> None:
    game, region = redeploying(db_session, links)
    state = rules.read_state(game.state)
    (choice,) = [a for a in rules.legal_actions(state, 0) if a.type == "redeploy"]
    assert choice.regions == (region,)
    proposed = {"type": "redeploy", "tokens": {str(region): choice.count}}
    board = previews.board_after(game, 0, proposed)
    assert board["regions"][region]["tokens"] == choice.count
    assert [p["coins"] for p in board["players"]][1] is None  # another seat's coins stay hidden
    assert "rng" not in board
    assert game.version == 4  # nothing was applied
    done = play.submit_action(db_session, game.id, 0, proposed, 4, links)
    assert rules.player_view(rules.read_state(done.game.state), 0)["regions"] == board["regions"]


def test_a_redeployment_the_rules_refuse_is_refused_with_their_words(db_session: Session, links: LinkMaker) -> None:
    game, region = redeploying(db_session, links)
    with pytest.raises(IllegalMove, match="must place exactly"):
        previews.board_after(game, 0, {"type": "redeploy", "tokens": {str(region): 1}})
    with pytest.raises(BadRequest, match="'action'"):
        previews.board_after(game, 0, {"type": "redeploy", "tokens": {str(region): -1}})
    with pytest.raises(BadRequest, match="your own seat"):
        previews.board_after(game, 0, {"type": "redeploy", "player": 1, "tokens": {}})


def test_legal_actions_carry_their_previews_in_order(db_session: Session, links: LinkMaker) -> None:
    game = started_game(db_session)
    listed = previews.legal_actions(game, 0)
    state = rules.read_state(game.state)
    assert listed.actions == [a.to_json() for a in rules.legal_actions(state, 0)]
    assert listed.previews == [rules.preview(state, a).to_json() for a in rules.legal_actions(state, 0)]
    assert previews.legal_actions(game, 0, with_previews=False).previews == []
    told = previews.explain_action(game, 0, {"type": "end_turn"})
    assert told.offered is False and told.reason and told.preview is None
