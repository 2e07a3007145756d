"""An admin act in words has one writer, ``emails/admin_acts.py``: every act is worded for every audience it is
told to (the audit log, the story, the chat, the ``admin_change`` mail), none falls through to a default, the
public audiences never name an address, and no other module words an act."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

import pytest

from emails import admin_acts
from emails.admin_acts import ACTS, AUDIENCES, CHANGES, AdminAct, Change, Reader

ROOT = Path(__file__).resolve().parent.parent.parent
HOME = ROOT / "emails" / "admin_acts.py"
NAMES = ["Ann", "Bob", "Cy"]
BOSS = "site admin boss@example.org"

#: One act of each kind, as its audit entry records it (``service.domain.admin`` and the modules it names).
SAMPLES: dict[str, tuple[str, dict[str, Any]]] = {
    "extend": ("host", {"from": "2026-03-03T12:00:00+00:00", "to": "2026-03-04T12:00:00+00:00"}),
    "pause": (BOSS, {"reason": "Upgrade", "remaining_seconds": 7200}),
    "resume": ("host", {"remaining_seconds": 7200}),
    "settings": ("host", {"turn_length_seconds": 86400, "reminders_before_seconds": [3600], "vacation_days": 3}),
    "replace": ("host", {"seat": 2, "from": "Cy", "to": "Dana"}),
    "remove": (BOSS, {"seat": 1}),
    "cancel": ("host", {"reason": "not enough time"}),
    "vacation": ("seat 1", {"seat": 1, "days": 2.0, "until": "2026-03-05T12:00:00+00:00"}),
    "resign": ("seat 2", {"seat": 2, "then": "bot"}),
    "outage": ("system", {"from": "2026-03-01T09:10:00+00:00", "to": "2026-03-01T11:30:00+00:00", "seconds": 8400}),
    "pass": (BOSS, {"seat": 0}),
    "bot": ("host", {"seat": 2, "reason": "the host gave it your seat"}),
    "unbot": ("seat 2", {"seat": 2}),
    "chat": ("host", {"service": "Matrix"}),
    "watching": ("host", {"public": True}),
    "resend": (BOSS, {"mail": 9, "to": "cy@example.org", "template": "your_turn"}),
    "rematch": ("seat 0", {"game": 12}),
}
DEADLINE = datetime(2026, 3, 4, 12, tzinfo=UTC)


def act(kind: str) -> AdminAct:
    actor, details = SAMPLES[kind]
    return AdminAct(kind, actor, details, deadline=DEADLINE, awaited=[1])


def readers(audience: str) -> list[Reader]:
    """Each reader of ``audience``: the public one, the admins' log, a seated reader of the story and the mail."""
    if audience == "log":
        return [Reader("log", NAMES, time_zone="Europe/Paris"), Reader("log", NAMES, for_admins=True)]
    if audience == "chat":
        return [Reader("chat", NAMES)]
    return [Reader(audience, NAMES, viewer=0, time_zone="Europe/Paris"), Reader(audience, NAMES, viewer=1)]  # type: ignore[arg-type]


def test_every_act_has_a_sample() -> None:
    assert set(SAMPLES) == set(ACTS), "a new act needs its sample here, so that its words are checked"


@pytest.mark.parametrize("audience", AUDIENCES)
@pytest.mark.parametrize("kind", sorted(ACTS))
def test_every_act_is_worded_for_every_audience_it_is_told_to_and_refused_to_the_others(
    kind: str, audience: str
) -> None:
    for reader in readers(audience):
        if audience not in ACTS[kind].audiences:
            with pytest.raises(ValueError, match="not told to"):
                admin_acts.told(act(kind), reader)
            continue
        sentence = admin_acts.told(act(kind), reader)
        assert sentence.endswith(".") and sentence[0].isupper(), sentence
        # No default: neither the unknown act's words nor an actor nobody recognised.
        assert "did “" not in sentence and not sentence.startswith("An admin"), sentence
        if audience in ("chat", "mail"):
            assert admin_acts.title(kind), kind


@pytest.mark.parametrize("audience", AUDIENCES)
def test_no_two_acts_share_a_sentence(audience: str) -> None:
    """Each act has words of its own: a sentence shared by two acts would be a default in disguise."""
    reader = readers(audience)[0]
    told = {kind: admin_acts.told(act(kind), reader) for kind in ACTS if audience in ACTS[kind].audiences}
    assert len(set(told.values())) == len(told), told


def test_the_acts_a_player_hears_of_are_told_to_all_four_audiences() -> None:
    """The acts of ``service.domain.admin._act`` are mailed, told in the chat and the story, and logged."""
    for kind in acts_made_by("_act"):
        assert ACTS[kind].audiences == admin_acts.EVERYONE, kind


def test_every_act_the_service_records_has_its_words_in_the_log() -> None:
    recorded = acts_made_by("AuditEntry") | acts_made_by("_act")
    assert recorded >= {"extend", "pause", "resign", "bot", "resend", "rematch"}, "the scan finds the acts"
    for kind in recorded:
        assert kind in ACTS and "log" in ACTS[kind].audiences, kind


def test_each_mail_change_names_one_act_told_by_mail() -> None:
    assert set(get_args(Change)) == set(CHANGES)
    for change, kind in CHANGES.items():
        assert ACTS[kind].change == change and "mail" in ACTS[kind].audiences
    assert {kind for kind, told in ACTS.items() if "mail" in told.audiences} == set(CHANGES.values())


@pytest.mark.parametrize("kind", sorted(ACTS))
def test_the_public_audiences_name_no_address_no_link_and_no_coin(kind: str) -> None:
    for audience in AUDIENCES:
        if audience not in ACTS[kind].audiences:
            continue
        for reader in readers(audience):
            if reader.for_admins:
                continue
            sentence = admin_acts.told(act(kind), reader)
            assert "@" not in sentence and "http" not in sentence and "coins " not in sentence, sentence


def test_the_admins_log_names_the_site_admin_and_the_address_a_mail_went_to() -> None:
    reader = Reader("log", NAMES, for_admins=True)
    assert admin_acts.told(act("resend"), reader) == (
        "Site admin boss@example.org sent a failed your-turn mail again (to cy@example.org)."
    )
    assert admin_acts.told(act("resend"), Reader("log", NAMES)) == "A site admin sent a failed your-turn mail again."


def test_the_story_and_the_mail_tell_their_reader_you() -> None:
    assert admin_acts.told(act("resign"), Reader("story", NAMES, viewer=2)) == (
        "You resigned from the game: the house bot plays your seat."
    )
    assert admin_acts.told(act("remove"), Reader("mail", NAMES, viewer=1)) == (
        "A site admin removed you from the game: your turns are passed automatically."
    )
    assert admin_acts.told(act("extend"), Reader("story", NAMES, viewer=1)) == "The host moved your deadline."
    assert admin_acts.told(act("extend"), Reader("story", NAMES, viewer=0)) == "The host moved Bob's deadline."


def test_an_act_logged_without_its_actor_is_told_plainly_in_the_story() -> None:
    assert admin_acts.told(AdminAct("resume", None, {}), Reader("story")) == "The game was resumed."


def test_an_unknown_act_is_named_in_the_log_and_refused_elsewhere() -> None:
    odd = AdminAct("redecorate", "host", {})
    assert admin_acts.told(odd, Reader("log")) == "The host did “redecorate”."
    for audience in ("story", "chat", "mail"):
        with pytest.raises(ValueError, match="no words"):
            admin_acts.told(odd, Reader(audience))  # type: ignore[arg-type]


# -- one writer: no other module words an act ---------------------------------------------------------------
#: The project's code (tests, benchmarks and migrations aside).
CODE = ("rules", "emails", "service", "worker")


def code_files() -> list[Path]:
    return [
        path
        for folder in CODE
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "migrations" not in path.parts and path != HOME
    ]


def words_acts(tree: ast.AST) -> list[str]:
    """Where a module words admin acts: a table keyed by two acts or more with words for values, or one
    expression compared with two acts or more (a branch per act)."""
    kinds = set(ACTS)
    found: list[str] = []
    compared: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in kinds}
            worded = all(
                isinstance(v, ast.Constant | ast.JoinedStr | ast.Lambda | ast.Tuple | ast.Call) for v in node.values
            )
            if len(keys) >= 2 and worded:
                found.append(f"line {node.lineno}: a table of {sorted(keys)}")
        elif isinstance(node, ast.Compare):
            named = [node.left, *node.comparators]
            constants = [c for c in named if isinstance(c, ast.Constant)]
            for c in named:
                if isinstance(c, ast.Tuple | ast.Set | ast.List):
                    constants += [e for e in c.elts if isinstance(e, ast.Constant)]
            others = [ast.dump(c) for c in named if not isinstance(c, ast.Constant | ast.Tuple | ast.Set | ast.List)]
            for other in others:
                compared.setdefault(other, set()).update(c.value for c in constants if c.value in kinds)
    for expression, acts in compared.items():
        if len(acts) >= 2:
            found.append(f"{expression[:60]}… compared with {sorted(acts)}")
    return found


def test_no_module_but_the_home_words_an_admin_act() -> None:
    wording = {
        str(path.relative_to(ROOT)): words_acts(ast.parse(path.read_text(encoding="utf-8"))) for path in code_files()
    }
    assert {path: found for path, found in wording.items() if found} == {}, "emails/admin_acts.py words the acts"


def test_the_check_finds_a_second_writer() -> None:
    """The scan above is no empty check: the copies it replaced are found, and so is the home itself."""
    table = 'TITLES = {"extend": "the deadline moved", "pause": "the game is paused"}'
    branches = (
        'def words(act):\n    if act == "resume":\n        return "x"\n    if act in ("cancel",):\n        return "y"'
    )
    assert words_acts(ast.parse(table)) and words_acts(ast.parse(branches))
    assert words_acts(ast.parse(HOME.read_text(encoding="utf-8")))


def acts_made_by(call: str) -> set[str]:
    """The acts the service records: ``AuditEntry(act=…)`` (a string, or a module's constant) or ``_act(…, "x", …)``."""
    acts: set[str] = set()
    for path in (ROOT / "service").rglob("*.py"):
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == call):
                continue
            if call == "_act" and len(node.args) > 3:
                value: ast.expr | None = node.args[3]
            else:
                value = next((k.value for k in node.keywords if k.arg == "act"), None)
            if isinstance(value, ast.Constant):
                acts.add(value.value)
            elif isinstance(value, ast.Name) and value.id in constants:
                acts.add(constants[value.id])
    return acts
