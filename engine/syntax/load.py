"""Find and parse rule files: a path is a `.rules` file or a folder of them."""

from __future__ import annotations

import stat
from collections.abc import Sequence
from pathlib import Path

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError, unreadable
from engine.limits import os_error, shown_path
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
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            raise unreadable(shown_path(path), "no such file or folder") from None
        except OSError as error:  # a name too long, no permission, a link loop...
            raise os_error(path, error) from None
        except ValueError:  # a NUL byte in the name
            raise unreadable(shown_path(path), "invalid file name") from None
        if stat.S_ISDIR(mode):
            try:
                inside = sorted(p for p in path.glob(f"*{RULE_SUFFIX}") if p.is_file())
            except OSError as error:
                raise os_error(path, error) from None
            if not inside:
                raise unreadable(str(path), f"no `*{RULE_SUFFIX}` files in this folder")
            found += inside
        else:
            found.append(path)  # a FIFO or device is refused, typed, when it is read
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
            if _is_lock(path):
                raise _lock_given_as_rules(path) from None
            diagnostics += error.diagnostics
    return files, diagnostics


def _is_lock(path: Path) -> bool:
    """Whether a file that is no rule file is a rules lock (`rulecheck freeze` writes YAML
    whose first key is `lock_version`)."""
    try:
        with path.open("rb") as stream:
            head = stream.read(64)
    except OSError:
        return False
    return head.lstrip().startswith(b"lock_version:")


def _lock_given_as_rules(path: Path) -> RulecheckError:
    message = f"`{shown_path(path)}` is a rules lock, not a rule file"
    hint = (
        "give the rule files (or their folder) as the rules, and pin the run to the lock "
        f"with `--lock {shown_path(path)}`; `rulecheck diff {shown_path(path)} RULES` compares them"
    )
    diagnostic = Diagnostic("RULES_ARE_LOCK", message, Location(shown_path(path)), hint=hint)
    return RulecheckError([diagnostic], ExitCode.USAGE)
