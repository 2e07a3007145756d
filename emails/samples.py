"""Fixed examples of every message, for previews (``python -m emails.preview``) and the snapshot tests.

Each sample is a typed message as the service writes it into the outbox (``emails.messages``), with the
reader's time zone and the moment the mail is written. Changing a sample changes the snapshots in
``tests/emails/golden/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .messages import (
    AdminChange,
    AdminLink,
    AdminLogin,
    AutoPassed,
    Board,
    BoardRegion,
    BounceAlert,
    DailyDigest,
    GameOver,
    GameToConfirm,
    HostAlert,
    Invitation,
    InvitationAnswer,
    Message,
    NotRead,
    OperatorForward,
    OrdersAnswer,
    RedeployNeeded,
    Reminder,
    SeatToBot,
    SignInLink,
    TableTalk,
    YourLinks,
    YourTurn,
)
from .render import Rendered

NOW = datetime(2026, 3, 1, 11, 30, tzinfo=UTC)
DEADLINE = datetime(2026, 3, 3, 13, 0, tzinfo=UTC)
BASE = "https://smallworld.example"
TURN_URL = f"{BASE}/play/eyJnIjoxNywicyI6MSwiayI6InNlY3JldCJ9.ZZ8aQw.sample-turn-signature"
GAME_URL = TURN_URL
UNSUBSCRIBE_URL = f"{BASE}/unsubscribe/eyJwIjo0LCJ3Ijoibm90aWNlcyJ9.ZZ8aQw.sample-unsubscribe"
BLOCK_URL = f"{BASE}/never/eyJlIjoiYm9iQGV4YW1wbGUub3JnIn0.ZZ8aQw.sample-block-signature"
UNSUBSCRIBE_MESSAGES_URL = f"{BASE}/unsubscribe/eyJwIjo0LCJ3IjoibWVzc2FnZXMifQ.ZZ8aQw.sample-unsubscribe"
UNSUBSCRIBE_REMINDERS_URL = f"{BASE}/unsubscribe/eyJwIjo0LCJ3IjoicmVtaW5kZXJzIn0.ZZ8aQw.sample-unsubscribe"
#: The reader's page of mail choices.
CHOICES_URL = f"{BASE}/choices/eyJwIjo0fQ.ZZ8aQw.sample-choices-signature"
#: The reader's calendar feed (every deadline of their games), offered by the turn mails and reminders.
CALENDAR_URL = f"{BASE}/calendar/eyJwIjo0fQ.ZZ8aQw.sample-calendar.ics"
#: Each region Bob may conquer at the start of his turn 4 (``rules.orders.conquests``).
CONQUESTS = [
    "Farmland 2: 3 tokens (2 base + 1 tokens); held by Ann's Orcs (1 token)",
    "Hill 5: 5 tokens (2 base + 2 tokens + 1 Mountain); held by Ann's Orcs (2 tokens)",
    "Forest 9: 4 tokens (2 base + 2 tokens), with the die; held by the Lost Tribe (2 tokens)",
    "Swamp 11: 2 tokens (2 base); empty",
]
#: The site's guide (how a game goes, and how to play it by mail).
GUIDE_URL = f"{BASE}/how-to-play"
#: The reader's signed reply address for the step (orders by mail, ARCHITECTURE §10).
REPLY_ADDRESS = "play+17-1-4-1-x-0f3a9c6d21b58e4a7c20@smallworld.example"
#: What Bob may do at the start of his turn 4, as orders (``rules.orders.describe``).
ORDERS = [
    "decline  -  put your Active race In Decline (your turn ends after scoring)",
    "conquer R [R ...]  -  regions you may conquer now: 2, 5, 9 (with the die), 11",
    "abandon R  -  give up one of your regions first: 13, 14",
    "end  -  end your turn (tokens still in hand go to your regions with the fewest)",
]


def _region(
    terrain: str, owner: int | None = None, race: str | None = None, tokens: int = 0, **extra: Any
) -> BoardRegion:
    region: dict[str, Any] = {"terrain": terrain}
    if race:
        region.update(race=race, tokens=tokens)
    if owner is not None:
        region.update(owner=owner, declined=extra.pop("declined", False))
    region.update(extra)
    return region  # type: ignore[return-value]  # the keys of a BoardRegion, as the arguments say


#: A 2-player board at game turn 4: Ann holds the north with Orcs, Bob the south with Giants and his
#: In Decline Ratmen; Lost Tribes remain in the middle.
BOARD: Board = {
    "players": [
        {"name": "Ann", "active": "Seafaring Orcs", "declined": []},
        {"name": "Bob", "active": "Wealthy Giants", "declined": ["Ratmen"]},
    ],
    "regions": [
        _region("sea"),
        _region("farmland", 0, "Orcs", 3),
        _region("forest", 0, "Orcs", 2),
        _region("swamp", 0, "Orcs", 4, marks=["fortress"]),
        _region("hill"),
        _region("mountain", 0, "Orcs", 3),
        _region("hill", None, "Lost Tribe", 1),
        _region("lake"),
        _region("mountain"),
        _region("farmland", 1, "Ratmen", 1, declined=True),
        _region("forest", None, "Lost Tribe", 1),
        _region("farmland", 1, "Ratmen", 1, declined=True),
        _region("forest"),
        _region("farmland", None, "Lost Tribe", 1),
        _region("hill", 1, "Giants", 2),
        _region("mountain", 1, "Giants", 3),
        _region("swamp", 1, "Giants", 2, marks=["lair"]),
        _region("hill"),
        _region("swamp", None, "Lost Tribe", 1),
        _region("mountain"),
        _region("swamp", 1, "Giants", 2),
        _region("forest", 1, "Giants", 4),
        _region("sea"),
    ],
    "you": 1,
    "turn": 4,
    "turns": 10,
}


@dataclass(frozen=True)
class Sample:
    mail: Message
    time_zone: str = "Europe/Paris"
    now: datetime = NOW
    #: The reader's seat link, which delivery mints when the mail is sent.
    game_url: str | None = None
    unsubscribe_url: str | None = None
    calendar_url: str | None = None
    #: The mail's signed reply address (orders by mail), for the messages that ask for orders.
    reply_address: str | None = None
    #: The reader's page of mail choices: the footer of every kind but those to an address as such links it.
    choices_url: str | None = None

    def __post_init__(self) -> None:
        if self.choices_url is None:
            object.__setattr__(self, "choices_url", CHOICES_URL)

    @property
    def message(self) -> str:
        """The template's name."""
        return self.mail.template

    def render(self, **changes: Any) -> Rendered:
        """The mail as delivery renders it for the sample's reader, with its links; ``changes``: other fields."""
        mail = type(self.mail)(**{**self.context, **changes}) if changes else self.mail
        return mail.render(
            now=self.now,
            time_zone=self.time_zone,
            game_url=self.game_url,
            unsubscribe_url=self.unsubscribe_url,
            calendar_url=self.calendar_url,
            reply_address=self.reply_address,
            choices_url=self.choices_url,
        )

    @property
    def context(self) -> dict[str, Any]:
        """The message as the outbox row stores it."""
        return self.mail.context()


#: The sample game, and the reader's seat in it (Bob's) unless a sample says otherwise.
GAME = {"game_id": 17, "game_name": "Tuesday Night Conquest"}
_COMMON = {**GAME, "player_name": "Bob"}
ADMIN_URL = f"{BASE}/admin/eyJnIjoxN30.ZZ8aQw.sample-admin-signature"
SEED = "9f2c4e1a7b3d5c6e8f0a1b2c3d4e5f60"
#: An answer to Bob's orders by mail: the board as it stands, his coins (his own only); and, while his turn goes on,
#: the step he is awaited for (his reply address) in game turn 4.
_ANSWER = {**_COMMON, "seat": 1, "coins": 12, "board": BOARD, "turns": 10}
_AWAITED = {"step_key": "4:1:-", "turn": 4}
#: Bob's seat in game turn 4 of 10, as the mails of his turn name it.
_IN_TURN = {**_COMMON, "seat": 1, "turn": 4, "turns": 10}
#: A mail that asks Bob for a step shows him the board.
_ASKED = {**_IN_TURN, "board": BOARD}
#: A notice's reader: their seat's link, and the link that stops notices.
_NOTICE: dict[str, Any] = {"game_url": GAME_URL, "unsubscribe_url": UNSUBSCRIBE_URL}
#: What a notice of an admin act names besides its change: the version the act made, and its reader.
_ACT = {"version": 31, "player_id": 4}

#: The fields of a standing (``rules.final_standings``), in the order of the rows :func:`_game_over` is given.
_STANDING = ("player", "name", "coins", "tokens_on_board", "place", "tie_break")


def _game_over(your_seat: int, *table: tuple[int, str, int, int, int, bool]) -> Sample:
    """The final table's mail to Bob, read as ``your_seat``: ``table`` is its standings, a row each."""
    standings = [dict(zip(_STANDING, row, strict=True)) for row in table]
    return Sample(GameOver(**_COMMON, your_seat=your_seat, seed=SEED, standings=standings), game_url=GAME_URL)


SAMPLES: dict[str, Sample] = {
    "invitation": Sample(
        Invitation(
            **_COMMON,
            players=["Ann", "Bob", "Chloé"],
            invite_url=f"{BASE}/invite/eyJnIjoxNywicyI6MX0.ZZ8aQw.sample-invite-signature",
            turn_length_seconds=48 * 3600,
            starts_at_once=False,
            seat=1,
            block_url=BLOCK_URL,
        ),
        game_url=GAME_URL,
    ),
    "confirm_game": Sample(
        GameToConfirm(
            **GAME,
            host_email="ann@example.org",
            players=[
                {"name": "Ann", "email": "ann@example.org"},
                {"name": "Bob", "email": "bob@example.org"},
                {"name": "Chloé", "email": "chloe@example.org"},
            ],
            confirm_url=f"{BASE}/games/confirm/eyJnIjoxNywiayI6InNlY3JldCJ9.ZZ8aQw.sample-confirm-signature",
            confirm_hours=48,
            turn_length_seconds=48 * 3600,
            starts_at_once=False,
            block_url=f"{BASE}/never/eyJlIjoiYW5uQGV4YW1wbGUub3JnIn0.ZZ8aQw.sample-block-signature",
        ),
        time_zone="UTC",
    ),
    "admin_link": Sample(AdminLink(**GAME, admin_url=ADMIN_URL), time_zone="UTC"),
    "admin_login": Sample(
        AdminLogin(
            login_url=f"{BASE}/admin/login/eyJhIjozLCJrIjoic2VjcmV0In0.ZZ8aQw.sample-login",
            valid_minutes=30,
            account_id=3,
            window=14802465,
        ),
        time_zone="UTC",
    ),
    "sign_in": Sample(
        SignInLink(
            sign_in_url=f"{BASE}/sign-in/eyJpIjo5LCJrIjoic2VjcmV0In0.ZZ8aQw.sample-sign-in",
            valid_minutes=30,
            sign_in_id=9,
        ),
        time_zone="UTC",
    ),
    "not_read": Sample(
        NotRead(address="smallworld@smallworld.example", inbound_id=61, guide_url=GUIDE_URL), time_zone="UTC"
    ),
    "operator_forward": Sample(
        OperatorForward(
            address="abuse@play.smallworld.example",
            sender="abuse-desk@isp.example.net",
            their_subject="Complaint about mail from your service",
            received_at="2026-03-01 11:30 UTC",
            text="Hello,\n\nOne of our customers reports a mail from your service as unwanted. Its headers:\n...",
            inbound_id=62,
            admin_url=f"{BASE}/admin/games",
        ),
        time_zone="UTC",
    ),
    "invitation_answer": Sample(
        InvitationAnswer(**_COMMON, seat=1, inbound_id=63, outcome="accepted", guide_url=GUIDE_URL),
        time_zone="Europe/Paris",
    ),
    "your_links": Sample(
        YourLinks(
            **GAME,
            seats=[{"name": "Bob", "url": TURN_URL, "accepted": True}],
            player_id=4,
            window=1234567,
        ),
        time_zone="UTC",
    ),
    "your_turn": Sample(
        YourTurn(
            **_ASKED,
            guide_url=f"{BASE}/how-to-play",
            deadline_at=DEADLINE,
            version=30,
            step_key="4:1:-",
            defending=False,
            hand=0,
            orders=ORDERS,
            conquests=CONQUESTS,
            since=[
                "Ann — Seafaring Orcs — conquered Hill 9 from your Giants (3 tokens: 1 lost, 2 back in your hand),"
                " Sea 0 (empty), then redeployed.",
                "The host moved Ann's deadline.",
            ],
        ),
        game_url=GAME_URL,
        calendar_url=CALENDAR_URL,
        reply_address=REPLY_ADDRESS,
    ),
    "redeploy_needed": Sample(
        RedeployNeeded(
            **_ASKED,
            deadline_at=datetime(2026, 3, 1, 23, 30, tzinfo=UTC),
            version=29,
            step_key="4:0:1",
            defending=True,
            hand=3,
        ),
        game_url=GAME_URL,
        time_zone="America/New_York",
    ),
    "reminder": Sample(
        Reminder(
            **_IN_TURN,
            deadline_at=DEADLINE,
            step_key="4:1:-",
            before_seconds=7200,
            defending=False,
            orders=ORDERS,
            conquests=CONQUESTS,
        ),
        game_url=GAME_URL,
        reply_address=REPLY_ADDRESS,
        now=datetime(2026, 3, 3, 11, 0, tzinfo=UTC),
        unsubscribe_url=UNSUBSCRIBE_REMINDERS_URL,
        calendar_url=CALENDAR_URL,
    ),
    "auto_passed": Sample(
        AutoPassed(**_COMMON, reason="deadline", defending=False, version=31),
        **_NOTICE,
    ),
    "admin_change": Sample(
        AdminChange(
            **_COMMON,
            **_ACT,
            change="deadline_extended",
            actor="host",
            details={"from": DEADLINE.isoformat(), "to": "2026-03-04T13:00:00+00:00"},
            deadline_at=datetime(2026, 3, 4, 13, 0, tzinfo=UTC),
        ),
        **_NOTICE,
    ),
    "seat_to_bot": Sample(
        SeatToBot(**_COMMON, seat=1, reason="you missed 3 turns in a row", take_back_url=TURN_URL, event=41),
    ),
    "host_alert": Sample(
        HostAlert(**GAME, player_name="Chloé", auto_passes=2, admin_url=ADMIN_URL, seat=2),
        unsubscribe_url=UNSUBSCRIBE_URL,
    ),
    "game_over": _game_over(
        1, (1, "Bob", 61, 14, 1, True), (0, "Ann", 61, 11, 2, True), (2, "Chloé", 48, 12, 3, False)
    ),
    "orders_answer": Sample(
        OrdersAnswer(
            **_ANSWER,
            inbound_id=52,
            answered="orders",
            done=[
                "Bob conquered region 5 (Hill) from the Lost Tribes with 3 tokens",
                "Bob rolled 1 for region 9 (Forest) and conquered it with 2 tokens and the die",
            ],
            failed="conquer 11",
            reason="Region 11 needs 3 tokens; you have none left in hand: your conquests are over",
            not_tried=["redeploy 5:2 9:1"],
            orders=["redeploy R:N ...  -  spread your 9 tokens over 5, 9, 13, 14 (regions not named keep theirs)"]
            + ORDERS[-1:],
            **_AWAITED,
        ),
        game_url=GAME_URL,
        reply_address=REPLY_ADDRESS,
    ),
    "bounce_alert": Sample(
        BounceAlert(
            **GAME,
            player_name="Chloé",
            seat=2,
            address="chloe@example.org",
            reason="5.1.1",
            admin_url=ADMIN_URL,
            inbound_id=53,
        ),
        time_zone="UTC",
    ),
    "table_talk": Sample(
        TableTalk(
            **_COMMON,
            seat=1,
            author="Ann",
            text=(
                "Well played, **Bob**: those Giants hold the hills.\n"
                "Two things before my turn:\n"
                "- the fortress stays where it is\n"
                "- see [the rulebook](https://smallworld.example/rules) on Lost Tribes"
            ),
            posted_at=datetime(2026, 3, 1, 11, 25, tzinfo=UTC),
            talk_id=42,
        ),
        game_url=GAME_URL,
        unsubscribe_url=UNSUBSCRIBE_MESSAGES_URL,
    ),
    "daily_digest": Sample(
        DailyDigest(
            player_name="Bob",
            player_id=4,
            local_date="2026-03-01",
            games=[
                {
                    "game_name": "Tuesday Night Conquest",
                    "url": TURN_URL,
                    "waiting": "turn",
                    "deadline_at": DEADLINE.isoformat(),
                    "turn": 4,
                    "turns": 10,
                },
                {
                    "game_name": "Weekend League",
                    "url": f"{BASE}/invite/eyJnIjoyMSwicyI6MiwiayI6InNlY3JldCJ9.ZZ8aQw.sample-invite-signature",
                    "waiting": "invitation",
                    "deadline_at": None,
                    "turn": None,
                    "turns": None,
                },
            ],
            talk=[
                {
                    "game_name": "Tuesday Night Conquest",
                    "author": "Ann",
                    "text": "Well played, **Bob**.\nMy Orcs will be back.",
                    "posted_at": datetime(2026, 2, 28, 21, 5, tzinfo=UTC).isoformat(),
                },
            ],
        ),
    ),
}

#: Variants worth their own snapshot: other wordings of the same message.
VARIANTS: dict[str, Sample] = {
    "invitation-replacing": Sample(
        Invitation(
            **GAME,
            player_name="Dana",
            players=["Ann", "Dana", "Chloé"],
            invite_url=f"{BASE}/invite/eyJnIjoxNywicyI6MX0.ZZ8aQw.sample-invite-signature",
            replacing="Bob",
            your_turn=True,
            turn_length_seconds=48 * 3600,
            starts_at_once=True,
            seat=1,
            seat_secret="sample-new-seat-secret",
        ),
        game_url=GAME_URL,
    ),
    "admin_change-paused": Sample(
        AdminChange(
            **_COMMON,
            **_ACT,
            change="paused",
            actor="site admin admin@smallworld.example",
            details={"reason": "Chloé is moving house this week", "remaining_seconds": 93600},
            pause_reason="Chloé is moving house this week",
            deadline_at=None,
        ),
        **_NOTICE,
    ),
    "admin_change-resumed": Sample(
        AdminChange(
            **_COMMON,
            **_ACT,
            change="resumed",
            actor="host",
            details={"remaining_seconds": 93600},
            deadline_at=datetime(2026, 3, 2, 13, 30, tzinfo=UTC),
        ),
        **_NOTICE,
    ),
    "admin_change-player_replaced": Sample(
        AdminChange(
            **_COMMON,
            **_ACT,
            change="player_replaced",
            actor="host",
            details={"seat": 2, "from": "Chloé", "to": "Dana"},
            deadline_at=DEADLINE,
        ),
        **_NOTICE,
    ),
    "admin_change-resigned": Sample(
        AdminChange(
            **_COMMON,
            **_ACT,
            change="resigned",
            actor="seat 2",
            details={"seat": 2, "then": "bot"},
            deadline_at=DEADLINE,
            seat=1,
            names=["Ann", "Bob", "Chloé"],
        ),
        **_NOTICE,
    ),
    "admin_change-outage": Sample(
        AdminChange(
            **_COMMON,
            change="outage",
            actor="system",
            details={"from": "2026-03-01T09:10:00+00:00", "to": "2026-03-01T11:30:00+00:00", "seconds": 8400},
            deadline_at=datetime(2026, 3, 1, 12, 20, tzinfo=UTC),
            seat=1,
        ),
        **_NOTICE,
    ),
    "game_over-shared": _game_over(0, (0, "Ann", 55, 12, 1, True), (1, "Bob", 55, 12, 1, True)),
    "host_alert-yourself": Sample(
        HostAlert(**GAME, player_name="Chloé", auto_passes=2, admin_url=ADMIN_URL, seat=2, yourself=True),
        unsubscribe_url=UNSUBSCRIBE_URL,
    ),
    "auto_passed-defending": Sample(
        AutoPassed(**_COMMON, reason="host", defending=True, version=32),
        **_NOTICE,
    ),
    "orders_answer-late": Sample(
        OrdersAnswer(
            **_ANSWER,
            inbound_id=54,
            answered="late",
            turn=5,
        ),
        game_url=GAME_URL,
    ),
    "invitation_answer-how": Sample(
        InvitationAnswer(
            **_COMMON, seat=1, inbound_id=64, outcome="how", first_line="Which night is it?", guide_url=GUIDE_URL
        )
    ),
    "invitation_answer-other_address": Sample(
        InvitationAnswer(
            **_COMMON,
            seat=1,
            inbound_id=65,
            outcome="other_address",
            sent_by="bob.at.work@example.com",
            guide_url=GUIDE_URL,
        )
    ),
    "invitation_answer-closed": Sample(
        InvitationAnswer(**_COMMON, seat=1, inbound_id=66, outcome="closed", guide_url=GUIDE_URL)
    ),
    "not_read-expired": Sample(
        NotRead(
            address="play+17-1-4-1-x-0f3a9c6d21b58e4a7c20@smallworld.example",
            inbound_id=67,
            expired=True,
            guide_url=GUIDE_URL,
        ),
        time_zone="UTC",
    ),
    "orders_answer-another_address": Sample(
        OrdersAnswer(
            **_ANSWER,
            inbound_id=57,
            answered="orders",
            done=["Bob conquered region 5 (Hill) from the Lost Tribes with 3 tokens"],
            orders=ORDERS,
            conquests=CONQUESTS,
            sent_by="bob.at.work@example.com",
            **_AWAITED,
        ),
        game_url=GAME_URL,
        reply_address=REPLY_ADDRESS,
    ),
    "orders_answer-step_over": Sample(
        OrdersAnswer(
            **_ANSWER,
            inbound_id=56,
            answered="orders",
            done=["Bob placed 2 tokens in hand: region 5 (Hill) 3, region 9 (Forest) 2", "Bob ended his redeployment"],
            step_over="redeployment",
            cut="end",
            left=["conquer 11"],
            orders=ORDERS,
            **_AWAITED,
        ),
        game_url=GAME_URL,
        reply_address=REPLY_ADDRESS,
    ),
    "orders_answer-no_orders": Sample(
        OrdersAnswer(
            **_ANSWER,
            inbound_id=55,
            answered="no_orders",
            stopped_at="Sounds good, see you Tuesday",
            grammar=[
                "pick 3 | decline | conquer 7 | conquer 7 9 12 | abandon 5 | redeploy 7:3 9:1 | end | help",
                "and with the right race or power: ally 2, berserk, convert 7, dragon 7, encamp 3:2 7:1, "
                "fortress 7, heroes 3 7",
            ],
            orders=ORDERS,
            **_AWAITED,
        ),
        game_url=GAME_URL,
        reply_address=REPLY_ADDRESS,
    ),
}

ALL: dict[str, Sample] = {**SAMPLES, **VARIANTS}
