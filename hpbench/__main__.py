"""``python -m hpbench``."""

from hpbench._cli.main import run

run()
