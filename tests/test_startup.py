"""What a command imports: a process that checks JSON answers itself loads no YAML reader,
no cerberus and no process pool (together about a fifth of its imports), a YAML
document still loads the YAML reader when it needs it, and cerberus only when a
document fails its compiled check. Measured with the caches warm, as
every run after the first is (a cold cache compiles the rules' schemas, YAML ones too)."""

from __future__ import annotations

import json
import os
import shutil
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


CAMPAIGN = REPO / "controls" / "campaign"


def _broken_campaign(folder: Path) -> Path:
    """A copy of the shipped campaign whose adjudication manifest (a cerberus schema)
    gives its `frozen_at` as a number."""
    shutil.copytree(CAMPAIGN, folder)
    manifest = folder / "adjudication_manifest.yaml"
    lines = manifest.read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("frozen_at: ")
    manifest.write_text("\n".join(["frozen_at: 12", *lines[1:]]), encoding="utf-8")
    return folder


def test_a_campaign_whose_yaml_passes_its_compiled_check_never_imports_cerberus(
    tmp_path: Path,
) -> None:
    imported = _modules_after(["check", str(CAMPAIGN), "--format", "json"], tmp_path / "cache")
    assert "yaml" in imported and "cerberus" not in imported
    broken = _broken_campaign(tmp_path / "campaign")
    imported = _modules_after(["check", str(broken), "--format", "json"], tmp_path / "cache")
    assert "cerberus" in imported  # a refused document is reported in cerberus's words


def test_cerberus_reports_a_refused_yaml_document_alike_with_cold_and_warm_caches(
    tmp_path: Path,
) -> None:
    broken = _broken_campaign(tmp_path / "campaign")
    environment = {**os.environ, "RULECHECK_CACHE_DIR": str(tmp_path / "cache")}
    environment.pop("RULECHECK_PARSE_CACHE", None)
    command = [sys.executable, "-m", "engine.cli", "check", str(broken), "--format", "json"]
    cold, warm = (
        subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=environment)
        for _ in range(2)
    )
    assert (cold.returncode, cold.stdout) == (warm.returncode, warm.stdout) == (1, cold.stdout)
    [found] = [d for d in json.loads(warm.stdout)["diagnostics"] if d["code"] == "DOCUMENT_SCHEMA"]
    assert found["message"] == "`/frozen_at`: must be of string type"
    assert found["location"]["line"] == 1
