"""schemathesis against ``/api/openapi.json``, in process (WSGI): no 500, and every answer as documented.

Each operation gets a fresh game, and every request carries the real token that operation needs (the seat on
turn for play, the host's admin token for /api/admin, an invitation for accepting, the host's confirmation
token of a game not yet confirmed for confirming), aimed at that game, so the fuzzing
reaches the domain operations instead of stopping at "no such game" or "bad token". Bodies are generated
both valid and invalid by the schema (schemathesis' positive and negative modes). The number of examples is
bounded so the whole run stays well under a minute.

Checks: no server error; the status code, content type, headers and body each as the document says; and
schema-invalid input refused with a 4xx. Not checked: "schema-valid input accepted", since the game's rules
refuse many well-formed moves (422) and a game moves on (409), by design.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.specs.openapi import checks as openapi_checks
from sqlmodel import Session, select

from service.domain.models import Game, OutboxMail
from service.infra.db import get_engine

from .conftest import create_game, new_game_body, read_outbox, seat_link, token_of

CHECKS = [
    schemathesis.checks.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_headers_conformance,
    openapi_checks.response_schema_conformance,
    openapi_checks.negative_data_rejection,
]

#: Examples per operation and generation mode: about 16 operations, a few milliseconds each on SQLite.
EXAMPLES = 40


class Target:
    """A started game in an app, and the tokens that reach it."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        client = app.test_client()
        created = create_game(client, new_game_body(3, start_when_all_accepted=False))
        assert created.status_code == 201
        self.game_id = created.get_json()["id"]
        self.admin = token_of(created.get_json()["admin_url"])
        # A game its host has not confirmed yet, for the confirmation (another host: one waits per host).
        waiting = client.post("/api/games", json=new_game_body(2) | {"host_email": f"host{self.game_id}@example.org"})
        assert waiting.status_code == 201, waiting.get_json()
        [mail] = read_outbox(app, "confirm_game")[-1:]
        self.confirm = token_of(mail.context["confirm_url"])
        with Session(get_engine(app)) as session:
            mails = session.exec(
                select(OutboxMail)
                .where(OutboxMail.game_id == self.game_id, OutboxMail.template == "invitation")
                .order_by(OutboxMail.id)  # type: ignore[arg-type]
            ).all()
        self.seats = {i: token_of(seat_link(app, m)) for i, m in enumerate(mails)}
        self.invites = {i: token_of(m.context["invite_url"]) for i, m in enumerate(mails)}

    def version(self) -> int:
        with Session(get_engine(self.app)) as session:
            game = session.get(Game, self.game_id)
            assert game is not None
            return game.version

    def token_for(self, path: str) -> str:
        if path.startswith("/api/admin/"):
            return self.admin
        if path == "/api/games/confirm":
            return self.confirm
        if path.startswith("/api/invitations/"):
            return self.invites[1]
        return self.seats[0]


def with_acceptable_players(case: Any) -> Any:
    if isinstance(case.body, dict) and isinstance(case.body.get("players"), list):
        for index, player in enumerate(case.body["players"]):
            if isinstance(player, dict):
                player.update(email=f"player{index}@example.org")
        if case.body.get("host_email") is not None:
            case.body["host_email"] = "player0@example.org"
    return case


def operations(app: Flask) -> list[Any]:
    return [result.ok() for result in schemathesis.openapi.from_wsgi("/api/openapi.json", app).get_all_operations()]


def fuzz(operation: Any, target: Target, mode: GenerationMode) -> None:
    """Run the bounded examples of one operation against one game."""
    strategy = operation.as_strategy(
        mode,
        path_parameters={"game_id": target.game_id} if "{game_id}" in operation.path else None,
        headers={"Authorization": f"Bearer {target.token_for(operation.path)}"},
    )
    if mode is GenerationMode.POSITIVE and operation.label == "POST /api/games":
        # The schema cannot say "an IANA time zone" or "distinct addresses", and random ones are almost never
        # valid: half the examples get valid ones, so the rest of the body reaches the domain.
        strategy = st.one_of(strategy, strategy.map(with_acceptable_players))

    @given(case=strategy)
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    def examples(case: Any) -> None:
        if (
            mode is GenerationMode.POSITIVE
            and isinstance(case.body, dict)
            and isinstance(case.body.get("version"), int)
        ):
            case.body["version"] = target.version()  # reach the rules, not only "the game moved on"
        case.call_and_validate(checks=CHECKS)

    examples()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_the_api_answers_every_generated_request_as_documented(api_app: Flask, mode: GenerationMode) -> None:
    tried = []
    for operation in operations(api_app):
        if mode is GenerationMode.NEGATIVE and not len(operation.body):
            continue  # its path and token are fixed: nothing left to make invalid
        fuzz(operation, Target(api_app), mode)  # a fresh game each time: another operation may have cancelled one
        tried.append(operation.label)
    assert len(tried) >= (15 if mode is GenerationMode.POSITIVE else 9), tried
