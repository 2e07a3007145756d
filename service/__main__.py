"""``python -m service`` is the ``smallworld`` command (used by ``smallworld serve``)."""

from service.console import cli

cli(prog_name="smallworld")
