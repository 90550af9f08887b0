"""Running the `rulecheck` CLI in process for the tests (not a test module)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from engine.cli import main

REPO = Path(__file__).resolve().parent.parent


class CliRun:
    """One CLI invocation: exit code, stdout, stderr and the parsed JSON (if any)."""

    def __init__(self, args: list[str]) -> None:
        result = CliRunner().invoke(main, args)
        self.exit_code = result.exit_code
        self.stdout = result.stdout
        self.stderr = result.stderr
        self.exception = result.exception
        try:
            self.data: Any = json.loads(self.stdout)
        except ValueError:
            self.data = None

    def assert_clean(self) -> None:
        """No Python traceback leaked into the output, and no uncaught exception."""
        assert "Traceback" not in self.stdout + self.stderr
        assert self.exception is None or isinstance(self.exception, SystemExit)


def copy_shipped_rules(target: Path) -> Path:
    """A copy of rules/ at `target`, with manifests/schemas/ beside it where the protocols'
    schema paths (`../manifests/schemas/...`) lead; returns `target`."""
    shutil.copytree(REPO / "rules", target)
    schemas = REPO / "manifests" / "schemas"
    shutil.copytree(schemas, target.parent / "manifests" / "schemas", dirs_exist_ok=True)
    return target
