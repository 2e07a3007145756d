"""The import contracts of ``pyproject.toml`` ([tool.importlinter]) hold: worker → service → emails → rules,
inside the service cli → web → domain → drain → infra, no import cycles inside the rules or the service, and pure rules
and mail. A broken contract names the import that breaks it.

import-linter's ``acyclic_siblings`` counts the imports inside functions (grimp reads every import statement)
but only between the siblings of a package: a package and its own submodules (``service`` ↔ ``service.cli``)
are never siblings, so a cycle through a package's ``__init__`` passes it; and it counts the imports made for
the type checker alone, which never run (the rules' hooks name ``rules.telling.Step`` so, and telling calls the
hooks). :func:`import_graph` and :func:`cycles` are the check of our own: every package, every import that
runs, those inside functions included."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The packages that hold no import cycle, counting the imports inside functions: the rules and the service
#: (issue 33), and the mail and the worker with them, which have none either.
ACYCLIC = ("rules", "emails", "service", "worker")


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


# -- one leased drain (ARCHITECTURE §6) ----------------------------------------------------------------------------
#: The drain's package: the only code that holds a lease or names the drain holding a row.
DRAIN = "service/drain/"
#: The queues the drain sends, each by :func:`service.drain.queue.drain`.
QUEUES = ("service/domain/delivery.py", "service/domain/chat_notices.py")


def lease_handling(source: str) -> list[int]:
    """The lines of ``source`` that hold a lease or claim a row themselves: an import of ``service.drain.leases``
    (its locks and leases), or a write of ``claimed_by`` (a keyword ``claimed_by=``, a key ``"claimed_by"`` of a
    dictionary, an assignment to ``.claimed_by``). Reading it (a row some drain holds now) is not."""
    return sorted({node.lineno for node in ast.walk(ast.parse(source)) if _holds_or_claims(node)})


def _holds_or_claims(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return module == "service.drain.leases" or any(
            f"{module}.{a.name}" == "service.drain.leases" for a in node.names
        )
    if isinstance(node, ast.Import):
        return any(alias.name.startswith("service.drain.leases") for alias in node.names)
    if isinstance(node, ast.Call):
        return any(keyword.arg == "claimed_by" for keyword in node.keywords)
    if isinstance(node, ast.Dict):
        return any(isinstance(key, ast.Constant) and key.value == "claimed_by" for key in node.keys)
    if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(isinstance(target, ast.Attribute) and target.attr == "claimed_by" for target in targets)
    return False


def test_only_the_drain_claims_rows_and_holds_leases() -> None:
    """Mail and chat notices are sent by one leased drain: a second module that claims rows or keeps a lease is a
    second drain, whose guarantees (exactly once, the claim's order, the lock order) nobody checks."""
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in ("service", "worker", "emails")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if not path.relative_to(ROOT).as_posix().startswith((DRAIN, "service/infra/migrations/"))
        and path.relative_to(ROOT).as_posix() != "service/domain/models.py"  # the column itself
        for line in lease_handling(path.read_text(encoding="utf-8"))
    ]
    assert found == [], f"claim and lease through service.drain (a Queue for service.drain.queue.drain): {found}"
    for queue in QUEUES:
        tree = ast.parse((ROOT / queue).read_text(encoding="utf-8"))
        called = {
            node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "service.drain.queue"
            for alias in node.names
        }
        assert {"drain", "Queue"} <= imported and "drain" in called, f"{queue} is sent by service.drain.queue.drain"


def test_the_lease_check_sees_imports_and_writes_but_not_reads() -> None:
    seen = """from service.drain import leases
from service.drain.leases import Lease
import service.drain.leases
sa.update(table).values(claimed_by=None)
rows.append({"claimed_by": holder})
row.claimed_by = "me"
"""
    assert lease_handling(seen) == [1, 2, 3, 4, 5, 6]
    not_seen = """from service.drain.queue import Claims, drain
held = col(OutboxMail.claimed_by).is_(None)
holder = row.claimed_by
"""
    assert lease_handling(not_seen) == []


# -- no import cycles, counting the imports inside functions ----------------------------------------------------
def module_name(path: Path, root: Path = ROOT) -> str:
    """``service/cli/__init__.py`` → ``service.cli``; ``rules/state.py`` → ``rules.state``."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_type_checking(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:``: imports for the type checker alone."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_statements(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, those inside functions and classes too, but none of an ``if
    TYPE_CHECKING:`` block (its ``else:`` does run, so it counts)."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If) and is_type_checking(node.test):
            pending.extend(node.orelse)
        else:
            pending.extend(ast.iter_child_nodes(node))
    return found


def import_graph(packages: tuple[str, ...] = ACYCLIC, root: Path = ROOT) -> dict[str, dict[str, int]]:
    """Module → the modules of ``packages`` it imports, each with the line of its first import.

    An import names a module: ``import a.b.c`` and ``from a.b import c`` (``c`` a submodule) are edges to
    ``a.b.c``, ``from a.b import name`` is an edge to ``a.b``: a package's ``__init__`` that re-exports is
    imported by whoever imports a name from the package. The parents that Python initialises on the way
    (``a`` and ``a.b`` for ``import a.b.c``) are not edges: every submodule would otherwise be in a cycle
    with a package whose ``__init__`` imports any of its submodules. So ``rules/__init__.py`` importing
    ``rules.races`` is an edge from the package ``rules`` to its submodule, and a submodule that imports its
    parent package by name (``from service import create_app`` in ``service.cli``, while ``service``
    imports ``service.cli``) closes the cycle this check is for.
    """
    files = [path for package in packages for path in sorted((root / package).rglob("*.py"))]
    modules = {module_name(path, root): path for path in files}

    def known(name: str) -> str | None:
        """The longest prefix of ``name`` that is one of our modules (``rules.state.GameState`` → rules.state)."""
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        edges = graph.setdefault(module, {})
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in import_statements(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [known(alias.name) for alias in node.names]
            else:
                base = package.split(".")
                base = base[: len(base) - node.level + 1] if node.level else []
                source = ".".join([*base, *([node.module] if node.module else [])])
                targets = [known(f"{source}.{alias.name}") or known(source) for alias in node.names]
            for target in targets:
                if target is not None and target != module:
                    edges[target] = min(edges.get(target, node.lineno), node.lineno)
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while not component or component[-1] != node:
                        component.append(stack.pop())
                        on_stack.discard(component[-1])
                    components.append(sorted(component))
    return components


def cycles(graph: dict[str, dict[str, int]]) -> list[str]:
    """Each component of more than one module, with the imports that join it (``a:12 → b``)."""
    found = []
    for component in strongly_connected(graph):
        if len(component) > 1:
            inside = set(component)
            imports = [
                f"{module}:{line} → {target}"
                for module in component
                for target, line in sorted(graph[module].items())
                if target in inside
            ]
            found.append(" ↔ ".join(component) + " (" + ", ".join(imports) + ")")
    return found


def test_no_import_cycles_counting_the_imports_inside_functions() -> None:
    # An import inside a function is still a dependency: it only hides the cycle from the reader (issue 33).
    graph = import_graph()
    assert {"rules.state", "emails", "service.cli.admin", "worker"} <= set(graph), (
        "the graph reads the packages' modules"
    )
    assert not cycles(graph), "import cycles: move what both sides share to the module that owns it: " + "; ".join(
        cycles(graph)
    )


def test_the_cycle_check_counts_imports_inside_functions_and_parent_packages() -> None:
    # The check itself, on a graph whose cycles are known: a package and its submodule through a function's
    # import, a three-module ring; an import for the type checker alone and an edge down from a package
    # that re-exports are none.
    graph = {
        "pkg": {"pkg.cli": 3},
        "pkg.cli": {"pkg": 40},
        "pkg.a": {"pkg.b": 1},
        "pkg.b": {"pkg.c": 1},
        "pkg.c": {"pkg.a": 9},
        "pkg.d": {},
        "lib": {"lib.x": 1},
        "lib.x": {},
    }
    assert sorted(cycles(graph)) == [
        "pkg ↔ pkg.cli (pkg:3 → pkg.cli, pkg.cli:40 → pkg)",
        "pkg.a ↔ pkg.b ↔ pkg.c (pkg.a:1 → pkg.b, pkg.b:1 → pkg.c, pkg.c:9 → pkg.a)",
    ]
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from rules.schema import read_state\n"
        "def f():\n    from rules import troops\n"
        "class C:\n    def g(self):\n        import service.cli.admin\n"
    )
    assert sorted(
        (getattr(node, "module", ""), [alias.name for alias in node.names]) for node in import_statements(tree)
    ) == [("", ["service.cli.admin"]), ("rules", ["troops"]), ("typing", ["TYPE_CHECKING"])]


def test_the_import_graph_reads_imports_as_documented(tmp_path: Path) -> None:
    # import_graph's rules on a package of its own: a package's __init__ importing its submodule is an edge
    # down; a submodule importing a name of its parent package (inside a function) is an edge up, and so a
    # cycle; a relative import of a submodule is an edge to it; a type-only import is none.
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg.sub import helper\n\ndef create(): ...\n")
    (package / "sub.py").write_text("def helper():\n    from pkg import create\n    return create\n")
    (package / "other.py").write_text(
        "from typing import TYPE_CHECKING\nfrom . import sub\nif TYPE_CHECKING:\n    import pkg.lone\n"
    )
    (package / "lone.py").write_text("import os\n")
    graph = import_graph(("pkg",), root=tmp_path)
    assert graph == {"pkg": {"pkg.sub": 1}, "pkg.sub": {"pkg": 2}, "pkg.other": {"pkg.sub": 2}, "pkg.lone": {}}
    assert cycles(graph) == ["pkg ↔ pkg.sub (pkg:1 → pkg.sub, pkg.sub:2 → pkg)"]
