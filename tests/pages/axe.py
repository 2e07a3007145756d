"""axe-core (axe-playwright-python) on a page in the browser: the violations that matter, in words."""

from __future__ import annotations

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page

#: The impacts that fail a page (ARCHITECTURE §8: "axe: 0 serious or critical violations").
FAILING = ("serious", "critical")

_axe = Axe()


def axe_violations(page: Page) -> list[str]:
    """Each serious or critical violation on ``page`` as "rule (impact): element, element…"."""
    results = _axe.run(page)
    out = []
    for violation in results.response["violations"]:
        if violation["impact"] in FAILING:
            nodes = ", ".join(" ".join(node["target"]) for node in violation["nodes"][:5])
            out.append(f"{violation['id']} ({violation['impact']}): {violation['help']}: {nodes}")
    return out
