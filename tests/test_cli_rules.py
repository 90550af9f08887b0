"""The rule-side commands end to end: hash, freeze, diff, show, inventory, lint.

Most runs use click's CliRunner (in process); a few run the installed `rulecheck` script
as a real subprocess, to see exactly what a user sees (exit code, stdout, stderr).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engine.cli import main
from engine.ruleset import load_ruleset
from engine.syntax.parse import grammar_version

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "rules"
LINT_DATA = Path(__file__).parent / "data" / "lint"
RULECHECK = Path(sys.executable).parent / "rulecheck"

SMALL = """ruleset small version "1"

const min_R = 0.80  source "§4 B gate 2"
const cap = 90_000 tokens
kind task of campaign
  attr R: number
  attr tokens: tokens
gate median_ok source "§4 B gate 2, the gate"
  require median(t.R for t in task) >= min_R
gate tokens_ok require sum(t.tokens for t in task) <= cap
"""


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def shell(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RULECHECK), *args], capture_output=True, text=True, cwd=cwd, check=False
    )


@pytest.fixture
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.rules"
    path.write_text(SMALL, encoding="utf-8")
    return path


# ---- hash ----------------------------------------------------------------------------------


def test_hash_text_and_json_agree(small: Path) -> None:
    hashed = load_ruleset([small]).hashed
    text = run("hash", str(small))
    assert text.exit_code == 0
    assert text.stdout == "".join(
        f"{d.hash}  {d.kind}  {d.name}\n" for d in hashed.declarations
    ) + (f"ruleset {hashed.ruleset_hash}\n")
    data = json.loads(run("hash", str(small), "--format", "json").stdout)
    assert data == {
        "grammar_version": grammar_version(),
        "ruleset_hash": hashed.ruleset_hash,
        "declarations": [
            {"name": d.name, "kind": d.kind, "hash": d.hash} for d in hashed.declarations
        ],
    }


def test_hash_refuses_rules_with_errors() -> None:
    result = run("hash", str(LINT_DATA / "unknown_name.rules"))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "error[UNKNOWN_NAME]: unknown name `min_task_median`" in result.stderr


def test_hash_defaults_to_the_shipped_rules(inventory: dict[str, Any]) -> None:
    assert run("hash").stdout.endswith(f"ruleset {inventory['rules']['ruleset_hash']}\n")


# ---- show ----------------------------------------------------------------------------------


def test_show_prints_hash_kind_note_and_canonical_text(small: Path) -> None:
    hashed = load_ruleset([small]).hashed.by_name()["median_ok"]
    result = run("show", "median_ok", "--rules", str(small))
    assert result.exit_code == 0
    assert result.stdout == (
        "gate median_ok\n"
        f"hash    {hashed.hash}\n"
        f"defined {small}:8:1\n"
        "source  §4 B gate 2, the gate\n"
        "uses    min_R, task\n"
        "\n"
        "gate median_ok\n"
        '  source "§4 B gate 2, the gate"\n'
        "  require median(t.R for t in task) >= min_R\n"
    )


def test_show_json(small: Path) -> None:
    hashed = load_ruleset([small]).hashed.by_name()["cap"]
    data = json.loads(run("show", "cap", "--rules", str(small), "--format", "json").stdout)
    assert data == {
        "name": "cap",
        "kind": "const",
        "hash": hashed.hash,
        "file": str(small),
        "line": 4,
        "column": 1,
        "source": None,
        "uses": [],
        "text": "const cap = 90_000 tokens\n",
    }


def test_show_a_shipped_constant() -> None:
    result = run("show", "min_task_median_R")
    assert result.exit_code == 0
    assert result.stdout.startswith("const min_task_median_R\nhash    ")
    assert "source  000 §4 Final evidence and plan correctness, B gate 2\n" in result.stdout
    assert result.stdout.endswith(
        '\nconst min_task_median_R = 0.80\n  source "000 §4 Final evidence and plan correctness, '
        'B gate 2"\n'
    )


def test_show_unknown_name_suggests_the_closest(small: Path) -> None:
    result = run("show", "median_okk", "--rules", str(small))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "<input>: error[UNKNOWN_NAME]: no declaration named `median_okk`; "
        "did you mean `median_ok`?\n"
    )
    data = json.loads(run("show", "zzz", "--rules", str(small), "--format", "json").stdout)
    assert data["diagnostics"][0]["message"] == "no declaration named `zzz`"


# ---- inventory -----------------------------------------------------------------------------


def _runtime_dependencies() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [re.split(r"[\s<>=!~;\[]", spec, maxsplit=1)[0] for spec in project["dependencies"]]


@pytest.fixture(scope="module")
def inventory() -> dict[str, Any]:
    result = run("inventory", "--format", "json")
    assert result.exit_code == 0
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_inventory_json(inventory: dict[str, Any]) -> None:
    data = inventory
    assert data["rulecheck"] == metadata.version("rulecheck")
    assert data["runtime"]["python"] == ".".join(map(str, sys.version_info[:3]))
    assert data["runtime"]["implementation"] == "CPython"
    dependencies = _runtime_dependencies()
    assert dependencies
    for name in dependencies:
        assert data["dependencies"][name] == metadata.version(name), name
    grammar = (ROOT / "grammar" / "rules.lark").read_bytes()
    assert data["grammar"] == {
        "file": "rules.lark",
        "version": grammar_version(),
        "sha256": hashlib.sha256(grammar).hexdigest(),
    }
    hashed = run("hash", "--format", "json")
    assert data["rules"]["ruleset_hash"] == json.loads(hashed.stdout)["ruleset_hash"]
    assert data["rules"]["files"] == {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(RULES.glob("*.rules"))
    }
    schemas = sorted((ROOT / "manifests" / "schemas").iterdir())
    assert data["schemas"] == {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in schemas
        if path.suffix in (".yaml", ".json")
    }


def test_inventory_text_names_everything(inventory: dict[str, Any]) -> None:
    data = inventory
    text = run("inventory").stdout
    assert f"python          {data['runtime']['python']} (CPython)\n" in text
    for name, version in data["dependencies"].items():
        assert f"dependency      {name} {version}\n" in text
    assert f"grammar         {data['grammar']['sha256']}  rules.lark (version " in text
    assert f"ruleset         {data['rules']['ruleset_hash']}\n" in text
    for name, digest in data["schemas"].items():
        assert f"schema          {digest}  {name}\n" in text


def test_inventory_of_other_rules(small: Path) -> None:
    data = json.loads(run("inventory", "--rules", str(small), "--format", "json").stdout)
    assert data["rules"]["ruleset_hash"] == load_ruleset([small]).hashed.ruleset_hash
    assert list(data["rules"]["files"]) == [str(small)]


# ---- JSON output ---------------------------------------------------------------------------


def _commands(small: Path, tmp_path: Path) -> list[list[str]]:
    lock = tmp_path / "small.lock"
    return [
        ["lint", str(small)],
        ["lint", str(LINT_DATA / "three_errors.rules")],
        ["hash", str(small)],
        ["freeze", str(small), "--out", str(lock)],
        ["diff", str(small), str(small)],
        ["diff", str(lock), str(small)],
        ["show", "median_ok", "--rules", str(small)],
        ["show", "nope", "--rules", str(small)],
        ["inventory", "--rules", str(small)],
        ["hash", str(tmp_path / "missing.rules")],
    ]


def test_json_output_is_valid_and_byte_identical(small: Path, tmp_path: Path) -> None:
    for args in _commands(small, tmp_path):
        first = run(*args, "--format", "json")
        second = run(*args, "--format", "json")
        assert first.stdout == second.stdout, args
        assert first.exit_code == second.exit_code, args
        data = json.loads(first.stdout)
        assert isinstance(data, dict), args
        assert first.stdout.endswith("}\n"), args
        assert first.stdout == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
        if first.exit_code != 0 and "diagnostics" in data:
            assert data["ok"] is False


# ---- unreadable inputs ---------------------------------------------------------------------


def _missing_commands(missing: Path, small: Path, tmp_path: Path) -> list[list[str]]:
    return [
        ["lint", str(missing)],
        ["hash", str(missing)],
        ["freeze", str(missing), "--out", str(tmp_path / "out.lock")],
        ["diff", str(missing), str(small)],
        ["diff", str(small), str(missing)],
        ["diff", str(missing.with_suffix(".lock")), str(small)],
        ["fmt", "--check", str(missing)],
        ["show", "x", "--rules", str(missing)],
        ["inventory", "--rules", str(missing)],
    ]


def test_every_command_refuses_a_missing_path(small: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing.rules"
    for args in _missing_commands(missing, small, tmp_path):
        result = run(*args)
        assert result.exit_code == 2, args
        assert "error[FILE_UNREADABLE]" in result.stderr, args
        assert "Traceback" not in result.output, args
        data = json.loads(run(*args, "--format", "json").stdout)
        assert [d["code"] for d in data["diagnostics"]] == ["FILE_UNREADABLE"], args
    assert not (tmp_path / "out.lock").exists()


def test_every_command_refuses_a_folder_without_rule_files(small: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README.txt").write_text("no rules here")
    for args in _missing_commands(empty, small, tmp_path):
        if args[0] == "diff" and args[1].endswith(".lock"):
            continue
        result = run(*args)
        assert result.exit_code == 2, args
        assert f"cannot read `{empty}`: no `*.rules` files in this folder" in result.stderr, args


@pytest.mark.parametrize("command", sorted(main.commands))
def test_help(command: str) -> None:
    result = run(command, "--help")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"Usage: main {command} ")
    assert "--help" in result.stdout


def test_top_level_help_lists_the_rule_commands() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for command in ("lint", "hash", "freeze", "diff", "fmt", "show", "inventory"):
        assert re.search(rf"^  {command}\b", result.stdout, re.MULTILINE), command


# ---- real processes ------------------------------------------------------------------------


def test_process_lint_of_the_shipped_rules(tmp_path: Path) -> None:
    lint = shell("lint", cwd=tmp_path)  # no argument: the shipped rules
    assert lint.returncode == 0
    assert "error[" not in lint.stderr
    assert re.fullmatch(r"\d+ files, \d+ declarations: ok( \(\d+ warnings\))?\n", lint.stdout)


def test_process_lint_errors_as_json(tmp_path: Path) -> None:
    path = LINT_DATA / "unit_compare.rules"
    result = shell("lint", str(path), "--format", "json", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == ""
    diagnostics = json.loads(result.stdout)["diagnostics"]
    (diagnostic,) = [d for d in diagnostics if d["severity"] == "error"]
    assert diagnostic["code"] == "UNIT_MISMATCH"
    assert diagnostic["location"]["file"] == str(path)
    assert (diagnostic["location"]["line"], diagnostic["location"]["column"]) == (4, 16)


def test_process_lint_errors_as_text(tmp_path: Path) -> None:
    path = LINT_DATA / "unknown_name.rules"
    result = shell("lint", str(path), cwd=tmp_path)
    assert result.returncode == 1
    assert re.fullmatch(r"1 file, 2 declarations: 1 error( \(\d+ warnings?\))?\n", result.stdout)
    assert (
        f"{path}:3:31: error[UNKNOWN_NAME]: unknown name `min_task_median` (rule `median_ok`)\n"
        "    3 | gate median_ok require 0.9 >= min_task_median\n"
        "      |                               ^^^^^^^^^^^^^^^\n"
        "  = did you mean `min_task_median_R`?\n"
        "\n"
    ) in result.stderr


def test_process_missing_path_has_no_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "missing.rules"
    result = shell("hash", str(missing), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"{missing}: error[FILE_UNREADABLE]: cannot read `{missing}`: no such file or folder\n"
    )


def test_process_freeze_then_diff(tmp_path: Path, small: Path) -> None:
    lock = tmp_path / "small.lock"
    frozen = shell("freeze", str(small), "--out", str(lock), cwd=tmp_path)
    assert frozen.returncode == 0, frozen.stderr
    assert frozen.stdout.startswith(f"wrote {lock}: 5 declarations, ruleset ")
    small.write_text(SMALL.replace("0.80", "0.85"), encoding="utf-8")
    moved = shell("diff", str(lock), str(small), cwd=tmp_path)
    assert moved.returncode == 1
    assert "    0.80 -> 0.85: stricter\n" in moved.stdout


def test_one_file_named_twice_loads_once(tmp_path: Path) -> None:
    rules = tmp_path / "one.rules"
    rules.write_text('ruleset one version "1"\n\nconst c = 1\n  source "x"\n', encoding="utf-8")
    alias = tmp_path / "alias.rules"
    alias.symlink_to(rules)
    result = CliRunner().invoke(main, ["lint", str(rules), str(alias)])
    assert result.exit_code == 0, result.output
    assert "1 file, 1 declaration: ok" in result.output
