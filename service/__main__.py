"""``python -m service`` is the ``smallworld`` command (used by ``smallworld serve``)."""

from service.cli import cli

cli(prog_name="smallworld")
