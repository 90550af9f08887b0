"""`rulecheck freeze` (the YAML rules lock) and `rulecheck diff` (what changed, and which way).

A lock records, per declaration, its name, kind, hash, span, source note and canonical text,
plus the ruleset hash and grammar version. Reading it back re-parses every text, checks
that each entry's text is that declaration, and re-hashes: any tampering is refused with
exit 1 and a located error. `diff` compares rules and/or locks by declaration hash and
judges every moved threshold as stricter or looser.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rulegen import changed_literal, number_sites, replace_spans, rulesets

from engine.cli import main
from engine.errors import RulecheckError
from engine.freeze.lock import read_lock
from engine.syntax.parse import grammar_version, parse_text

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "rules"

BASE = """ruleset thresholds version "1"

# Constants read by gates in both directions.
const min_R = 0.80  source "§4 B gate 2"
const max_R = 0.95
const both = 0.5
const base_tokens = 40_000 tokens
const token_cap = base_tokens * 2
const rate = 4 USD/Mtokens
const spare = 5

metric cost(used: tokens) = rate * used

kind task of campaign
  attr R: number
  attr tokens: tokens
kind attempt of campaign
  attr tokens: tokens
  attr started: number
  edge attempt_of -> task

gate floor require median(t.R for t in task) >= min_R
gate ceiling require max(t.R for t in task) <= max_R
gate literal_floor require median(t.R for t in task) >= 0.5
gate literal_ceiling require max(t.R for t in task) <= 0.99
gate exclusive require min(t.R for t in task) > 0.1
gate strict_ceiling require min(t.R for t in task) < 0.9
gate uses_both_low require min(t.R for t in task) >= both
gate uses_both_high require max(t.R for t in task) <= both
gate spend_floor require cost(sum(t.tokens for t in task)) >= 1 USD
gate derived_floor require sum(t.tokens for t in task) >= token_cap
gate conditional_floor
  require median(t.R for t in task) >= (if count(t in task) > 3 then 0.5 else 0.6)

budget per_task
  for t in task
  ledger a in t <- attempt_of order by a.started
  total a.tokens <= 90_000 tokens
"""


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def freeze(rules: Path, out: Path) -> Path:
    result = run("freeze", str(rules), "--out", str(out))
    assert result.exit_code == 0, result.output
    return out


def diff_json(old: Path, new: Path) -> tuple[int, dict[str, Any]]:
    result = run("diff", str(old), str(new), "--format", "json")
    return result.exit_code, json.loads(result.stdout)


def changes(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {change["name"]: change for change in report["changes"]}


# ---- freeze --------------------------------------------------------------------------------


def test_freeze_writes_a_complete_lock(tmp_path: Path) -> None:
    rules = write(tmp_path, "base.rules", BASE)
    lock_path = tmp_path / "rules.lock"
    result = run("freeze", str(rules), "--out", str(lock_path))
    assert result.exit_code == 0
    hashed = run("hash", str(rules), "--format", "json")
    expected = json.loads(hashed.stdout)
    assert result.stdout == (
        f"wrote {lock_path}: {len(expected['declarations'])} declarations, "
        f"ruleset {expected['ruleset_hash']}\n"
    )
    lock = yaml.safe_load(lock_path.read_text(encoding="utf-8"))
    assert list(lock) == ["lock_version", "grammar_version", "ruleset_hash", "declarations"]
    assert lock["lock_version"] == 2
    assert lock["grammar_version"] == grammar_version()
    assert lock["ruleset_hash"] == expected["ruleset_hash"]
    assert [(e["name"], e["kind"], e["hash"]) for e in lock["declarations"]] == [
        (d["name"], d["kind"], d["hash"]) for d in expected["declarations"]
    ]
    first = lock["declarations"][0]
    assert first == {
        "name": "min_R",
        "kind": "const",
        "hash": expected["declarations"][0]["hash"],
        "file": str(rules),
        "line": 4,
        "column": 1,
        "end_line": 4,
        "end_column": 41,
        "source": "§4 B gate 2",
        "text": 'const min_R = 0.80\n  source "§4 B gate 2"\n',
        "files": {},
    }
    source = parse_text(BASE, str(rules))
    for entry, decl in zip(lock["declarations"], source.declarations, strict=True):
        assert set(entry) == {
            "name", "kind", "hash", "file", "line", "column", "end_line", "end_column",
            "source", "text", "files",
        }  # fmt: skip
        assert (entry["line"], entry["column"]) == (decl.span.line, decl.span.column)
        assert (entry["end_line"], entry["end_column"]) == (
            decl.span.end_line,
            decl.span.end_column,
        )
        assert entry["source"] == decl.note
        reparsed = parse_text(f'ruleset x version "1"\n{entry["text"]}', "lock")
        assert reparsed.declarations == (decl,)


def test_freeze_is_deterministic(tmp_path: Path) -> None:
    rules = write(tmp_path, "base.rules", BASE)
    one = freeze(rules, tmp_path / "one.lock").read_bytes()
    two = freeze(rules, tmp_path / "two.lock").read_bytes()
    assert one == two


def test_a_lock_reads_back_and_verifies(tmp_path: Path) -> None:
    rules = write(tmp_path, "base.rules", BASE)
    lock_path = freeze(rules, tmp_path / "rules.lock")
    locked = read_lock(lock_path)
    hashed = json.loads(run("hash", str(rules), "--format", "json").stdout)
    assert locked.ruleset_hash == hashed["ruleset_hash"]
    assert locked.grammar_version == grammar_version()
    assert locked.hashes == {d["name"]: d["hash"] for d in hashed["declarations"]}
    assert locked.declarations == parse_text(BASE, "x").declarations


def test_a_kind_with_records_and_key_survives_the_lock(tmp_path: Path) -> None:
    text = """ruleset kinds version "1"
kind claim of answer
  records answer "/final/claims", "/draft/claims"
  key claim_id
  attr claim_id: text
"""
    rules = write(tmp_path, "kinds.rules", text)
    lock_path = freeze(rules, tmp_path / "kinds.lock")
    assert read_lock(lock_path).declarations == parse_text(text, "x").declarations


def test_the_shipped_rules_freeze_and_verify(tmp_path: Path) -> None:
    lock_path = freeze(RULES, tmp_path / "shipped.lock")
    exit_code, report = diff_json(lock_path, RULES)
    assert (exit_code, report["identical"], report["changes"]) == (0, True, [])


def test_freeze_into_a_missing_folder_creates_it(tmp_path: Path) -> None:
    rules = write(tmp_path, "base.rules", BASE)
    out = tmp_path / "no" / "such" / "dir.lock"
    result = run("freeze", str(rules), "--out", str(out), "--format", "json")
    assert result.exit_code == 0
    assert diff_json(out, rules)[0] == 0


def test_freeze_where_no_file_can_be_written_says_cannot_write(tmp_path: Path) -> None:
    rules = write(tmp_path, "base.rules", BASE)
    out = rules / "dir.lock"  # under a file: no folder can be made there
    result = run("freeze", str(rules), "--out", str(out), "--format", "json")
    assert result.exit_code == 2
    (diagnostic,) = json.loads(result.stdout)["diagnostics"]
    assert diagnostic["code"] == "FILE_UNWRITABLE"
    assert diagnostic["message"].startswith(f"cannot write `{out}`")
    assert diagnostic["location"] == {"file": str(out)}


def test_freeze_refuses_rules_with_errors(tmp_path: Path) -> None:
    rules = write(tmp_path, "bad.rules", 'ruleset b version "1"\nconst x = y\n')
    out = tmp_path / "bad.lock"
    result = run("freeze", str(rules), "--out", str(out))
    assert result.exit_code == 1
    assert "error[UNKNOWN_NAME]" in result.stderr
    assert not out.exists()


# ---- tampered locks ------------------------------------------------------------------------


@pytest.fixture
def lock_text(tmp_path: Path) -> str:
    rules = write(tmp_path, "base.rules", BASE)
    return freeze(rules, tmp_path / "good.lock").read_text(encoding="utf-8")


def _refused(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    """Write a lock, check that both `read_lock` and `diff` refuse it, return diagnostics."""
    path = write(tmp_path, "tampered.lock", text)
    with pytest.raises(RulecheckError) as caught:
        read_lock(path)
    assert caught.value.exit_code == 1
    result = run("diff", str(path), str(tmp_path / "base.rules"), "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False
    for diagnostic in report["diagnostics"]:
        assert diagnostic["location"]["file"] == str(path)
    text_result = run("diff", str(path), str(tmp_path / "base.rules"))
    assert text_result.exit_code == 1
    assert "Traceback" not in text_result.output
    found: list[dict[str, Any]] = report["diagnostics"]
    return found


def _where(diagnostic: dict[str, Any]) -> tuple[str, str | None]:
    return diagnostic["code"], diagnostic["location"].get("pointer")


def test_edited_text_is_tampering(tmp_path: Path, lock_text: str) -> None:
    edited = lock_text.replace("const max_R = 0.95", "const max_R = 0.99")
    assert edited != lock_text
    found = _refused(tmp_path, edited)
    # max_R and the gate that uses it no longer hash as recorded
    names = [entry["name"] for entry in yaml.safe_load(lock_text)["declarations"]]
    assert set(map(_where, found)) == {
        ("LOCK_TAMPERED", f"/declarations/{names.index('ceiling')}/hash"),
        ("LOCK_TAMPERED", f"/declarations/{names.index('max_R')}/hash"),
        ("LOCK_TAMPERED", "/ruleset_hash"),
    }
    messages = {d["message"] for d in found}
    assert "declaration `max_R` does not hash to its recorded hash" in messages
    assert "the ruleset hash does not match its declarations" in messages


def test_edited_hash_is_tampering(tmp_path: Path, lock_text: str) -> None:
    entry = yaml.safe_load(lock_text)["declarations"][2]
    flipped = entry["hash"][:-1] + ("0" if entry["hash"][-1] != "0" else "1")
    found = _refused(tmp_path, lock_text.replace(entry["hash"], flipped))
    assert [_where(d) for d in found] == [("LOCK_TAMPERED", "/declarations/2/hash")]
    assert (
        found[0]["message"] == f"declaration `{entry['name']}` does not hash to its recorded hash"
    )


def test_edited_ruleset_hash_is_tampering(tmp_path: Path, lock_text: str) -> None:
    edited = re.sub(r"ruleset_hash: [0-9a-f]{64}", "ruleset_hash: " + "ab" * 32, lock_text)
    found = _refused(tmp_path, edited)
    assert [_where(d) for d in found] == [("LOCK_TAMPERED", "/ruleset_hash")]


def test_edited_grammar_version_is_tampering(tmp_path: Path, lock_text: str) -> None:
    edited = lock_text.replace(f"grammar_version: '{grammar_version()}'", "grammar_version: '99'")
    assert edited != lock_text
    assert [_where(d) for d in _refused(tmp_path, edited)] == [("LOCK_TAMPERED", "/ruleset_hash")]


def test_a_text_holding_two_declarations_is_tampering(tmp_path: Path, lock_text: str) -> None:
    edited = lock_text.replace(
        "text: 'const max_R = 0.95\n\n    '",
        "text: 'const max_R = 0.95\n\n    const smuggled = 1\n\n    '",
    )
    assert edited != lock_text
    found = _refused(tmp_path, edited)
    assert [_where(d) for d in found] == [("LOCK_TAMPERED", "/declarations/1/text")]
    assert found[0]["message"] == "the text of `max_R` must hold exactly one declaration, found 2"


def test_a_text_naming_another_declaration_is_tampering(tmp_path: Path, lock_text: str) -> None:
    found = _refused(tmp_path, lock_text.replace("name: max_R", "name: other_R"))
    assert [_where(d) for d in found] == [("LOCK_TAMPERED", "/declarations/1/text")]
    assert found[0]["message"] == "the text of `other_R` declares `max_R`"


def test_a_wrong_kind_is_tampering(tmp_path: Path, lock_text: str) -> None:
    edited = lock_text.replace("name: max_R\n  kind: const", "name: max_R\n  kind: gate")
    found = _refused(tmp_path, edited)
    assert [_where(d) for d in found] == [("LOCK_TAMPERED", "/declarations/1/kind")]
    assert found[0]["message"] == "`max_R` is recorded as a gate but its text declares a const"


def test_a_note_that_disagrees_with_the_text_is_tampering(tmp_path: Path, lock_text: str) -> None:
    found = _refused(tmp_path, lock_text.replace("source: §4 B gate 2", "source: §9"))
    assert [_where(d) for d in found] == [("LOCK_TAMPERED", "/declarations/0/source")]


def test_a_text_that_does_not_parse_is_tampering(tmp_path: Path, lock_text: str) -> None:
    found = _refused(tmp_path, lock_text.replace("const max_R = 0.95", "const max_R = = 0.95"))
    assert [_where(d) for d in found] == [("LOCK_TAMPERED", "/declarations/1/text")]
    assert found[0]["message"] == "the text of `max_R` does not parse: unexpected `=`"


def test_a_text_that_does_not_check_is_tampering(tmp_path: Path, lock_text: str) -> None:
    found = _refused(tmp_path, lock_text.replace("const max_R = 0.95", "const max_R = nope"))
    assert [_where(d) for d in found] == [("LOCK_TAMPERED", "/declarations/1/text")]
    assert found[0]["message"] == "the declarations do not check: unknown name `nope`"


def test_invalid_yaml_is_located(tmp_path: Path, lock_text: str) -> None:
    found = _refused(tmp_path, lock_text.replace("declarations:\n", "declarations: [\n", 1))
    assert len(found) == 1
    assert found[0]["code"] == "LOCK_INVALID_YAML"
    assert found[0]["location"]["line"] == 5
    assert "column" in found[0]["location"]


def test_duplicate_yaml_key_is_located(tmp_path: Path, lock_text: str) -> None:
    edited = lock_text.replace("lock_version: 2\n", "lock_version: 2\nlock_version: 2\n", 1)
    found = _refused(tmp_path, edited)
    assert found == [
        {
            "code": "YAML_DUPLICATE_KEY",
            "severity": "error",
            "message": "key `lock_version` appears twice in the same mapping",
            "location": {
                "file": str(tmp_path / "tampered.lock"),
                "line": 2,
                "column": 1,
                "pointer": "",
            },
        }
    ]


def test_missing_field_is_a_schema_error(tmp_path: Path, lock_text: str) -> None:
    found = _refused(tmp_path, lock_text.replace("  source: §4 B gate 2\n", "", 1))
    assert [_where(d) for d in found] == [("LOCK_SCHEMA", "/declarations/0/source")]
    assert found[0]["message"] == "`/declarations/0/source`: required field"
    assert found[0]["location"]["line"] == 5


def test_a_document_that_is_not_a_mapping_is_a_schema_error(tmp_path: Path) -> None:
    write(tmp_path, "base.rules", BASE)
    found = _refused(tmp_path, "- just\n- a list\n")
    assert [_where(d) for d in found] == [("LOCK_SCHEMA", "")]


def test_a_missing_lock_is_unreadable(tmp_path: Path) -> None:
    write(tmp_path, "base.rules", BASE)
    result = run("diff", str(tmp_path / "gone.lock"), str(tmp_path / "base.rules"))
    assert result.exit_code == 2
    assert "error[FILE_UNREADABLE]" in result.stderr


# ---- diff: identical -----------------------------------------------------------------------


def test_identical_rules_rules(tmp_path: Path) -> None:
    one = write(tmp_path, "one.rules", BASE)
    two = write(tmp_path, "two.rules", BASE)
    result = run("diff", str(one), str(two))
    assert result.exit_code == 0
    assert "identical: every declaration hash is equal\n" in result.stdout
    assert result.stdout.endswith("0 added, 0 removed, 0 changed\n")


def test_identical_lock_rules_and_lock_lock(tmp_path: Path) -> None:
    rules = write(tmp_path, "base.rules", BASE)
    one = freeze(rules, tmp_path / "one.lock")
    two = freeze(rules, tmp_path / "two.yaml")
    for old, new in ((one, rules), (rules, one), (one, two)):
        exit_code, report = diff_json(old, new)
        assert exit_code == 0
        assert report["identical"] is True
        assert report["changes"] == []
        assert report["old"]["ruleset_hash"] == report["new"]["ruleset_hash"]


def test_comments_and_layout_make_no_difference(tmp_path: Path) -> None:
    old = write(tmp_path, "old.rules", BASE)
    edited = (
        BASE.replace("# Constants read by gates in both directions.", "# Reworded comment.")
        .replace("const max_R = 0.95", "# a new comment\nconst    max_R=0.950   # trailing")
        .replace("total a.tokens <= 90_000 tokens", "total a.tokens\n      <= 90000 tokens")
        .replace("gate floor require", "gate floor\n  require")
    )
    new = write(tmp_path, "new.rules", edited)
    assert edited != BASE
    exit_code, report = diff_json(old, new)
    assert (exit_code, report["changes"], report["note_changes"]) == (0, [], [])
    lock = freeze(old, tmp_path / "old.lock")
    assert diff_json(lock, new)[0] == 0


def test_declaration_order_makes_no_difference(tmp_path: Path) -> None:
    old = write(tmp_path, "old.rules", BASE)
    _, _, rest = BASE.partition("# Constants")
    folder = tmp_path / "split"
    folder.mkdir()
    gates = rest[rest.index("gate floor") :]
    write(folder, "a.rules", 'ruleset a version "2"\n' + gates)
    write(
        folder, "b.rules", 'ruleset b version "3"\n# Constants' + rest[: rest.index("gate floor")]
    )
    assert diff_json(old, folder)[0] == 0


def test_a_note_change_is_reported_but_identical(tmp_path: Path) -> None:
    old = write(tmp_path, "old.rules", BASE)
    new = write(tmp_path, "new.rules", BASE.replace('source "§4 B gate 2"', 'source "§4 gate 2"'))
    result = run("diff", str(old), str(new))
    assert result.exit_code == 0
    assert "  note only: `min_R` changed its source note (hash unchanged)\n" in result.stdout
    assert diff_json(old, new)[1]["note_changes"] == ["min_R"]


# ---- diff: stricter and looser -------------------------------------------------------------

# (edit of BASE, declaration, old, new, direction)
DIRECTIONS = [
    # a gate `x >= c`: raising c is stricter
    ("const min_R = 0.80", "const min_R = 0.85", "min_R", "0.80", "0.85", "stricter"),
    ("const min_R = 0.80", "const min_R = 0.75", "min_R", "0.80", "0.75", "looser"),
    # a gate `x <= c`: raising c is looser
    ("const max_R = 0.95", "const max_R = 0.97", "max_R", "0.95", "0.97", "looser"),
    ("const max_R = 0.95", "const max_R = 0.9", "max_R", "0.95", "0.9", "stricter"),
    # literals in the bound
    (
        "t.R for t in task) >= 0.5",
        "t.R for t in task) >= 0.6",
        "literal_floor",
        "0.5",
        "0.6",
        "stricter",
    ),
    ("<= 0.99", "<= 0.999", "literal_ceiling", "0.99", "0.999", "looser"),
    # a budget ceiling `total <= cap`: raising the cap is looser
    (
        "<= 90_000 tokens",
        "<= 100_000 tokens",
        "per_task",
        "90_000 tokens",
        "100_000 tokens",
        "looser",
    ),
    ("<= 90_000 tokens", "<= 1 Mtokens", "per_task", "90_000 tokens", "1 Mtokens", "looser"),
    (
        "<= 90_000 tokens",
        "<= 0.08 Mtokens",
        "per_task",
        "90_000 tokens",
        "0.08 Mtokens",
        "stricter",
    ),
    # the bound operator
    ("task) >= 0.5", "task) > 0.5", "literal_floor", "`>=`", "`>`", "stricter"),
    ("task) > 0.1", "task) >= 0.1", "exclusive", "`>`", "`>=`", "looser"),
    ("task) <= 0.99", "task) < 0.99", "literal_ceiling", "`<=`", "`<`", "stricter"),
    ("task) < 0.9", "task) <= 0.9", "strict_ceiling", "`<`", "`<=`", "looser"),
    ("total a.tokens <=", "total a.tokens <", "per_task", "`<=`", "`<`", "stricter"),
    # a constant read in both directions has no single direction
    ("const both = 0.5", "const both = 0.6", "both", "0.5", "0.6", "changed"),
    # through a derived constant: token_cap = base_tokens * 2, read as `x >= token_cap`
    (
        "const base_tokens = 40_000",
        "const base_tokens = 50_000",
        "base_tokens",
        "40_000 tokens",
        "50_000 tokens",
        "stricter",
    ),
    # through a metric: cost = rate * used, read as `cost(...) >= 1 USD`
    (
        "const rate = 4 USD/Mtokens",
        "const rate = 5 USD/Mtokens",
        "rate",
        "4 USD/Mtokens",
        "5 USD/Mtokens",
        "looser",
    ),
    # in a conditional bound, the branches are the bound and the condition has no direction
    ("then 0.5 else", "then 0.55 else", "conditional_floor", "0.5", "0.55", "stricter"),
    ("else 0.6)", "else 0.5)", "conditional_floor", "0.6", "0.5", "looser"),
    ("task) > 3 then", "task) > 4 then", "conditional_floor", "3", "4", "changed"),
    # a number of another dimension has no order with the old one
    ("const spare = 5", "const spare = 5 USD", "spare", "5", "5 USD", "changed"),
]


@pytest.mark.parametrize(
    ("before", "after", "name", "old", "new", "direction"),
    DIRECTIONS,
    ids=[f"{row[2]}-{row[5]}-{index}" for index, row in enumerate(DIRECTIONS)],
)
def test_threshold_direction(
    tmp_path: Path, before: str, after: str, name: str, old: str, new: str, direction: str
) -> None:
    assert BASE.count(before) == 1
    edited = BASE.replace(before, after)
    old_path = write(tmp_path, "old.rules", BASE)
    new_path = write(tmp_path, "new.rules", edited)
    exit_code, report = diff_json(old_path, new_path)
    assert exit_code == 1
    assert report["identical"] is False
    change = changes(report)[name]
    assert change["status"] == "changed"
    assert change["values"] == [{"old": old, "new": new, "direction": direction}]
    text = run("diff", str(old_path), str(new_path)).stdout
    assert f"~ {change['kind']} {name} (changed)\n" in text
    assert f"    {old} -> {new}: {direction}\n" in text


def test_a_gate_changed_through_a_constant_says_so(tmp_path: Path) -> None:
    old = write(tmp_path, "old.rules", BASE)
    new = write(tmp_path, "new.rules", BASE.replace("const min_R = 0.80", "const min_R = 0.85"))
    exit_code, report = diff_json(old, new)
    assert exit_code == 1
    found = changes(report)
    assert set(found) == {"min_R", "floor"}
    assert found["floor"]["values"] == []
    assert found["floor"]["via"] == ["min_R"]
    assert found["floor"]["old_hash"] != found["floor"]["new_hash"]
    text = run("diff", str(old), str(new)).stdout
    assert "~ gate floor (changed)\n" in text
    assert "    through changed `min_R`\n" in text
    assert text.endswith("0 added, 0 removed, 2 changed\n")


def test_changes_through_a_chain_of_constants(tmp_path: Path) -> None:
    old = write(tmp_path, "old.rules", BASE)
    new = write(tmp_path, "new.rules", BASE.replace("40_000 tokens", "50_000 tokens"))
    found = changes(diff_json(old, new)[1])
    assert set(found) == {"base_tokens", "token_cap", "derived_floor"}
    assert found["token_cap"]["via"] == ["base_tokens"]
    assert found["derived_floor"]["via"] == ["token_cap"]


def test_added_and_removed_declarations(tmp_path: Path) -> None:
    old = write(tmp_path, "old.rules", BASE)
    edited = BASE.replace("gate exclusive require min(t.R for t in task) > 0.1\n", "")
    edited += "const new_limit = 3\n"
    new = write(tmp_path, "new.rules", edited)
    exit_code, report = diff_json(old, new)
    assert exit_code == 1
    found = changes(report)
    assert set(found) == {"exclusive", "new_limit"}
    assert found["exclusive"]["status"] == "removed"
    assert (found["exclusive"]["old_hash"], found["exclusive"]["new_hash"])[1] is None
    assert found["new_limit"]["status"] == "added"
    assert found["new_limit"]["old_hash"] is None
    text = run("diff", str(old), str(new)).stdout
    assert "- gate exclusive (removed)\n" in text
    assert "+ const new_limit (added)\n" in text
    assert text.endswith("1 added, 1 removed, 0 changed\n")


def test_diff_of_a_lock_against_edited_rules(tmp_path: Path) -> None:
    rules = write(tmp_path, "base.rules", BASE)
    lock = freeze(rules, tmp_path / "base.lock")
    edited = write(tmp_path, "edited.rules", BASE.replace(">= 0.5", ">= 0.55"))
    exit_code, report = diff_json(lock, edited)
    assert exit_code == 1
    assert changes(report)["literal_floor"]["values"] == [
        {"old": "0.5", "new": "0.55", "direction": "stricter"}
    ]
    frozen_edit = freeze(edited, tmp_path / "edited.lock")
    assert diff_json(lock, frozen_edit)[1]["changes"] == report["changes"]


# ---- diff: property ------------------------------------------------------------------------


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=rulesets(), data=st.data())
def test_a_changed_literal_is_reported_with_both_values(text: str, data: st.DataObject) -> None:
    sites = number_sites(parse_text(text, "a.rules"))
    site = data.draw(st.sampled_from(sites))
    literal = changed_literal(site.number, data.draw(st.integers(1, 10_000)))
    edited = replace_spans(text, [(site.number.span, literal)])
    with tempfile.TemporaryDirectory() as folder:
        old = write(Path(folder), "old.rules", text)
        new = write(Path(folder), "new.rules", edited)
        exit_code, report = diff_json(old, new)
    assert exit_code == 1
    change = changes(report)[site.owner]
    old_text = site.number.text + (f" {site.number.unit}" if site.number.unit else "")
    assert change["values"] == [
        {"old": old_text, "new": literal, "direction": change["values"][0]["direction"]}
    ]
    assert change["values"][0]["direction"] in {"stricter", "looser", "changed"}
    assert change["old_hash"] != change["new_hash"]
    for other in report["changes"]:  # everything else moved only through a dependency
        if other["name"] != site.owner:
            assert other["values"] == [] and other["via"]
