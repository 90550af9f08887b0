"""Find and parse rule files: a path is a `.rules` file or a folder of them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from engine.errors import Diagnostic, ExitCode, RulecheckError, unreadable
from engine.syntax import ast
from engine.syntax.parse import parse_file

RULE_SUFFIX = ".rules"


def rule_paths(paths: Sequence[Path]) -> list[Path]:
    """The rule files named by `paths`, folders expanded (sorted), duplicates dropped.

    Raises:
        RulecheckError: (exit 2) for a path that does not exist or a folder with no rule files.
    """
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.glob(f"*{RULE_SUFFIX}") if p.is_file())
            if not inside:
                raise unreadable(str(path), f"no `*{RULE_SUFFIX}` files in this folder")
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            raise unreadable(str(path), "no such file or folder")
    unique: dict[Path, Path] = {}
    for path in found:  # one file named twice (relative and absolute, or via a link) loads once
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def load_rule_files(paths: Sequence[Path]) -> tuple[list[ast.RuleFile], list[Diagnostic]]:
    """Parse every rule file; syntax errors are collected so all files get reported."""
    files: list[ast.RuleFile] = []
    diagnostics: list[Diagnostic] = []
    for path in rule_paths(paths):
        try:
            files.append(parse_file(path))
        except RulecheckError as error:
            if error.exit_code == ExitCode.USAGE:
                raise
            diagnostics += error.diagnostics
    return files, diagnostics
