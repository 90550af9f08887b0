"""Running the `rulecheck` CLI in process for the tests (not a test module)."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from engine.cli import main


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
