"""The import contracts of ``pyproject.toml`` ([tool.importlinter]) hold: worker → service → emails → rules,
inside the service cli → web → domain → infra, no import cycles inside the service, and pure rules and mail.
A broken contract names the import that breaks it."""

from __future__ import annotations

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
