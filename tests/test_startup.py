"""What a command imports: a process that checks JSON answers itself loads no YAML reader,
no cerberus and no process pool (together about a fifth of its imports), and a YAML
document still loads the YAML reader when it needs it. Measured with the caches warm, as
every run after the first is (a cold cache compiles the rules' schemas, YAML ones too)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
INDEX = REPO / "tests" / "data" / "answers" / "index.jsonl"


def _modules_after(args: list[str], cache: Path) -> set[str]:
    """The top-level modules imported once `rulecheck ARGS` has run in one process, the
    caches in `cache` warmed by a run before it."""
    script = "\n".join(
        [
            "import io, sys, contextlib",
            "from engine.cli import main",
            f"sys.argv = ['rulecheck', *{args!r}]",
            "with contextlib.redirect_stdout(io.StringIO()):",
            "    try:\n        main()\n    except SystemExit:\n        pass",
            "print(' '.join(sorted({name.split('.')[0] for name in sys.modules})))",
        ]
    )
    environment = {**os.environ, "RULECHECK_CACHE_DIR": str(cache)}
    environment.pop("RULECHECK_PARSE_CACHE", None)  # on: the caches are what is measured
    for _warm_then_measured in range(2):
        run = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=300,
            env=environment,
        )
        assert run.returncode == 0, run.stderr
    return set(run.stdout.split())


def test_checking_json_answers_imports_no_yaml_reader(tmp_path: Path) -> None:
    imported = _modules_after(["answers", str(INDEX), "--format", "json"], tmp_path / "cache")
    assert "engine" in imported  # the command ran in this process
    assert {"yaml", "cerberus", "networkx", "multiprocessing", "concurrent"}.isdisjoint(imported)


def test_a_yaml_document_imports_the_yaml_reader_when_read(tmp_path: Path) -> None:
    rules = tmp_path / "notes.rules"
    rules.write_text(
        'ruleset notes version "1"\n\nkind note of notes\n  records notes "/notes"\n'
        "  key id\n\ngate some_notes\n  require count(n in note) >= 1\n"
    )
    data = tmp_path / "notes.yaml"
    data.write_text("notes:\n  - id: N1\n")
    args = ["evaluate", "notes", "--rules", str(rules), f"--input=notes={data}"]
    assert "yaml" in _modules_after(args, tmp_path / "cache")
