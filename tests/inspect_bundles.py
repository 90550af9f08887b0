"""The imported folders the case files of the pack `rules/inspect/` check.

    python tests/inspect_bundles.py           # rewrite rules/inspect/tests/{single,arms}/

Writes real inspect_ai logs (`tests/inspect_logs.py`, offline, in its own process) and
imports them with `rulecheck import inspect`, as a user does: `single/` is the admitted
run of the test suite's task, `arms/` its two arms (`baseline`, `candidate`). The case
file `rules/inspect/tests/inspect.cases.yaml` then edits copies of them, so the pack's
rules can be tested without inspect_ai installed. The logs' eval ids are random: run
this only when the import's layout changes (`tests/test_inspect.py` says when).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "rules" / "inspect" / "tests"
RULECHECK = Path(sys.executable).parent / "rulecheck"
BUNDLES = {
    "single": ["admitted.eval"],
    "arms": ["--arm", "baseline=arm_base.eval", "--arm", "candidate=arm_cand.eval"],
}


def build() -> None:
    """Write the logs, then import each bundle into `TARGET` (its old copy replaced)."""
    with tempfile.TemporaryDirectory(prefix="rulecheck-inspect-") as name:
        folder = Path(name)
        env = {**os.environ, "HOME": str(folder / "home"), "NO_COLOR": "1"}
        cases = ["admitted", "arm_base", "arm_cand"]
        script = ROOT / "tests" / "inspect_logs.py"
        subprocess.run([sys.executable, str(script), str(folder), *cases], check=True, env=env)
        for bundle, arguments in BUNDLES.items():
            out = TARGET / bundle
            shutil.rmtree(out, ignore_errors=True)
            command = [str(RULECHECK), "import", "inspect", *arguments, "--out", str(out)]
            subprocess.run(command, check=True, cwd=folder)  # the logs named as given


if __name__ == "__main__":
    build()
