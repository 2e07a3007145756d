"""The import contracts of ``pyproject.toml`` ([tool.importlinter]) hold: worker → service → emails → rules,
inside the service cli → web → domain → infra, no import cycles inside the service, and pure rules and mail.
A broken contract names the import that breaks it."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_import_contracts_hold() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_contract_ignores_an_import() -> None:
    # An ignored import is a broken contract hidden: fix the import instead.
    assert "ignore_imports" not in (ROOT / "pyproject.toml").read_text()


#: A citation of the project's design document: "ARCHITECTURE §6".
CITATION = re.compile(r"\bARCHITECTURE §(\d+)")
#: A citation of a design document that is not in the repository.
ELSEWHERE = re.compile(r"\bDESIGN §\d+")
#: Where citations may be: the code, its templates and the project's own documents.
CITING = ("*.py", "*.md", "*.html", "*.txt", "*.toml", "*.yaml", "*.yml", "*.conf", "*.ini")
#: Folders that are not the project's own text.
NOT_OURS = {".venv", ".git", "build", "node_modules", ".mypy_cache", ".ruff_cache", "__pycache__"}


def design_sections() -> set[int]:
    """The numbered sections of docs/ARCHITECTURE.md (``## 6. Mail: the outbox`` is section 6)."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    return {int(number) for number in re.findall(r"^## (\d+)\. ", text, flags=re.MULTILINE)}


def cited_sections() -> dict[int, list[str]]:
    """Every section the project cites, with where (file:line); section 0: citations of another document."""
    cited: dict[int, list[str]] = {}
    for pattern in CITING:
        for path in ROOT.rglob(pattern):
            if NOT_OURS & set(path.relative_to(ROOT).parts):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if ELSEWHERE.search(line):
                    cited.setdefault(0, []).append(f"{path.relative_to(ROOT)}:{number}")
                for section in CITATION.findall(line):
                    cited.setdefault(int(section), []).append(f"{path.relative_to(ROOT)}:{number}")
    return cited


def test_every_cited_design_section_exists_in_the_project() -> None:
    sections = design_sections()
    assert sections == set(range(1, max(sections) + 1)), f"sections numbered 1 to n without a gap: {sorted(sections)}"
    cited = cited_sections()
    assert cited, "the code cites its design document"
    elsewhere = cited.pop(0, [])
    assert not elsewhere, f"cite docs/ARCHITECTURE.md as 'ARCHITECTURE §N', no document elsewhere: {elsewhere[:5]}"
    missing = {section: places[:5] for section, places in cited.items() if section not in sections}
    assert not missing, f"cited sections that docs/ARCHITECTURE.md does not have: {missing}"


#: A game row's clock columns (ARCHITECTURE §5): the clock, ``service/domain/clock.py``, reads and writes them,
#: and builds the clauses of the queries that select games by them; everything else asks the clock.
CLOCK_COLUMNS = frozenset({"deadline_at", "reminders_due_at", "paused_remaining", "step_started_at"})
#: Where they may be named besides: the table's model, the plain row's column list and the migrations.
CLOCK_HOMES = (
    "service/domain/clock.py",
    "service/domain/models.py",
    "service/domain/rows.py",
    "service/infra/migrations/",
)
#: Calls whose string arguments name an attribute or a column (``getattr(game, "deadline_at")``, SQL text).
BY_NAME = frozenset({"getattr", "setattr", "hasattr", "delattr", "attrgetter", "text", "column", "literal_column"})
#: Calls whose keywords set columns or a clock's fields (``sa.update(Game).values(deadline_at=…)``).
BY_KEYWORD = frozenset({"Game", "GameRow", "Clock", "values", "filter_by", "replace"})


def clock_column_mentions(source: str) -> list[int]:
    """The lines of ``source`` that read or write a clock column: an attribute of that name (a game's, a query
    row's, the model's in SQL), a name given to ``getattr`` or SQL text, or a keyword that sets one. A field
    of that name elsewhere (a mail's context, an API answer) holds what the clock said, and is not one."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in CLOCK_COLUMNS:
            lines.append(node.lineno)
        elif isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if called in BY_NAME and any(set(re.findall(r"\w+", s)) & CLOCK_COLUMNS for s in strings):
                lines.append(node.lineno)
            if called in BY_KEYWORD and any(k.arg in CLOCK_COLUMNS for k in node.keywords):
                lines.append(node.lineno)
    return sorted(set(lines))


def test_only_the_clock_reads_or_writes_the_clock_columns() -> None:
    """Time left, paused time left and whether a deadline is due are the clock's answers: a page, mail, feed,
    API answer or operation that reads the columns itself is a second clock."""
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in ("service", "emails", "worker")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if not path.relative_to(ROOT).as_posix().startswith(CLOCK_HOMES)
        for line in clock_column_mentions(path.read_text(encoding="utf-8"))
    ]
    assert found == [], f"ask service.domain.clock.Clock (Clock.read, Clock.of, its clauses) instead: {found}"


def test_the_clock_is_told_the_time() -> None:
    """Each of the clock's answers takes ``now`` from its caller: none reads the time itself."""
    source = (ROOT / "service" / "domain" / "clock.py").read_text(encoding="utf-8")
    assert not re.search(r"\b(now|utcnow|today|time)\(\)|datetime\.now", source)


def test_the_column_check_sees_reads_writes_sql_and_names_but_not_what_the_clock_said() -> None:
    seen = """left = game.paused_remaining
query = select(Game).order_by(col(Game.deadline_at))
game.reminders_due_at = None
session.execute(sa.update(Game).values(step_started_at=now))
when = getattr(game, "deadline_at")
rows = session.execute(sa.text("SELECT id FROM game WHERE deadline_at <= :now"))
"""
    assert clock_column_mentions(seen) == [1, 2, 3, 4, 5, 6]
    not_seen = '''"""Mails say the deadline_at the clock gave."""
notice = Reminder(deadline_at=clock.deadline, turn=3)
at = context.get("deadline_at")
def notice(deadline_at: datetime) -> None: ...
'''
    assert clock_column_mentions(not_seen) == []
