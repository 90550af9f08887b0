"""`python -m engine`: the `rulecheck` command, for an environment without its script."""

from engine.cli import main

main(prog_name="rulecheck")
