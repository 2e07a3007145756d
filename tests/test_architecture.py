"""The import contracts of ``pyproject.toml`` ([tool.importlinter]) hold: worker → service → emails → rules,
inside the service cli → web → domain → infra, no import cycles inside the service, and pure rules and mail.
A broken contract names the import that breaks it."""

from __future__ import annotations

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
