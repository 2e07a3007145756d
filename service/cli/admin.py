"""``smallworld admin …``: the admin acts from a shell, through the same domain operations.

smallworld admin create EMAIL          a site admin account (prints its sign-in link)
smallworld admin sign-out EMAIL        end every session and sign-in link of that account
smallworld admin extend GAME 24h       push the deadline back (30m, 24h, 2d)
smallworld admin pause GAME "reason"   / resume GAME / pass GAME / cancel GAME
smallworld admin turn-length GAME 48h  future turns
smallworld admin redeploy GAME ask     defenders' redeploy mode
smallworld admin replace GAME SEAT EMAIL NAME / remove GAME SEAT
smallworld admin bot GAME SEAT         the house bot plays SEAT until its player takes it back
smallworld admin games                 the games, soonest deadline first
smallworld admin export-address EMAIL  what the service keeps about an address, as JSON (its owner's copy)
smallworld admin forget-address EMAIL --yes   erase an address, on its owner's request received by other means
smallworld admin bouncing              the addresses marked as bouncing (no mail goes to them)
smallworld admin clear-bounce EMAIL    mail goes to EMAIL again (its owner may also sign in)
"""

from __future__ import annotations

import json
import re
import secrets
from datetime import timedelta
from typing import Any

import click
from flask.cli import AppGroup
from sqlmodel import col, select

from service.domain import admin, bot_seats, bounces, privacy, site_admins
from service.domain.clock import Clock
from service.domain.errors import DomainError
from service.domain.links import LOGIN_MAX_AGE, current_links
from service.domain.models import Game, GameStatus, SiteAdmin
from service.infra.chat import mask
from service.infra.db import get_session

#: The admin commands. ``smallworld admin`` itself, its help included, is ``service.cli``'s ``_AdminCommands``,
#: which imports this module only when an admin command is asked for: this one never imports that one.
group = AppGroup("admin")
ACTOR = admin.Actor("site admin (command line)")


def parse_duration(text: str) -> timedelta:
    """``90m``, ``24h``, ``2d``, ``1d12h`` → a timedelta."""
    parts = re.fullmatch(r"\s*(?:(\d+)d)?\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*", text.lower())
    if not parts or not any(parts.groups()):
        raise click.BadParameter(f"{text!r} is not a duration like 30m, 24h or 2d")
    days, hours, minutes = (int(x or 0) for x in parts.groups())
    return timedelta(days=days, hours=hours, minutes=minutes)


def _run(operation: Any, *args: Any, **kwargs: Any) -> Game:
    try:
        return operation(get_session(), *args, **kwargs)
    except DomainError as error:
        raise click.ClickException(error.message) from None


def _done(game: Game) -> None:
    at = Clock.read(game).deadline
    deadline = at.isoformat(timespec="minutes") if at else "none"
    click.echo(f"game {game.id}: {game.status}, deadline {deadline}, version {game.version}")


@group.command("create")
@click.argument("email")
def create(email: str) -> None:
    """Create a site admin account and print its sign-in link."""
    session = get_session()
    email = email.strip().lower()
    account = session.exec(select(SiteAdmin).where(SiteAdmin.email == email)).first()
    if account is None:
        account = SiteAdmin(email=email, secret=secrets.token_urlsafe(24))
        session.add(account)
        session.commit()
        click.echo(f"Site admin {email} created.")
    else:
        click.echo(f"Site admin {email} exists.")
    assert account.id is not None  # committed above or read from the table
    link = current_links().login_url(account.id, account.secret, account.sign_in_serial)
    click.echo(f"Sign-in link (valid {LOGIN_MAX_AGE // 60} minutes, once): {link}")


@group.command("sign-out")
@click.argument("email")
def sign_out(email: str) -> None:
    """End every session of a site admin account and every sign-in link already mailed to it."""
    session = get_session()
    account = site_admins.find(session, email)
    if account is None:
        raise click.ClickException(f"There is no site admin {site_admins.normalise_email(email)}")
    site_admins.sign_out_everywhere(session, account.id or 0)
    click.echo(f"Site admin {account.email} is signed out everywhere.")


@group.command("games")
def list_games() -> None:
    """Running games, soonest deadline first."""
    session = get_session()
    rows = session.exec(
        select(Game)
        .where(col(Game.status).in_((GameStatus.INVITING, GameStatus.ACTIVE, GameStatus.PAUSED)))
        .order_by(Clock.soonest_first())
    ).all()
    for game in rows:
        _done(game)


@group.command("extend")
@click.argument("game_id", type=int)
@click.argument("duration")
def extend(game_id: int, duration: str) -> None:
    """Push the current deadline back by DURATION (30m, 24h, 2d)."""
    _done(_run(admin.extend_deadline, game_id, ACTOR, current_links(), by=parse_duration(duration)))


@group.command("pause")
@click.argument("game_id", type=int)
@click.argument("reason")
def pause(game_id: int, reason: str) -> None:
    """Pause the clock; REASON is shown to the players."""
    _done(_run(admin.pause, game_id, ACTOR, current_links(), reason))


@group.command("resume")
@click.argument("game_id", type=int)
def resume(game_id: int) -> None:
    """Resume with the time that was left."""
    _done(_run(admin.resume, game_id, ACTOR, current_links()))


@group.command("pass")
@click.argument("game_id", type=int)
def pass_now(game_id: int) -> None:
    """Auto-pass the player the game waits for, now."""
    _done(_run(admin.pass_now, game_id, ACTOR, current_links()))


@group.command("turn-length")
@click.argument("game_id", type=int)
@click.argument("duration")
def turn_length(game_id: int, duration: str) -> None:
    """Set the length of future turns."""
    seconds = int(parse_duration(duration).total_seconds())
    _done(_run(admin.change_settings, game_id, ACTOR, current_links(), turn_length_seconds=seconds))


@group.command("redeploy")
@click.argument("game_id", type=int)
@click.argument("mode", type=click.Choice(["auto", "ask"]))
def redeploy(game_id: int, mode: str) -> None:
    """Set the defenders' redeploy mode."""
    _done(_run(admin.change_settings, game_id, ACTOR, current_links(), redeploy=mode))


@group.command("replace")
@click.argument("game_id", type=int)
@click.argument("seat", type=int)
@click.argument("email")
@click.argument("name")
def replace(game_id: int, seat: int, email: str, name: str) -> None:
    """Give SEAT to a new player; the seat's old links stop working."""
    _done(_run(admin.replace_player, game_id, ACTOR, current_links(), seat, email, name))


@group.command("remove")
@click.argument("game_id", type=int)
@click.argument("seat", type=int)
def remove(game_id: int, seat: int) -> None:
    """Remove a player: the seat is auto-passed for the rest of the game."""
    _done(_run(admin.remove_player, game_id, ACTOR, current_links(), seat))


@group.command("bot")
@click.argument("game_id", type=int)
@click.argument("seat", type=int)
def bot(game_id: int, seat: int) -> None:
    """Give SEAT (0 plays first) to the house bot: it plays the seat's turns until its player takes the seat
    back from their link (they are mailed it)."""
    _done(_run(bot_seats.host_gives_seat_to_bot, game_id, seat, ACTOR.label, current_links()))


@group.command("cancel")
@click.argument("game_id", type=int)
@click.option("--reason", default="", help="Shown to the players.")
def cancel(game_id: int, reason: str) -> None:
    """Cancel the game."""
    _done(_run(admin.cancel, game_id, ACTOR, current_links(), reason))


@group.command("chat")
@click.argument("game_id", type=int)
@click.argument("chat_url", required=False)
@click.option("--remove", is_flag=True, help="Disconnect the game's chat.")
def chat(game_id: int, chat_url: str | None, remove: bool) -> None:
    """Connect the game to a chat (an apprise URL, e.g. discord://webhook_id/token), or --remove it."""
    if remove == bool(chat_url):
        raise click.UsageError("Give a chat address, or --remove")
    game = _run(admin.set_chat_url, game_id, ACTOR, None if remove else chat_url)
    click.echo(f"game {game.id}: chat {mask(game.chat_url) or 'none'}")


@group.command("bouncing")
def bouncing() -> None:
    """List the addresses marked as bouncing (service/domain/bounces.py): no mail goes to them until their owner
    signs in again, or ``clear-bounce``."""
    for email in bounces.bouncing_addresses(get_session()):
        click.echo(email)


@group.command("clear-bounce")
@click.argument("email")
def clear_bounce(email: str) -> None:
    """Clear EMAIL's bouncing mark: mail goes to it again (its owner says it works, or the report was wrong)."""
    session = get_session()
    if not bounces.clear(session, email.strip()):
        session.rollback()
        raise click.ClickException(f"{email} is not marked as bouncing")
    session.commit()
    click.echo(f"{email}: mail goes to it again")


@group.command("export-address")
@click.argument("email")
def export_address(email: str) -> None:
    """Print what the service keeps about EMAIL as JSON, as "Download my data" gives it to a signed-in player
    (service/domain/privacy.py): for a request received by other means, to send to that address only."""
    session = get_session()
    document = privacy.export(session, email)
    session.rollback()
    click.echo(json.dumps(document, ensure_ascii=False, indent=2))


@group.command("forget-address")
@click.argument("email")
@click.option("--yes", is_flag=True, help="Erase it: without this flag, only say what would be erased.")
def forget_address(email: str, yes: bool) -> None:
    """Erase EMAIL from the service, as "Delete my address" does (service/domain/privacy.py): its names become
    "A former player" in every game, its running seats go to the house bot or the auto-pass as each host set,
    no mail goes to it again. Cannot be undone; without --yes, nothing is done."""
    session = get_session()
    email = email.strip().lower()
    known = privacy.export(session, email)
    session.rollback()
    games, hosted = known["games"], known["hosted_games"]
    running = [g for g in games if g["status"] in ("inviting", "active", "paused") and not g["resigned_at"]]
    summary = (
        f"{email}: {len(games)} game(s) played ({len(running)} under way), {len(hosted)} hosted, "
        f"{len(known['mails_to_you'])} mail(s) written to it, {len(known['mails_from_you'])} from it"
    )
    if not yes:
        click.echo(summary)
        raise click.ClickException("Nothing was erased: add --yes to erase this address for good.")
    try:
        forgotten = privacy.forget_address(session, email, current_links())
    except DomainError as error:
        raise click.ClickException(error.message) from None
    if not forgotten.known:
        click.echo(f"{email} was not known here: nothing to erase; no game may name it from now on.")
        return
    click.echo(summary)
    left = ", ".join(f"game {g}: {how}" for g, how in sorted(forgotten.seats_left.items())) or "none"
    click.echo(f"Erased. Seats left to their games ({left}); {forgotten.mails_cancelled} mail(s) not sent.")
    if forgotten.seats_not_settled:
        games_left = ", ".join(str(g) for g in forgotten.seats_not_settled)
        click.echo(f"Games {games_left} moved on meanwhile: their deadlines will pass the erased seat.")
