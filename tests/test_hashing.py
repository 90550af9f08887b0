"""Declaration and ruleset hashes: what must not change them, and exactly what must.

Properties (Hypothesis), on generated rulesets and on the shipped `rules/`:

(a) whitespace, newlines and comments between tokens, and the order of declarations (also
    spread over other files with other headers) change no hash;
(b) respelling a number with the same value (`0.8`/`0.80`/`8e-1`, `90000`/`90_000`,
    `4 min`/`240 s`, `15 %`/`0.15`) changes no hash;
(c) another value for one numeric literal changes the hash of the declaration holding it,
    of every declaration that references that one (transitively), and the ruleset hash,
    and no other hash;
(d) `rulecheck hash` prints the same bytes whatever PYTHONHASHSEED is;
(e) `source` notes change no hash: they are documentation, like comments. A note is kept
    in the lock and shown by `rulecheck show`/`diff`, but editing it is not a change of
    the protocol.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import random
import re
import subprocess
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rulegen import (
    SEPARATORS,
    changed_literal,
    check_texts,
    declaration_texts,
    dependents,
    hash_texts,
    hashes,
    number_sites,
    replace_spans,
    respace,
    respell,
    rulesets,
    tokens,
)

from engine.check import CheckedRuleset, check_rules
from engine.freeze.canonical import canonical_form
from engine.freeze.hashing import HashedRuleset, hash_ruleset
from engine.syntax import ast
from engine.syntax.parse import grammar_version, parse_text

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "rules"
SHIPPED = {str(path): path.read_text(encoding="utf-8") for path in sorted(RULES.glob("*.rules"))}
RULECHECK = Path(sys.executable).parent / "rulecheck"

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Shipped:
    """The shipped rules, parsed, checked and hashed once (on first use)."""

    files: dict[str, ast.RuleFile]
    checked: CheckedRuleset
    hashes: dict[str, str]
    ruleset_hash: str
    sites: list[tuple[str, int]]


@functools.cache
def shipped() -> Shipped:
    files = {path: parse_text(text, path) for path, text in SHIPPED.items()}
    checked = check_rules(files.values())
    assert checked.ok, [d.message for d in checked.diagnostics]
    hashed = hash_ruleset(checked, grammar_version())
    sites = [
        (path, index)
        for path, rule_file in files.items()
        for index in range(len(number_sites(rule_file)))
    ]
    return Shipped(files, checked, hashes(hashed), hashed.ruleset_hash, sites)


def _shipped_with(path: str, text: str) -> HashedRuleset:
    """The shipped rules with one file replaced (the others are not parsed again)."""
    files = {**shipped().files, path: parse_text(text, path)}
    checked = check_rules(files.values())
    assert checked.ok, [d.message for d in checked.diagnostics]
    return hash_ruleset(checked, grammar_version())


# ---- (a) layout, comments and order ------------------------------------------------------


@FAST
@given(text=rulesets(), separators=st.lists(st.sampled_from(SEPARATORS), min_size=1))
def test_layout_and_comments_change_no_hash(text: str, separators: list[str]) -> None:
    before = hash_texts({"a.rules": text})
    after = hash_texts({"a.rules": respace(tokens(text), separators)})
    assert hashes(after) == hashes(before)
    assert after.ruleset_hash == before.ruleset_hash


@SLOW
@given(
    path=st.sampled_from(sorted(SHIPPED)),
    separators=st.lists(st.sampled_from(SEPARATORS), min_size=1, max_size=20),
)
def test_layout_of_a_shipped_file_changes_no_hash(path: str, separators: list[str]) -> None:
    after = _shipped_with(path, respace(tokens(SHIPPED[path]), separators))
    assert hashes(after) == shipped().hashes
    assert after.ruleset_hash == shipped().ruleset_hash


def _split(pieces: list[str], files: int, seed: int) -> dict[str, str]:
    """The declaration texts shuffled and dealt into `files` rule files (named inside rules/,
    where a protocol's schema paths lead)."""
    rng = random.Random(seed)
    pieces = list(pieces)
    rng.shuffle(pieces)
    out: dict[str, str] = {}
    for number in range(files):
        body = "\n\n".join(pieces[number::files])
        out[str(RULES / f"part{number}.rules")] = (
            f'ruleset part{number} version "{number}.0"\n\n{body}\n'
        )
    return out


@FAST
@given(text=rulesets(), files=st.integers(1, 4), seed=st.integers(0, 2**32))
def test_declaration_order_and_files_change_no_hash(text: str, files: int, seed: int) -> None:
    before = hash_texts({"a.rules": text})
    pieces = declaration_texts(text, parse_text(text, "a.rules"))
    after = hash_texts(_split(pieces, files, seed))
    assert hashes(after) == hashes(before)
    assert after.ruleset_hash == before.ruleset_hash


@SLOW
@given(files=st.integers(1, 5), seed=st.integers(0, 2**32))
def test_shipped_declarations_in_any_order_and_files(files: int, seed: int) -> None:
    pieces = [
        piece
        for path, rule_file in shipped().files.items()
        for piece in declaration_texts(SHIPPED[path], rule_file)
    ]
    after = hash_texts(_split(pieces, files, seed))
    assert hashes(after) == shipped().hashes
    assert after.ruleset_hash == shipped().ruleset_hash


def test_hash_is_the_same_for_the_files_in_another_order() -> None:
    from engine.ruleset import load_ruleset

    by_files = load_ruleset(sorted(RULES.glob("*.rules"), reverse=True)).hashed
    assert by_files.ruleset_hash == shipped().ruleset_hash


# ---- (b) numeric spelling ------------------------------------------------------------------


def _const_hashes(value: str) -> dict[str, str]:
    return hashes(hash_texts({"n.rules": f'ruleset n version "1"\nconst x = {value}\n'}))


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("0.8", "0.80"),
        ("0.8", "8e-1"),
        ("90000", "90_000"),
        ("90000", "9E+4"),
        ("90000 tokens", "0.09 Mtokens"),
        ("4 min", "240 s"),
        ("1.5 h", "90 min"),
        ("15 %", "0.15"),
        ("100 %", "1"),
        ("-3 USD", "- 3.0 USD"),
    ],
)
def test_known_respellings(one: str, other: str) -> None:
    assert _const_hashes(one) == _const_hashes(other)


def test_arithmetic_is_not_folded() -> None:
    """`2 * 2` and `4` have the same value but are different expressions."""
    assert _const_hashes("2 * 2") != _const_hashes("4")


@FAST
@given(text=rulesets(), data=st.data())
def test_numeric_spelling_changes_no_hash(text: str, data: st.DataObject) -> None:
    rule_file = parse_text(text, "a.rules")
    sites = number_sites(rule_file)
    chosen = data.draw(st.lists(st.sampled_from(sites), min_size=1, unique_by=id))
    edits = [(s.number.span, respell(s.number, data.draw(st.integers(0, 50)))) for s in chosen]
    respelled = replace_spans(text, edits)
    assert hashes(hash_texts({"a.rules": respelled})) == hashes(hash_texts({"a.rules": text}))


@SLOW
@given(path=st.sampled_from(sorted(SHIPPED)), seed=st.integers(0, 2**32))
def test_respelling_every_shipped_number_changes_no_hash(path: str, seed: int) -> None:
    rng = random.Random(seed)
    sites = number_sites(shipped().files[path])
    edits = [(s.number.span, respell(s.number, rng.randrange(50))) for s in sites]
    assert hashes(_shipped_with(path, replace_spans(SHIPPED[path], edits))) == shipped().hashes


# ---- (c) a changed value changes exactly its declaration and what uses it --------------------


def _check_one_change(
    files: dict[str, ast.RuleFile],
    texts: dict[str, str],
    path: str,
    site_index: int,
    bump: int,
    checked: CheckedRuleset | None = None,
) -> None:
    """Change one literal of `texts[path]`; exactly its declaration's dependents move."""
    checked = checked or check_rules(files.values())
    before = hash_ruleset(checked, grammar_version())
    site = number_sites(files[path])[site_index]
    new_literal = changed_literal(site.number, bump)
    changed = dict(files)
    changed[path] = parse_text(replace_spans(texts[path], [(site.number.span, new_literal)]), path)
    after = hash_ruleset(check_rules(changed.values()), grammar_version())
    old, new = hashes(before), hashes(after)
    assert old.keys() == new.keys()
    differ = {name for name in old if old[name] != new[name]}
    assert differ == dependents(checked, site.owner)
    assert after.ruleset_hash != before.ruleset_hash


@FAST
@given(text=rulesets(), data=st.data())
def test_a_changed_number_changes_exactly_its_dependents(text: str, data: st.DataObject) -> None:
    count = len(number_sites(parse_text(text, "a.rules")))
    site = data.draw(st.integers(0, count - 1))
    files = {"a.rules": parse_text(text, "a.rules")}
    _check_one_change(files, {"a.rules": text}, "a.rules", site, data.draw(st.integers(1, 10_000)))


@settings(max_examples=10, deadline=None)
@given(data=st.data(), bump=st.integers(1, 10_000))
def test_a_changed_shipped_number_changes_exactly_its_dependents(
    data: st.DataObject, bump: int
) -> None:
    path, index = data.draw(st.sampled_from(shipped().sites))
    _check_one_change(shipped().files, SHIPPED, path, index, bump, shipped().checked)


def test_a_shipped_constant_used_by_others_moves_their_hashes() -> None:
    """A fixed example of (c): `sessions_per_triplet` feeds several derived constants."""
    name = "sessions_per_triplet"
    path, index = next(
        (path, i)
        for path, rule_file in shipped().files.items()
        for i, site in enumerate(number_sites(rule_file))
        if site.owner == name
    )
    users = dependents(shipped().checked, name)
    assert {"dev_session_count", "eval_session_count", "planned_session_count"} <= users
    _check_one_change(shipped().files, SHIPPED, path, index, 100, shipped().checked)


def test_a_kind_reached_by_navigation_is_a_dependency() -> None:
    text = """ruleset nav version "1"
kind claim of answer
  edge supports -> evidence
kind evidence of answer
  records packet "/items"
  attr text: text
gate supported require all(c in claim: exists(e in c -> supports: e.text != ""))
"""
    checked = check_texts({"n.rules": text})
    assert checked.infos["supported"].references == {"claim", "evidence"}
    moved = text.replace('"/items"', '"/evidence"')
    old, new = hashes(hash_texts({"n.rules": text})), hashes(hash_texts({"n.rules": moved}))
    assert {name for name in old if old[name] != new[name]} == {"evidence", "supported"}


# ---- (d) byte-identical output across processes ---------------------------------------------

_KINDS = "|".join(ast.DECLARATION_KINDS.values())
_HASH_LINE = re.compile(rf"[0-9a-f]{{64}}  ({_KINDS})  [A-Za-z_][A-Za-z0-9_]*")


def test_hash_output_is_identical_across_hash_seeds(tmp_path: Path) -> None:
    outputs = []
    for seed in ("0", "1", "12345"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [str(RULECHECK), "hash", str(RULES)],
            capture_output=True,
            env=environment,
            cwd=tmp_path,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert result.stderr == b""
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    lines = outputs[0].decode("utf-8").split("\n")
    assert lines[-1] == ""
    *declarations, total, _ = lines
    assert len(declarations) == len(shipped().hashes)
    for line in declarations:
        assert _HASH_LINE.fullmatch(line), line
    assert [line.split("  ")[2] for line in declarations] == [
        d.name.text for rule_file in shipped().files.values() for d in rule_file.declarations
    ]
    assert total == f"ruleset {shipped().ruleset_hash}"
    assert re.fullmatch(r"ruleset [0-9a-f]{64}", total)


# ---- (e) notes -----------------------------------------------------------------------------


def _with_notes(text: str, note: str) -> str:
    """`text` with a `source` note on every declaration (the note goes after the head)."""
    rule_file = parse_text(text, "a.rules")
    edits = []
    for decl in rule_file.declarations:
        if isinstance(decl, ast.ConstDecl | ast.MetricDecl | ast.CodeDecl):
            at = decl.span
            line, column = at.end_line, at.end_column
        else:
            at = decl.graphs[0].span if isinstance(decl, ast.KindDecl) else decl.name.span
            line, column = at.end_line, at.end_column
        edits.append((ast.Span("a.rules", line, column, line, column), f' source "{note}"'))
    return replace_spans(text, edits)


@FAST
@given(text=rulesets(), note=st.text(alphabet="abc §4.2-", min_size=0, max_size=12))
def test_source_notes_change_no_hash(text: str, note: str) -> None:
    """Notes are documentation: adding, changing or removing one changes no hash."""
    noted = _with_notes(text, note)
    assert parse_text(noted, "a.rules").declarations[0].note == note
    with_notes = hash_texts({"a.rules": noted})
    without = hash_texts({"a.rules": text})
    assert hashes(with_notes) == hashes(without)
    assert with_notes.ruleset_hash == without.ruleset_hash


def test_shipped_notes_change_no_hash() -> None:
    texts = {
        path: re.sub(r'(?<!records )\bsource "(?:[^"\\\n]|\\.)*"', 'source "edited"', text)
        for path, text in SHIPPED.items()
    }
    assert texts != SHIPPED
    assert hashes(hash_texts(texts)) == shipped().hashes


# ---- what must change a hash ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("const x = 1 tokens", "const x = 1 USD"),  # same magnitude, other dimension
        ("const x = 1", "const x = 1 %"),  # 1 is not 1 %
        ('const x = "a"', 'const x = "b"'),
        ('const x = {"a", "b"}', 'const x = {"a", "b", "c"}'),
        ("gate x require 1 >= 0", "gate x require 1 > 0"),
        ("gate x require 1 >= 0", "gate x require 0 <= 1"),
        ("const x = 1\nconst y = x", "const x = 1\nconst y = x + 0"),
    ],
)
def test_semantic_edits_change_the_hash(before: str, after: str) -> None:
    def hashed(body: str) -> dict[str, str]:
        return hashes(hash_texts({"s.rules": f'ruleset s version "1"\n{body}\n'}))

    assert hashed(before) != hashed(after)


def test_a_renamed_declaration_is_another_declaration() -> None:
    one = hash_texts({"s.rules": 'ruleset s version "1"\nconst x = 1\n'})
    two = hash_texts({"s.rules": 'ruleset s version "1"\nconst y = 1\n'})
    assert one.ruleset_hash != two.ruleset_hash


def test_a_long_chain_of_constants_in_any_order() -> None:
    """400 derived constants, written users-first: no recursion limit, same hashes."""
    chain = ["const c0 = 1"] + [f"const c{i} = c{i - 1} + 1" for i in range(1, 400)]
    forward = hash_texts({"c.rules": 'ruleset c version "1"\n' + "\n".join(chain)})
    backward = hash_texts({"c.rules": 'ruleset c version "1"\n' + "\n".join(chain[::-1])})
    assert hashes(forward) == hashes(backward)
    assert forward.ruleset_hash == backward.ruleset_hash


# ---- language growth: new syntax, old hashes --------------------------------------------------

_KINDS_TEXT = """ruleset s version "1"
kind request of campaign
  records requests ""
  key request_id
  attr reserved_usd: USD
  attr start_utc: text
  edge session_id -> session
kind session of campaign
  records sessions "", "/more"
  key session_id
  attr role: text
"""
# The hashes these kinds had before `records ... optional` and `attr ... as text` existed.
_KIND_HASHES = {
    "request": "8dc7dbdfbef5b026eb29268d6e592260981c25d93d0ee41b5d2a3af3165c65b0",
    "session": "32d8a4574c65475fca004c251fbd1e2dfeefb5962806c0284ffbd1ebf50e2896",
}


def test_a_kind_without_the_new_syntax_keeps_its_hash() -> None:
    hashed = hash_texts({"s.rules": _KINDS_TEXT})
    assert hashes(hashed) == _KIND_HASHES
    assert hashed.ruleset_hash == (
        "ec4e9bf3384da254546bc72220bd591deb09b3a4bed1e3c2306aaf0a915ebb25"
    )


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ("attr reserved_usd: USD\n", "attr reserved_usd: USD as text\n", "request"),
        ('records sessions "", "/more"\n', 'records sessions "", "/more" optional\n', "session"),
    ],
)
def test_optional_and_as_text_change_the_hash(old: str, new: str, changed: str) -> None:
    after = hashes(hash_texts({"s.rules": _KINDS_TEXT.replace(old, new)}))
    assert {name for name in after if after[name] != _KIND_HASHES[name]} == {changed}


# ---- (f) the forms written per node type --------------------------------------------------


def _walked_form(node: object) -> object:
    """The canonical form as a walk over each node's dataclass fields makes it: what
    `canonical_form` writes as one function per node type must make the same."""
    if node is None or isinstance(node, str | bool | int):
        return node
    if isinstance(node, ast.Number | ast.Ident | ast.SetLiteral | Fraction):
        return canonical_form(node)  # written by hand, as before
    if isinstance(node, tuple | list):
        return [_walked_form(item) for item in node]
    assert dataclasses.is_dataclass(node)
    form: dict[str, Any] = {"node": type(node).__name__}
    for item in dataclasses.fields(node):
        value = getattr(node, item.name)
        if item.name in {"span", "text", "note"}:
            continue
        if item.default is dataclasses.MISSING or value != item.default:
            form[item.name] = _walked_form(value)
    if isinstance(node, ast.ProtocolDecl):
        form["documents"] = sorted(form["documents"], key=lambda d: d["name"])
    if isinstance(node, ast.KindDecl) and len(node.graphs) == 1:
        form["graph"] = form.pop("graphs")[0]
    return form


def test_each_node_type_has_the_form_of_its_fields() -> None:
    declarations = shipped().checked.declarations()
    assert {type(d) for d in declarations} >= {ast.KindDecl, ast.ProtocolDecl, ast.LinkDecl}
    for declaration in declarations:
        assert canonical_form(declaration) == _walked_form(declaration), declaration.name.text


def test_a_value_without_a_form_is_refused() -> None:
    with pytest.raises(TypeError, match="no canonical form for bytes"):
        canonical_form((b"raw",))
