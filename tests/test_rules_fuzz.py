"""Property tests of the rule pipeline on untrusted text: a rule file under review may hold
any edit, so parse -> check -> hash -> fmt must answer with located diagnostics or a result,
never with a crash.

Inputs are token-level mutations (delete, duplicate, swap, replace, insert) of rule files
that lint clean: the generated ones of `rulegen.rulesets()` and every shipped rule file, so
mutants land in every grammar rule, most of them still close to valid. For each mutant:

- the pipeline in process either raises `RulecheckError` with located diagnostics or returns;
- a mutant that checks clean hashes, and its canonical form is a fixed point of `fmt` that
  parses back to an equal tree with equal hashes;
- a smaller sample goes through the `rulecheck` CLI: exit 0 or 1, never a traceback.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from rulegen import SEPARATORS, respace, rulesets, tokens

from engine.check import check_rules
from engine.cli import main
from engine.errors import RulecheckError
from engine.freeze.hashing import hash_ruleset
from engine.syntax.format import format_rule_file
from engine.syntax.parse import grammar_version, parse_text

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = {
    path.name: path.read_text(encoding="utf-8") for path in sorted(ROOT.glob("rules/*.rules"))
}

# What an editor might type: every keyword and operator of the language, names that are
# and are not declared, units, malformed numbers and strings, and characters it refuses.
_KEYWORDS = (
    "ruleset version const metric kind of records key attr edge code source link gate budget "
    "for in where require else reject ledger order by total reserving table column decision "
    "when otherwise transitions initial terminal settlement event applies from on to outcome "
    "if then not and or true false null count all exists none median mean min max sum"
)
KEYWORDS = frozenset(_KEYWORDS.split())
_OTHERS = (
    "= == != <= >= < > + - * / -> <- => . , : ( ) { } "
    "x R tokens USD USD/Mtokens Mtokens % s h len ratio unique "
    '0 1 0.80 8e-1 90_000 1__0 _1 1_ 1e 1.2.3 "" "a" "\\n" "unterminated '
    "# \u00a7 \u00e9 \t \x00 \\"
)
VOCABULARY = (*sorted(KEYWORDS), *_OTHERS.split(" "))


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[0-9][0-9_.eE+-]*")
_UNITS = ("", "tokens", "USD", "USD/Mtokens", "Mtokens", "s", "min", "h", "%")


@st.composite
def mutants(draw: st.DrawFn) -> str:
    """A valid rule text with one to three edits: token-level ones, which mostly break the
    syntax, and ones that keep it (another declared name, another number or unit), which
    reach the checker."""
    if draw(st.booleans()):
        text = draw(rulesets())
    else:
        text = SHIPPED[draw(st.sampled_from(sorted(SHIPPED)))]
    parts = tokens(text)
    names = sorted({part for part in parts if _NAME.fullmatch(part)} - KEYWORDS)
    edits = draw(st.sampled_from((SYNTAX_EDITS, MEANING_EDITS)))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(parts) - 1))
        edit = draw(st.sampled_from(edits))
        event(edit)
        word = draw(st.sampled_from(VOCABULARY))
        if edit == "delete":
            del parts[at]
        elif edit == "duplicate":
            parts.insert(at, parts[at])
        elif edit == "swap" and at + 1 < len(parts):
            parts[at], parts[at + 1] = parts[at + 1], parts[at]
        elif edit == "replace":
            parts[at] = word
        elif edit == "insert":
            parts.insert(at, word)
        elif edit == "rename" and _NAME.fullmatch(parts[at]) and parts[at] not in KEYWORDS:
            parts[at] = draw(st.sampled_from(names))
        elif edit == "renumber" and _NUMBER.fullmatch(parts[at]):
            unit = draw(st.sampled_from(_UNITS))
            parts[at] = f"{draw(st.integers(0, 10**6))} {unit}".strip()
        if not parts:
            return ""
    return respace(parts, draw(st.lists(st.sampled_from(SEPARATORS), min_size=1, max_size=3)))


SYNTAX_EDITS = ("delete", "duplicate", "swap", "replace", "insert")
MEANING_EDITS = ("rename", "renumber")


def _pipeline(text: str) -> str:
    """Parse, check, hash and format; returns how far the text got."""
    try:
        rule_file = parse_text(text, "mutant.rules")
    except RulecheckError as error:
        assert error.diagnostics and all(d.location is not None for d in error.diagnostics)
        return "syntax error"
    checked = check_rules([rule_file])
    if not checked.ok:
        assert all(d.location is not None for d in checked.diagnostics)
        return "check error"
    hashed = hash_ruleset(checked, grammar_version())
    formatted = format_rule_file(rule_file)
    reparsed = parse_text(formatted, "mutant.rules")
    assert reparsed.declarations == rule_file.declarations
    assert format_rule_file(reparsed) == formatted
    rehashed = hash_ruleset(check_rules([reparsed]), grammar_version())
    assert rehashed.ruleset_hash == hashed.ruleset_hash
    return "clean"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mutants())
def test_a_mutated_rule_file_is_diagnosed_or_accepted_never_a_crash(text: str) -> None:
    event(_pipeline(text))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mutants())
def test_the_cli_answers_a_mutated_rule_file_with_exit_0_or_1(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mutant.rules"
        path.write_text(text, encoding="utf-8")
        for command in (["lint"], ["hash"], ["fmt", "--check"]):
            result = CliRunner().invoke(main, [*command, str(path)])
            assert result.exit_code in (0, 1), (command, result.output)
            assert "Traceback" not in result.output
            assert not isinstance(result.exception, Exception) or isinstance(
                result.exception, SystemExit
            ), result.exception
        assert path.read_text(encoding="utf-8") == text  # `fmt --check` never writes
