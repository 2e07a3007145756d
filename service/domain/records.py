"""Reading an address's rating and record (ARCHITECTURE §9), as pages and mails show them beside a name.

The tally (``service.domain.tally``) is their only writer. Everything here is public: finished games only,
no coins of a game still running.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlmodel import Session, col, select

from service.domain.models import Player, PlayerRecord


@dataclass(frozen=True)
class Record:
    """An address's record and rating over its finished games."""

    games: int = 0
    deadlines: int = 0
    missed: int = 0
    resigned: int = 0
    #: openskill's mean and uncertainty (``None`` before a first finished game).
    mu: float | None = None
    sigma: float | None = None

    @property
    def rating(self) -> int | None:
        """The rating shown: mu − 3·sigma (openskill's "ordinal"), rounded; ``None`` before a first game.

        >>> Record(games=1, mu=27.5, sigma=7.9).rating
        4
        """
        if self.mu is None or self.sigma is None:
            return None
        return round(self.mu - 3 * self.sigma)

    @property
    def missed_percent(self) -> int:
        """The share of deadlines missed, in whole percent (a missed one never shows as 0 %).

        >>> Record(games=12, deadlines=100, missed=2).missed_percent, Record(deadlines=300, missed=1).missed_percent
        (2, 1)
        """
        if not self.deadlines or not self.missed:
            return 0
        return max(1, round(100 * self.missed / self.deadlines))

    @property
    def words(self) -> str:
        """The record in a few words, as shown beside a name: :attr:`deeds`, then the rating.

        >>> Record(games=12, deadlines=100, missed=2, mu=30, sigma=3).words
        '12 games, missed 2 % of deadlines, rating 21'
        >>> Record(games=1, deadlines=10, resigned=1, mu=20, sigma=8).words
        '1 game, missed no deadline, resigned 1, rating -4'
        >>> Record().words
        'no finished game yet'
        """
        if self.rating is None or not self.games:
            return self.deeds
        return f"{self.deeds}, rating {self.rating}"

    @property
    def deeds(self) -> str:
        """The record without the rating, where the rating is shown beside it already (the final standings).

        >>> Record(games=12, deadlines=100, missed=2, mu=30, sigma=3).deeds
        '12 games, missed 2 % of deadlines'
        """
        if not self.games:
            return "no finished game yet"
        parts = [f"{self.games} game{'s' if self.games != 1 else ''}"]
        parts.append(f"missed {self.missed_percent} % of deadlines" if self.missed else "missed no deadline")
        if self.resigned:
            parts.append(f"resigned {self.resigned}")
        return ", ".join(parts)


NO_RECORD = Record()


def _record_of(row: PlayerRecord) -> Record:
    return Record(
        games=row.games_finished,
        deadlines=row.deadlines,
        missed=row.deadlines_missed,
        resigned=row.resigned,
        mu=row.rating_mu,
        sigma=row.rating_sigma,
    )


def records_of(session: Session, player_ids: Iterable[int]) -> dict[int, Record]:
    """The record of each player id (an address with no finished game has :data:`NO_RECORD`), one query."""
    ids = sorted(set(player_ids))
    found = {
        row.player_id: _record_of(row)
        for row in session.exec(select(PlayerRecord).where(col(PlayerRecord.player_id).in_(ids))).all()
    }
    return {player_id: found.get(player_id, NO_RECORD) for player_id in ids}


def address_record(session: Session, email: str) -> Record:
    """The record of an address (as typed: compared in lower case); :data:`NO_RECORD` if it has none."""
    row = session.exec(
        select(PlayerRecord)
        .join(Player, col(Player.id) == col(PlayerRecord.player_id))
        .where(col(Player.email) == email.strip().lower())
    ).first()
    return _record_of(row) if row is not None else NO_RECORD
