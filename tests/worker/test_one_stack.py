"""The worker tests build their stack in one place (tests/worker/conftest.py): no test module makes its own
worker stack, child process environment, app mailing to the test's SMTP server, or wait loop."""

from __future__ import annotations

import ast
from pathlib import Path

#: What only tests/worker/conftest.py may call or define, and the shared fixture or function to use instead.
HOMES = {
    "worker_stack": "the `stack` fixture, with the module's WORKER_STACK",
    "service_environment": "the `app_and_environment` fixture",
    "child_environment": "the `app_and_environment` fixture",
    "wait_until": "tests.worker.conftest.wait_until",
    "wait_for": "tests.worker.conftest.wait_until",
    "stack": "the `stack` fixture, with the module's WORKER_STACK",
    "pg_app": "the `pg_mail_app` fixture",
}


def second_homes(source: str) -> list[str]:
    """The names of :data:`HOMES` that ``source`` defines, or calls other than by their shared fixture."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name in HOMES:
            found.append(f"defines {node.name} (use {HOMES[node.name]})")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("worker_stack", "service_environment", "child_environment"):
                found.append(f"calls {node.func.id} (use {HOMES[node.func.id]})")
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "extensions"
            and isinstance(node.ctx, ast.Store)
        ):
            # app.extensions["test.smtp"] = ...: an app mailing to the test's SMTP server, made by hand.
            found.append("stores app.extensions[...] (use the `mail_app` or `pg_mail_app` fixture)")
    return found


def test_no_worker_test_module_builds_its_own_stack() -> None:
    folder = Path(__file__).parent
    found = {
        path.name: homes
        for path in sorted(folder.glob("test_*.py"))
        if path.name != Path(__file__).name and (homes := second_homes(path.read_text()))
    }
    assert not found, found


def test_the_check_finds_a_stack_made_by_hand() -> None:
    made_by_hand = """
def wait_until(condition): ...
def test_it(make_app, smtp_server):
    app = make_app(**smtp_server.settings)
    app.extensions["test.smtp"] = smtp_server
    env = service_environment(app.instance_path)
"""
    assert len(second_homes(made_by_hand)) == 3
