"""The hooks a race or a special power plugs into (DESIGN §3: each is one small object).

The engine calls these at defined moments; a race or power overrides only what it changes. Unless said
otherwise a hook applies only while the troop is Active (rulebook, "The Races and Special Powers": benefits
"no longer apply once the race is put In Decline"); the few benefits that persist In Decline are flags the
engine reads for declined troops too (``scores_in_decline``, ``conquers_in_decline``, ``sails``…).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from .actions import Action
    from .state import GameState, Troop


class Ability:
    name: ClassVar[str] = ""
    #: Tokens on the banner or badge (components.md).
    tokens: ClassVar[int] = 0

    # -- flags ----------------------------------------------------------------------------------------------
    #: First conquest on any land region, not only a border one (Halflings, Flying).
    enters_anywhere: ClassVar[bool] = False
    #: Conquests need not be adjacent (Flying); never Seas or the Lake.
    flies: ClassVar[bool] = False
    #: May conquer Seas and the Lake; kept and scored In Decline (Seafaring).
    sails: ClassVar[bool] = False
    #: When conquered, all tokens return to hand, none discarded (Elves).
    keeps_tokens_when_conquered: ClassVar[bool] = False
    #: All tokens stay on the map going In Decline (Ghouls).
    keeps_all_in_decline: ClassVar[bool] = False
    #: In Decline tokens go on conquering (Ghouls).
    conquers_in_decline: ClassVar[bool] = False
    #: Counts toward the one-race-In-Decline limit (not Spirit).
    counts_toward_decline_limit: ClassVar[bool] = True
    #: The race's scoring bonus persists In Decline (Dwarves).
    scores_in_decline: ClassVar[bool] = False
    #: May go In Decline at the end of a turn of conquests, after scoring (Stout).
    declines_after_scoring: ClassVar[bool] = False
    #: Action types this ability adds, handled by :meth:`apply`.
    action_types: ClassVar[tuple[str, ...]] = ()

    # -- hooks ----------------------------------------------------------------------------------------------
    def conquest_discount(self, state: GameState, seat: int, troop: Troop, region: int) -> int:
        """Tokens fewer to conquer ``region`` (the engine keeps the minimum of 1)."""
        return 0

    def reaches(self, state: GameState, seat: int, troop: Troop, region: int, held: list[int]) -> bool:
        """Whether ``region`` counts as adjacent for conquest beyond the board's borders (Underworld)."""
        return False

    def reachable(self, state: GameState, seat: int, troop: Troop, held: list[int]) -> Iterable[int] | None:
        """The regions :meth:`reaches` may accept (at least all those it does), so that ``legal_actions``
        checks only those; ``None``: any region. An ability that overrides ``reaches`` and not this is
        asked about every region."""
        return () if type(self).reaches is Ability.reaches else None

    def on_pick(self, state: GameState, seat: int, troop: Troop) -> None:
        """When the combo is picked (Bivouacking receives its Encampments)."""

    def on_conquer(self, state: GameState, seat: int, troop: Troop, region: int, nonempty: bool) -> None:
        """After ``region`` was conquered (state is an edit in progress)."""

    def on_ready(self, state: GameState, seat: int, troop: Troop) -> None:
        """When troops are readied at the start of the turn's conquests."""

    def on_conquests_end(self, state: GameState, seat: int, troop: Troop) -> None:
        """When the conquests end and redeployment begins (Skeletons' reinforcements)."""

    def kept_off_board(self, total: int) -> int:
        """Tokens the troop keeps off the board after its own redeployment (Amazons' 4), of ``total``
        (its tokens on the board, in hand and already held back)."""
        return 0

    def on_end_turn(self, state: GameState, seat: int, troop: Troop) -> None:
        """After redeployment, before scoring (Amazons hold back 4, Heroes land)."""

    def on_decline(self, state: GameState, seat: int, troop: Troop) -> None:
        """The troop goes In Decline: take away what does not survive it."""

    def score(self, state: GameState, seat: int, troop: Troop, regions: list[int]) -> int:
        """Bonus coins at the end of the owner's turn; ``regions`` are the troop's regions."""
        return 0

    def legal(self, state: GameState, seat: int, troop: Troop) -> list[Action]:
        """The extra actions this ability offers now."""
        return []

    def apply(self, state: GameState, seat: int, troop: Troop, action: Action) -> dict[str, Any] | None:
        """Carry out one of :attr:`action_types` (state is an edit in progress); raise IllegalAction.

        May return what to add to the step's ``last`` (Berserk: the die, an undo point)."""
        raise NotImplementedError(action.type)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class Race(Ability):
    pass


class Power(Ability):
    pass


RACES: dict[str, Race] = {}
POWERS: dict[str, Power] = {}
#: action type -> (is_race, ability name): who handles an added action.
ACTION_OWNERS: dict[str, Ability] = {}


def register(cls: type[Ability]) -> type[Ability]:
    """Class decorator: make a race or power known to the engine."""
    instance = cls()
    table: dict = RACES if isinstance(instance, Race) else POWERS
    assert instance.name and instance.name not in table, instance.name
    table[instance.name] = instance
    for kind in instance.action_types:
        assert kind not in ACTION_OWNERS, kind
        ACTION_OWNERS[kind] = instance
    return cls
