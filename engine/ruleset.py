"""The rule side of the pipeline, composed: paths -> parse -> check -> hash."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.check import CheckedRuleset, check_rules
from engine.errors import Diagnostic, ExitCode, RulecheckError, sorted_diagnostics
from engine.gcpolicy import collector_paused
from engine.syntax.load import load_rule_files
from engine.syntax.parse import grammar_version

if TYPE_CHECKING:  # lint does not hash: the hashing module is imported by load_ruleset
    from engine.freeze.hashing import HashedRuleset


@dataclass(frozen=True, slots=True)
class Ruleset:
    """A checked, hashed ruleset: what every later stage evaluates."""

    checked: CheckedRuleset
    hashed: HashedRuleset


def lint_paths(paths: Sequence[Path]) -> tuple[CheckedRuleset, list[Diagnostic]]:
    """Parse and check rule files; returns every diagnostic, syntax errors included."""
    with collector_paused():  # see engine/gcpolicy.py
        files, syntax = load_rule_files(paths)
        checked = check_rules(files)
        return checked, sorted_diagnostics([*syntax, *checked.diagnostics])


def load_ruleset(paths: Sequence[Path]) -> Ruleset:
    """A ruleset ready to evaluate.

    Raises:
        RulecheckError: exit 1 with every diagnostic when any rule file has an error.
    """
    from engine.freeze.hashing import hash_ruleset

    with collector_paused():  # parsing, checking and hashing: see engine/gcpolicy.py
        checked, diagnostics = lint_paths(paths)
        errors = [d for d in diagnostics if d.severity == "error"]
        if errors:
            raise RulecheckError(errors, ExitCode.REFUSED)
        return Ruleset(checked, hash_ruleset(checked, grammar_version()))
