"""Property tests of `rulecheck answer` on untrusted input: whatever an LLM returns, the checker
answers with findings (or a clean structural pass), never with a crash.

(a) random bytes, random JSON values and byte-level corruptions of a valid answer;
(b) structure-preserving mutations of the valid B answer: deleted keys and items, changed
    types, duplicated or removed list items, random and reused IDs, strings with astral and
    control characters, huge numbers, nested junk.
Both run the `answer` command's runner in-process, with a program compiled once for this
module; a smaller sample goes through the CLI (`engine.cli.main`) to check exit codes and
that no traceback is ever printed.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from answer_cases import memoized_rules
from builders import CONTROLS, make_answer
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine.cli import ANSWER_ALIAS, main
from engine.errors import RulecheckError
from engine.evaluate.alias import FilesJob
from engine.evaluate.batch import FilesResult, FilesRunner
from engine.evaluate.links import EVALUATION_ERROR
from engine.evaluate.program import compile_program
from engine.ruleset import load_ruleset

ROOT = Path(__file__).resolve().parents[1]
RUNNER = FilesRunner(compile_program(load_ruleset([ROOT / "rules"])), ANSWER_ALIAS)
PACKET = CONTROLS / "packet.json"
DRAFT = CONTROLS / "draft.json"
SOURCE = CONTROLS / "source"
VALID_B = make_answer("B")
VALID_B_BYTES = (CONTROLS / "answer_B.json").read_bytes()

FUZZ = settings(
    max_examples=2500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(autouse=True, scope="module")
def _rules_parsed_once() -> Iterator[None]:
    """The CLI sample re-reads rules/ on each call; parse them once for the module."""
    with memoized_rules():
        yield


@pytest.fixture(scope="module")
def answer_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One file, rewritten by every example (examples run one at a time)."""
    return tmp_path_factory.mktemp("fuzz") / "answer.json"


# ---- strategies ----------------------------------------------------------------------------

KNOWN_IDS = [
    *(f"{p}{n}" for p in "CAVUXOE" for n in range(1, 7)),
    "A3",
    "U9",
    "E9",
    "C0",
    "C01",
    "c1",
    "C1 ",
]
ids = st.sampled_from(KNOWN_IDS) | st.from_regex(r"[CAVUXOEcP]?[0-9]{0,4}", fullmatch=True)
# Any code point, surrogates included (they reach the file as `\udXXX` escapes).
strings = st.text(max_size=40) | st.text(
    alphabet=st.sampled_from(["\x00", "\x1f", "\x7f", "\u2028", "\ufeff", "\U0001f600", " ", "\n"]),
    max_size=10,
)
huge = st.sampled_from([0, -1, 1, 2**31, 2**53 + 1, 2**63, 2**64, 10**300, -(10**300), 10**400])
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | huge
    | st.floats()  # NaN and infinities included: they must come back as JSON_NON_FINITE
    | strings
    | ids
)
junk = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(strings, inner, max_size=4),
    max_leaves=12,
)


def serialize(value: Any, ensure_ascii: bool) -> bytes:
    """JSON text as a careless producer would write it (NaN, Infinity and lone surrogates)."""
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=2)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: write it escaped instead
        return json.dumps(value, ensure_ascii=True, indent=2).encode("utf-8")


@st.composite
def corrupted_bytes(draw: st.DrawFn) -> bytes:
    """The valid B answer with a few bytes inserted, deleted or overwritten."""
    data = bytearray(VALID_B_BYTES)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "delete", "overwrite", "truncate"]))
        chunk = draw(st.binary(min_size=1, max_size=4) | st.sampled_from([b'"', b",", b"}", b"]"]))
        if op == "insert":
            data[at:at] = chunk
        elif op == "delete":
            del data[at : at + len(chunk)]
        elif op == "overwrite":
            data[at : at + len(chunk)] = chunk
        else:
            del data[at:]
    return bytes(data)


raw_inputs = (
    st.binary(max_size=300)
    | st.builds(serialize, junk, st.booleans())
    | corrupted_bytes()
    | st.sampled_from([b"", b"{}", b"[]", b"null", b'{"final": {}, "reconciliation": null}'])
)


def _pointers(doc: Any, prefix: str = "") -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    if isinstance(doc, dict | list):
        for key, value in doc.items() if isinstance(doc, dict) else enumerate(doc):
            token = str(key).replace("~", "~0").replace("/", "~1")  # RFC 6901
            pointer = f"{prefix}/{token}"
            found.append((pointer, value))
            found += _pointers(value, pointer)
    return found


def _parent(doc: Any, pointer: str) -> tuple[Any, str]:
    *parents, last = (part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/"))
    target = doc
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    return target, last


def _set(doc: Any, pointer: str, value: Any) -> None:
    parent, last = _parent(doc, pointer)
    parent[int(last) if isinstance(parent, list) else last] = value


OPS = st.sampled_from(
    ["delete", "junk", "id", "string", "number", "duplicate", "extra", "reuse", "empty"]
)


def _index(draw: st.DrawFn, items: list[Any]) -> int:
    # An integer draw: a fresh sampled_from() per call would hash its whole list each time.
    return draw(st.integers(0, len(items) - 1))


@st.composite
def mutated_answers(draw: st.DrawFn) -> Any:
    """1-3 random edits of the valid B answer, each keeping the rest of the document intact."""
    doc = copy.deepcopy(VALID_B)
    for _ in range(draw(st.integers(1, 3))):
        places = _pointers(doc)
        if not places:
            break
        pointer, value = places[_index(draw, places)]
        parent, last = _parent(doc, pointer)
        op = draw(OPS)
        if op == "delete":
            del parent[int(last) if isinstance(parent, list) else last]
        elif op == "junk":
            _set(doc, pointer, draw(junk))
        elif op == "id":
            _set(doc, pointer, draw(ids))
        elif op == "string":
            _set(doc, pointer, draw(strings))
        elif op == "number":
            _set(doc, pointer, draw(huge | st.integers(-3, 40) | st.floats()))
        elif op == "duplicate" and isinstance(value, list) and value:
            value.append(copy.deepcopy(value[_index(draw, value)]))
        elif op == "extra" and isinstance(value, dict):
            value[draw(strings)] = draw(junk)
        elif op == "reuse":  # put another value of the same document here (IDs, records, lists)
            _, other = places[_index(draw, places)]
            _set(doc, pointer, copy.deepcopy(other))
        elif op == "empty" and isinstance(value, list | dict | str):
            _set(doc, pointer, type(value)())
    return doc


roles = st.sampled_from(["D", "A", "B"])


# ---- the property ----------------------------------------------------------------------------


def check(path: Path, role: str, with_draft: bool, with_source: bool) -> FilesResult:
    files = {"answer": path, "packet": PACKET} | ({"draft": DRAFT} if with_draft else {})
    job = FilesJob(files, {"role": role}, SOURCE if with_source else None)
    try:
        report = RUNNER.run(job)
    except RulecheckError:
        raise
    except Exception as error:  # anything else is a crash on untrusted input
        raise AssertionError(f"the check crashed: {type(error).__name__}: {error}") from error
    assert report.outcome.checked
    for finding in report.outcome.findings:
        assert isinstance(finding.code, str) and finding.code
        assert isinstance(finding.message, str) and finding.message
        assert finding.code != EVALUATION_ERROR, finding  # a rule that cannot evaluate valid data
        where = finding.location
        assert where is not None and where.file
        assert where.line is None or where.line >= 1
        assert where.column is None or where.column >= 1
        assert bool(finding.rule) == bool(finding.rule_hash)
    return report


def _stage(report: FilesResult) -> FilesResult:
    """Label the example (see --hypothesis-show-statistics): which stages found problems."""
    stages = {f.code.split("_")[0] if f.rule is None else "LINK" for f in report.outcome.findings}
    event("stage: " + (",".join(sorted(stages)) or "structural pass"))
    return report


def test_valid_specimen_passes_the_property(answer_file: Path) -> None:
    answer_file.write_bytes(VALID_B_BYTES)
    assert check(answer_file, "B", True, True).outcome.passed


@FUZZ
@given(raw=raw_inputs, role=roles, with_draft=st.booleans(), with_source=st.booleans())
def test_random_bytes_and_json(
    answer_file: Path, raw: bytes, role: str, with_draft: bool, with_source: bool
) -> None:
    answer_file.write_bytes(raw)
    _stage(check(answer_file, role, with_draft, with_source))


@FUZZ
@given(
    doc=mutated_answers(),
    role=roles,
    ensure_ascii=st.booleans(),
    with_draft=st.booleans(),
    with_source=st.booleans(),
)
def test_mutated_valid_answer(
    answer_file: Path, doc: Any, role: str, ensure_ascii: bool, with_draft: bool, with_source: bool
) -> None:
    answer_file.write_bytes(serialize(doc, ensure_ascii))
    report = _stage(check(answer_file, role, with_draft, with_source))
    if role != "B" and isinstance(doc, dict) and doc.get("reconciliation") is not None:
        assert not report.outcome.passed  # a reconciliation record is never valid for D or A


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    raw=raw_inputs | st.builds(serialize, mutated_answers(), st.booleans()),
    role=roles,
    output_format=st.sampled_from(["json", "text"]),
)
def test_cli_exit_codes(answer_file: Path, raw: bytes, role: str, output_format: str) -> None:
    answer_file.write_bytes(raw)
    argv = ["answer", str(answer_file), "--packet", str(PACKET), "--role", role]
    result = CliRunner().invoke(main, [*argv, "--format", output_format])
    assert result.exit_code in (0, 1), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    if output_format == "json":
        data = json.loads(result.stdout)
        assert "structural_ok" in data, result.stdout  # not a rules or usage failure
        assert data["structural_ok"] == (result.exit_code == 0) == (not data["findings"])
