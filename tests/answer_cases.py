"""The expected-result table of `rulecheck answer` (seed 000 PROMPTS, "Exact response contract"
and "Additional constraints"; EVALUATOR-CONTROLS C09, C11, C12, C13).

Every case starts from a valid specimen of tests/builders.py and applies named edits, so a
reviewer can read each row as "this one change to a valid answer (or packet, draft, source
snapshot) must give exactly these findings". Expected findings are the exact multiset of
(code, rule) pairs; schema and JSON findings have no rule. Some rows also pin the exact
JSON pointer and line:column of a finding.

Shared by test_answer_contract.py (runs every row) and test_rule_removal.py (re-runs the rows
that name a link rule with that rule deleted from a copy of rules/).
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from builders import (
    PACKET_ITEMS,
    SOURCE,
    dump,
    make_answer,
    make_draft,
    make_packet,
    mutated,
    removed,
)
from click.testing import CliRunner

from engine.cli import main

Edit = Callable[[Any], Any]
Expected = tuple[str, str | None]
Located = tuple[str, str | None, int | None, int | None]

# ---- edits of a JSON document ---------------------------------------------------------------


def put(pointer: str, value: Any) -> Edit:
    """Replace the value at `pointer` (RFC 6901; `/-` appends to a list)."""
    return lambda doc: mutated(doc, pointer, value)


def push(pointer: str, value: Any) -> Edit:
    """Append `value` to the list at `pointer`."""
    return put(pointer + "/-", value)


def drop(pointer: str) -> Edit:
    """Delete the value at `pointer`."""
    return lambda doc: removed(doc, pointer)


def _at(doc: Any, pointer: str) -> Any:
    target = doc
    for part in pointer[1:].split("/"):
        target = target[int(part)] if isinstance(target, list) else target[part]
    return target


def fill(pointer: str, make: Callable[[int], Any], total: int) -> Edit:
    """Grow (or cut) the list at `pointer` to `total` items; new item k (1-based) is make(k)."""

    def edit(doc: Any) -> Any:
        copied = copy.deepcopy(doc)
        items = _at(copied, pointer)
        del items[total:]
        items.extend(make(k) for k in range(len(items) + 1, total + 1))
        assert len(items) == total
        return copied

    return edit


def replace_once(old: str, new: str) -> Callable[[str], str]:
    """A text edit of the serialized document that must apply exactly once."""

    def edit(text: str) -> str:
        assert text.count(old) == 1, f"text edit {old!r} does not apply exactly once"
        return text.replace(old, new)

    return edit


# ---- records used to fill arrays -----------------------------------------------------------


def unknown_claim(k: int) -> dict[str, Any]:
    return {
        "id": f"C{k}",
        "text": f"Unknown fact {k}.",
        "status": "unknown",
        "evidence_ids": [],
        "uncertainty_id": "U1",
    }


def task_action(k: int) -> dict[str, Any]:
    return {
        "id": f"A{k}",
        "action": f"Task action {k}.",
        "rationale": "The task asks for it.",
        "support_basis": "task",
        "evidence_ids": [],
        "verification_ids": [],
        "verification_limitation": "Checked by review.",
    }


def task_verification(k: int) -> dict[str, Any]:
    return {
        "id": f"V{k}",
        "expected_behavior": f"Behaviour {k} holds.",
        "method": "Run the task's acceptance test.",
        "support_basis": "task",
        "evidence_ids": [],
        "uncertainty_id": None,
    }


def uncertainty(k: int) -> dict[str, Any]:
    return {
        "id": f"U{k}",
        "missing_information": f"Fact {k} is not in the packet.",
        "consequence": "It cannot be judged.",
        "verification_step": "Read the file that holds it.",
    }


def exclusion(k: int, evidence_ids: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "id": f"X{k}",
        "scope_item": f"Scope item {k}.",
        "reason": "Out of the task's scope.",
        "evidence_ids": list(evidence_ids),
    }


def citation(
    evidence_id: str, path: str, start: int, end: int, supports: Sequence[str]
) -> dict[str, Any]:
    return {
        "evidence_id": evidence_id,
        "path": path,
        "start_line": start,
        "end_line": end,
        "supports": list(supports),
    }


def repeated_citation(k: int) -> dict[str, Any]:
    return citation("E1", "src/cache.ts", 7, 7, ["C1"])


def unresolved_obligation(k: int) -> dict[str, Any]:
    return {
        "id": f"O{k}",
        "text": f"Obligation {k}.",
        "basis": "task",
        "status": "unresolved",
        "evidence_ids": [],
        "final_ids": ["U1"],
    }


def disposition(evidence_id: str, status: str, final_ids: Sequence[str]) -> dict[str, Any]:
    return {"evidence_id": evidence_id, "status": status, "final_ids": list(final_ids)}


# ---- documents -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Doc:
    """One input file: a builder plus edits, then optional edits of its serialized text."""

    build: Callable[[], Any] | None
    edits: tuple[Edit, ...] = ()
    text: tuple[Callable[[str], str], ...] = ()
    raw: Callable[[bytes], bytes] | None = None

    def value(self) -> Any:
        assert self.build is not None
        doc = self.build()
        for edit in self.edits:
            doc = edit(doc)
        return doc

    def render(self) -> bytes:
        text = dump(self.value())
        for edit in self.text:
            text = edit(text)
        data = text.encode("utf-8")
        return self.raw(data) if self.raw else data


MISSING = Doc(None)  # the file does not exist


def answer(
    role: str,
    *edits: Edit,
    text: Sequence[Callable[[str], str]] = (),
    raw: Callable[[bytes], bytes] | None = None,
) -> Doc:
    """The valid specimen for `role` with `edits` applied."""
    return Doc(lambda: make_answer(role), edits, tuple(text), raw)


def packet(
    *edits: Edit,
    items: Sequence[tuple[str, str, int, int]] = PACKET_ITEMS,
    text: Sequence[Callable[[str], str]] = (),
) -> Doc:
    """The valid packet (or one built from `items` of the source snapshot) with `edits`."""
    return Doc(lambda: make_packet(list(items)), edits, tuple(text))


def draft(*edits: Edit, text: Sequence[Callable[[str], str]] = ()) -> Doc:
    """The common draft D with `edits`."""
    return Doc(make_draft, edits, tuple(text))


# The draft of the C12 cases: besides the specimen's draft-only A3 it holds records the
# revised answers dropped (U2, V3, C5, X2), so each link position can point at one.
RICH_DRAFT = draft(
    push("/final/uncertainties", uncertainty(2)),
    push("/final/verification_plan", task_verification(3)),
    push("/final/claims", unknown_claim(5)),
    push("/final/exclusions", exclusion(2)),
)

# More ranges of the snapshot, for packets of 7-13 items.
EXTRA_ITEMS = [
    ("E7", "src/cache.ts", 1, 1),
    ("E8", "src/cache.ts", 2, 4),
    ("E9", "src/cache.ts", 31, 33),
    ("E10", "src/cache.ts", 34, 34),
    ("E11", "src/store.ts", 1, 1),
    ("E12", "src/store.ts", 5, 7),
    ("E13", "src/cache.ts", 14, 14),
]

# ---- source snapshots ----------------------------------------------------------------------

SourceSpec = Callable[[Path], Path]


def snapshot(*changes: Callable[[Path], None]) -> SourceSpec:
    """A copy of controls/answer/source with `changes` applied to the copy's root."""

    def make(tmp: Path) -> Path:
        root = tmp / "snapshot"
        shutil.copytree(SOURCE, root)
        for change in changes:
            change(root)
        return root

    return make


def _delete(relative: str) -> Callable[[Path], None]:
    return lambda root: (root / relative).unlink()


def _append(relative: str, data: bytes) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        target = root / relative
        target.write_bytes(target.read_bytes() + data)

    return change


def _replace_bytes(relative: str, old: bytes, new: bytes) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        target = root / relative
        raw = target.read_bytes()
        assert raw.count(old) == 1 and len(old) == len(new)
        target.write_bytes(raw.replace(old, new))

    return change


def _outside_copy(name: str) -> Callable[[Path], None]:
    """Put an authentic copy of src/store.ts *outside* the snapshot root, at ../NAME."""
    return lambda root: shutil.copyfile(root / "src" / "store.ts", root.parent / name)


def _symlink_out(relative: str, target_name: str) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        shutil.copyfile(root / "src" / "store.ts", root.parent / target_name)
        (root / relative).symlink_to(root.parent / target_name)

    return change


SNAPSHOT = snapshot()


def not_a_folder(tmp: Path) -> Path:
    target = tmp / "not_a_folder.txt"
    target.write_text("a file\n", encoding="utf-8")
    return target


def no_such_folder(tmp: Path) -> Path:
    return tmp / "no_such_folder"


STORE_SHA256 = hashlib.sha256((SOURCE / "src" / "store.ts").read_bytes()).hexdigest()

# ---- cases -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One row: inputs (as edits of the valid specimens) and the exact expected result."""

    id: str
    role: str
    answer: Doc
    findings: tuple[Expected, ...] = ()
    packet: Doc = field(default_factory=packet)
    draft: Doc | None = None
    source: SourceSpec | None = None
    exit_code: int | None = None  # default: 0 without findings, 1 with
    located: tuple[Located, ...] = ()  # (code, pointer, line, column) of some finding
    output_has: tuple[str, ...] = ()
    bug: str | None = None  # a known engine bug: the row is a strict xfail

    @property
    def expected_exit(self) -> int:
        if self.exit_code is not None:
            return self.exit_code
        return 1 if self.findings else 0

    @property
    def rules(self) -> frozenset[str]:
        return frozenset(rule for _, rule in self.findings if rule)

    def param(self) -> Any:
        marks = [pytest.mark.xfail(strict=True, reason=self.bug)] if self.bug else []
        return pytest.param(self, id=self.id, marks=marks)


def F(code: str, rule: str | None = None) -> Expected:
    return (code, rule)


SCHEMA = F("RESPONSE_SCHEMA")
PACKET_SCHEMA = F("PACKET_SCHEMA")
DRAFT_SCHEMA = F("DRAFT_SCHEMA")
UNREADABLE = F("FILE_UNREADABLE")


def ok(id: str, role: str, doc: Doc, **kw: Any) -> Case:
    """An accepted row: exit 0, no finding."""
    return Case(id, role, doc, (), **kw)


def bad(id: str, role: str, doc: Doc, *findings: Expected, **kw: Any) -> Case:
    """A rejected row: exit 1 with exactly `findings` (a multiset)."""
    assert findings, id
    return Case(id, role, doc, tuple(findings), **kw)


def usage(id: str, role: str, doc: Doc, *findings: Expected, **kw: Any) -> Case:
    """A usage error: exit 2 (with `findings` as diagnostics when the output is JSON)."""
    return Case(id, role, doc, tuple(findings), exit_code=2, **kw)


A_ = answer("A")
B_ = answer("B")
CLAIM3 = "/final/claims/2"  # the inference C3: linked from nowhere, safe to vary alone
CIT1 = "/final/citations/1"  # E1 (src/cache.ts 6-8) cited at 7-7, supporting C1
DISP = "/reconciliation/evidence_dispositions"
OBL = "/reconciliation/obligations"

T2048 = "a" * 2048
ASTRAL = "\U0001f600"


def valid_cases() -> list[Case]:
    return [
        ok("valid D answer accepted", "D", answer("D")),
        ok("valid A answer accepted", "A", A_),
        ok("valid B answer accepted", "B", B_),
        ok(
            "valid B answer with --draft and --source accepted",
            "B",
            B_,
            draft=draft(),
            source=SNAPSHOT,
        ),
        ok(
            "valid A answer with --draft and --source accepted",
            "A",
            A_,
            draft=draft(),
            source=SNAPSHOT,
        ),
        ok(
            "A answer with every final array empty accepted (an empty plan is structural)",
            "A",
            answer(
                "A",
                *(
                    put(f"/final/{key}", [])
                    for key in (
                        "claims",
                        "implementation_plan",
                        "verification_plan",
                        "uncertainties",
                        "exclusions",
                        "citations",
                    )
                ),
            ),
        ),
        ok(
            "B answer with dispositions in reverse order accepted",
            "B",
            answer(
                "B", lambda d: mutated(d, DISP, d["reconciliation"]["evidence_dispositions"][::-1])
            ),
        ),
    ]


def role_cases() -> list[Case]:
    mismatch = F("RECONCILIATION_ROLE_MISMATCH", "reconciliation_matches_role")
    return [
        bad("role: B answer checked as role A rejected", "A", B_, mismatch),
        bad("role: B answer checked as role D rejected", "D", B_, mismatch),
        bad("role: A answer (reconciliation null) checked as role B rejected", "B", A_, mismatch),
        bad(
            "role: D answer (reconciliation null) checked as role B rejected",
            "B",
            answer("D"),
            mismatch,
        ),
        ok("role: D answer checked as role A accepted (same shape)", "A", answer("D")),
    ]


def schema_key_type_enum_cases() -> list[Case]:
    return [
        # missing keys, including nullable keys that must be present as null
        bad("schema: missing top-level key final", "A", answer("A", drop("/final")), SCHEMA),
        bad(
            "schema: missing top-level key reconciliation",
            "A",
            answer("A", drop("/reconciliation")),
            SCHEMA,
        ),
        bad(
            "schema: missing final key citations (so nothing source-based is cited)",
            "A",
            answer("A", drop("/final/citations")),
            SCHEMA,
            *[F("CLAIM_SOURCE_UNSUPPORTED", "source_backed_claim_cited")] * 2,
            *[F("SOURCE_BASIS_UNSUPPORTED", "source_basis_cited")] * 2,
        ),
        bad(
            "schema: missing claim key uncertainty_id (nullable, still required)",
            "B",
            answer("B", drop("/final/claims/0/uncertainty_id")),
            SCHEMA,
        ),
        bad(
            "schema: missing claim key evidence_ids",
            "B",
            answer("B", drop("/final/claims/0/evidence_ids")),
            SCHEMA,
        ),
        bad(
            "schema: missing action key verification_limitation (nullable, still required)",
            "B",
            answer("B", drop("/final/implementation_plan/0/verification_limitation")),
            SCHEMA,
        ),
        bad(
            "schema: missing verification key uncertainty_id",
            "B",
            answer("B", drop("/final/verification_plan/0/uncertainty_id")),
            SCHEMA,
        ),
        bad(
            "schema: missing uncertainty key consequence",
            "B",
            answer("B", drop("/final/uncertainties/0/consequence")),
            SCHEMA,
        ),
        bad(
            "schema: missing exclusion key reason",
            "B",
            answer("B", drop("/final/exclusions/0/reason")),
            SCHEMA,
        ),
        bad(
            "schema: missing citation key supports",
            "A",
            answer("A", drop(f"{CIT1}/supports")),
            SCHEMA,
        ),
        bad(
            "schema: missing obligation key basis", "B", answer("B", drop(f"{OBL}/1/basis")), SCHEMA
        ),
        bad(
            "schema: missing reconciliation key evidence_dispositions (6 E IDs undisposed)",
            "B",
            answer("B", drop("/reconciliation/evidence_dispositions")),
            SCHEMA,
            *[F("DISPOSITION_MISSING", "every_evidence_disposed")] * 6,
        ),
        ok(
            "nullable: every nullable key present as null accepted",
            "B",
            answer(
                "B",
                put("/final/implementation_plan/0/verification_limitation", None),
                put("/final/claims/1/uncertainty_id", None),
                put("/final/verification_plan/0/uncertainty_id", None),
            ),
        ),
        ok(
            "nullable: verification_limitation as text beside a V link accepted",
            "B",
            answer(
                "B",
                put(
                    "/final/implementation_plan/0/verification_limitation", "Also reviewed by hand."
                ),
            ),
        ),
        # extra keys
        bad("schema: extra top-level key", "B", answer("B", put("/notes", "x")), SCHEMA),
        bad("schema: extra final key", "B", answer("B", put("/final/summary", "x")), SCHEMA),
        bad(
            "schema: extra claim key",
            "B",
            answer("B", put("/final/claims/0/confidence", 1)),
            SCHEMA,
        ),
        bad("schema: extra citation key", "B", answer("B", put(f"{CIT1}/quote", "x")), SCHEMA),
        bad(
            "schema: extra reconciliation key",
            "B",
            answer("B", put("/reconciliation/notes", "x")),
            SCHEMA,
        ),
        bad(
            "schema: extra obligation key",
            "B",
            answer("B", put(f"{OBL}/0/priority", "high")),
            SCHEMA,
        ),
        bad(
            "schema: extra disposition key", "B", answer("B", put(f"{DISP}/0/reason", "x")), SCHEMA
        ),
        # wrong types
        bad("schema: top level is an array", "A", Doc(lambda: [make_answer("A")]), SCHEMA),
        bad("schema: final is an array", "A", answer("A", put("/final", [])), SCHEMA),
        bad(
            "schema: claims is an object (3 citation links to claims dangle)",
            "A",
            answer("A", put("/final/claims", {})),
            SCHEMA,
            *[F("LINK_DANGLING", "citation_links_resolve")] * 3,
        ),
        bad("schema: claim text is a number", "B", answer("B", put(f"{CLAIM3}/text", 42)), SCHEMA),
        bad(
            "schema: claim evidence_ids is a string",
            "B",
            answer("B", put(f"{CLAIM3}/evidence_ids", "E3")),
            SCHEMA,
        ),
        bad("schema: claim id is a number", "B", answer("B", put(f"{CLAIM3}/id", 3)), SCHEMA),
        bad(
            "schema: verification_limitation is false",
            "B",
            answer("B", put("/final/implementation_plan/0/verification_limitation", False)),
            SCHEMA,
        ),
        bad(
            "schema: uncertainty_id is a list (so it names no U record)",
            "B",
            answer("B", put("/final/claims/3/uncertainty_id", ["U1"])),
            SCHEMA,
            F("LINK_DANGLING", "uncertainty_links_resolve"),
        ),
        bad(
            "schema: a claim's id is a list, named in a finding as JSON (not as Python writes it)",
            "B",
            answer("B", put("/final/claims/0/id", ["C1", "A1"])),
            SCHEMA,
            F("CLAIM_SOURCE_UNSUPPORTED", "source_backed_claim_cited"),
            F("LINK_DANGLING", "citation_links_resolve"),
            F("LINK_DANGLING", "citation_links_resolve"),
            F("LINK_DANGLING", "ledger_links_resolve"),
            F("LINK_DANGLING", "ledger_links_resolve"),
            F("LINK_DANGLING", "ledger_links_resolve"),
            output_has=('"[\\"C1\\", \\"A1\\"]"',),
        ),
        bad(
            "schema: B reconciliation is a list",
            "B",
            answer("B", put("/reconciliation", [])),
            SCHEMA,
        ),
        bad("schema: obligations is null", "B", answer("B", put(f"{OBL}", None)), SCHEMA),
        # bad enums (values are case-sensitive; each record type has its own set)
        bad(
            "enum: claim status `proven`",
            "B",
            answer("B", put(f"{CLAIM3}/status", "proven")),
            SCHEMA,
        ),
        bad(
            "enum: claim status `Inference` (case)",
            "B",
            answer("B", put(f"{CLAIM3}/status", "Inference")),
            SCHEMA,
        ),
        bad(
            "enum: action support_basis `missing_source` (verification only)",
            "B",
            answer("B", put("/final/implementation_plan/1/support_basis", "missing_source")),
            SCHEMA,
        ),
        bad(
            "enum: verification support_basis `none`",
            "B",
            answer("B", put("/final/verification_plan/0/support_basis", "none")),
            SCHEMA,
        ),
        bad(
            "enum: obligation basis `both`", "B", answer("B", put(f"{OBL}/0/basis", "both")), SCHEMA
        ),
        bad(
            "enum: obligation status `done`",
            "B",
            answer("B", put(f"{OBL}/0/status", "done")),
            SCHEMA,
        ),
        bad(
            "enum: disposition status `ignored`",
            "B",
            answer("B", put(f"{DISP}/0/status", "ignored")),
            SCHEMA,
            located=(("RESPONSE_SCHEMA", f"{DISP}/0/status", 201, 19),),
        ),
    ]


def id_cases() -> list[Case]:
    rows = [
        bad(
            f"id grammar: claim id {value!r} rejected",
            "B",
            answer("B", put(f"{CLAIM3}/id", value)),
            SCHEMA,
        )
        for value in (
            "C0",
            "C03",
            "c3",
            "C3 ",
            " C3",
            "C3\n",
            "C",
            "3",
            "CC3",
            "C-3",
            "C+3",
            "A3",
            "C\u0663",
        )
    ]
    rows += [
        ok(f"id grammar: claim id {value!r} accepted", "B", answer("B", put(f"{CLAIM3}/id", value)))
        for value in ("C10", "C3", "C123456789012345678901234567890")
    ]
    rows += [
        bad(
            "id grammar: E ID `E04` in evidence_ids rejected (and not in the packet)",
            "B",
            answer("B", put(f"{CLAIM3}/evidence_ids", ["E3", "E04"])),
            SCHEMA,
            F("EVIDENCE_ID_UNKNOWN", "evidence_ids_supplied"),
        ),
        bad(
            "id grammar: citation supports a U ID rejected",
            "B",
            answer("B", put(f"{CIT1}/supports", ["C1", "U1"])),
            SCHEMA,
        ),
        bad(
            "id grammar: action verification_ids holds an A ID rejected",
            "B",
            answer("B", put("/final/implementation_plan/0/verification_ids", ["V1", "A2"])),
            SCHEMA,
        ),
        bad(
            "id grammar: claim uncertainty_id is a V ID rejected",
            "B",
            answer("B", put("/final/claims/3/uncertainty_id", "V2")),
            SCHEMA,
        ),
        bad(
            "id grammar: obligation id `O0` rejected",
            "B",
            answer("B", put(f"{OBL}/2/id", "O0")),
            SCHEMA,
        ),
        bad(
            "id grammar: obligation final_ids holds an O ID rejected (and dangles)",
            "B",
            answer("B", put(f"{OBL}/2/final_ids", ["U1", "O1"])),
            SCHEMA,
            F("LINK_DANGLING", "ledger_links_resolve"),
        ),
        # unique ID arrays
        bad(
            "unique: claim evidence_ids [E3, E3]",
            "B",
            answer("B", put(f"{CLAIM3}/evidence_ids", ["E3", "E3"])),
            SCHEMA,
        ),
        bad(
            "unique: action verification_ids [V1, V1]",
            "B",
            answer("B", put("/final/implementation_plan/0/verification_ids", ["V1", "V1"])),
            SCHEMA,
        ),
        bad(
            "unique: exclusion evidence_ids [E6, E6]",
            "B",
            answer("B", put("/final/exclusions/0/evidence_ids", ["E6", "E6"])),
            SCHEMA,
        ),
        bad(
            "unique: citation supports [C1, C1]",
            "B",
            answer("B", put(f"{CIT1}/supports", ["C1", "C1"])),
            SCHEMA,
        ),
        bad(
            "unique: obligation final_ids [U1, U1]",
            "B",
            answer("B", put(f"{OBL}/2/final_ids", ["U1", "U1"])),
            SCHEMA,
        ),
        bad(
            "unique: disposition final_ids [U1, U1]",
            "B",
            answer("B", put(f"{DISP}/4/final_ids", ["U1", "U1"])),
            SCHEMA,
        ),
        bad(
            "nonempty: citation supports []",
            "B",
            answer("B", put(f"{CIT1}/supports", [])),
            SCHEMA,
            F("DISPOSITION_USED_UNCITED", "used_disposition_cited"),
        ),
        bad(
            "nonempty: obligation final_ids []",
            "B",
            answer("B", put(f"{OBL}/2/final_ids", [])),
            SCHEMA,
            F("OBLIGATION_UNRESOLVED_UNLINKED", "unresolved_obligation_linked"),
        ),
        bad(
            "nonempty: disposition final_ids []",
            "B",
            answer("B", put(f"{DISP}/4/final_ids", [])),
            SCHEMA,
            F("DISPOSITION_UNRESOLVED_UNLINKED", "unresolved_disposition_linked"),
        ),
    ]
    return rows


def text_cases() -> list[Case]:
    at = f"{CLAIM3}/text"
    rows = [
        bad(f"text: claim text {name} rejected", "B", answer("B", put(at, value)), SCHEMA)
        for name, value in (
            ("empty", ""),
            ("only spaces", "   "),
            ("with a leading space", " C3 holds."),
            ("with a trailing space", "C3 holds. "),
            ("with a trailing newline", "C3 holds.\n"),
            ("with a leading tab", "\tC3 holds."),
            ("with a trailing no-break space", "C3 holds.\u00a0"),
            ("with a trailing ideographic space", "C3 holds.\u3000"),
            ("of 2,049 ASCII characters", T2048 + "a"),
            ("of 2,049 astral characters", ASTRAL * 2049),
        )
    ]
    rows += [
        ok(f"text: claim text {name} accepted", "B", answer("B", put(at, value)))
        for name, value in (
            ("of one character", "x"),
            ("with an inner newline", "C3 holds.\nSee E3."),
            ("of exactly 2,048 ASCII characters", T2048),
            ("of exactly 2,048 astral characters (4 UTF-8 bytes each)", ASTRAL * 2048),
            ("of 1,024 e + combining acute (2,048 scalar values)", "e\u0301" * 1024),
        )
    ]
    rows += [
        ok(
            "text: 2,048 astral characters written as escaped surrogate pairs accepted",
            "B",
            answer(
                "B",
                put(at, "@@ASTRAL@@"),
                text=[replace_once("@@ASTRAL@@", "\\ud83d\\ude00" * 2048)],
            ),
        ),
        bad(
            "text: 2,049 astral characters written as escaped surrogate pairs rejected",
            "B",
            answer(
                "B",
                put(at, "@@ASTRAL@@"),
                text=[replace_once("@@ASTRAL@@", "\\ud83d\\ude00" * 2049)],
            ),
            SCHEMA,
        ),
        bad(
            "text: 1,025 e + combining acute (2,050 scalar values) rejected",
            "B",
            answer("B", put(at, "e\u0301" * 1025)),
            SCHEMA,
        ),
        bad(
            "text: action rationale empty",
            "B",
            answer("B", put("/final/implementation_plan/1/rationale", "")),
            SCHEMA,
        ),
        bad(
            "text: verification method with trailing newline",
            "B",
            answer("B", put("/final/verification_plan/1/method", "List the callers.\n")),
            SCHEMA,
        ),
        bad(
            "text: uncertainty verification_step only whitespace",
            "B",
            answer("B", put("/final/uncertainties/0/verification_step", " \n ")),
            SCHEMA,
        ),
        bad(
            "text: exclusion reason with leading space",
            "B",
            answer("B", put("/final/exclusions/0/reason", " Out of scope.")),
            SCHEMA,
        ),
        bad(
            "text: obligation text of 2,049 characters",
            "B",
            answer("B", put(f"{OBL}/0/text", T2048 + "b")),
            SCHEMA,
        ),
        bad(
            "text: verification_limitation empty string (not null)",
            "B",
            answer("B", put("/final/implementation_plan/1/verification_limitation", "")),
            SCHEMA,
        ),
    ]
    return rows


LIMITS: list[tuple[str, Callable[[int], Any], int]] = [
    ("claims", unknown_claim, 32),
    ("implementation_plan", task_action, 32),
    ("verification_plan", task_verification, 32),
    ("uncertainties", uncertainty, 32),
    ("exclusions", exclusion, 64),
    ("citations", repeated_citation, 128),
]


def limit_cases() -> list[Case]:
    rows: list[Case] = []
    for key, make, limit in LIMITS:
        rows.append(
            ok(
                f"limit: {key} with {limit} items accepted",
                "B",
                answer("B", fill(f"/final/{key}", make, limit)),
            )
        )
        rows.append(
            bad(
                f"limit: {key} with {limit + 1} items rejected",
                "B",
                answer("B", fill(f"/final/{key}", make, limit + 1)),
                SCHEMA,
            )
        )
    rows += [
        ok("limit: 1 obligation accepted", "B", answer("B", fill(OBL, unresolved_obligation, 1))),
        ok(
            "limit: 16 obligations accepted", "B", answer("B", fill(OBL, unresolved_obligation, 16))
        ),
        bad(
            "limit: 0 obligations rejected",
            "B",
            answer("B", fill(OBL, unresolved_obligation, 0)),
            SCHEMA,
        ),
        bad(
            "limit: 17 obligations rejected",
            "B",
            answer("B", fill(OBL, unresolved_obligation, 17)),
            SCHEMA,
        ),
    ]
    return rows


def path_cases() -> list[Case]:
    """The path grammar is the same in the packet and in citations: each row sets it in both
    packet item E1 and the citation of E1 (so they still agree)."""

    def both(path: str) -> dict[str, Any]:
        return {
            "role": "B",
            "doc": answer("B", put(f"{CIT1}/path", path)),
            "packet": packet(put("/items/0/path", path)),
        }

    rows = []
    for path in ("src/a.ts", "a.ts", "src/a..b.ts", "src/..a.ts", "src/.hidden/a.ts"):
        kw = both(path)
        rows.append(ok(f"path: {path!r} accepted", kw["role"], kw["doc"], packet=kw["packet"]))
    for path in ("/src/a.ts", "../a.ts", "src/../a.ts", "src/..", "..", "src//a.ts", "src/"):
        kw = both(path)
        rows.append(
            bad(
                f"path: {path!r} rejected",
                kw["role"],
                kw["doc"],
                PACKET_SCHEMA,
                SCHEMA,
                packet=kw["packet"],
            )
        )
    kw = both("")
    rows.append(
        bad(
            "path: '' rejected (too short and no match, in each document)",
            kw["role"],
            kw["doc"],
            PACKET_SCHEMA,
            PACKET_SCHEMA,
            SCHEMA,
            SCHEMA,
            packet=kw["packet"],
        )
    )
    return rows


def line_cases() -> list[Case]:
    outside = F("CITATION_OUTSIDE_EVIDENCE", "citation_within_evidence_lines")
    start = f"{CIT1}/start_line"
    return [
        bad(
            "line: citation start_line 0 rejected",
            "B",
            answer("B", put(start, 0)),
            SCHEMA,
            outside,
            located=(("RESPONSE_SCHEMA", start, 119, 23),),
        ),
        bad(
            "line: citation start_line -1 rejected",
            "B",
            answer("B", put(start, -1)),
            SCHEMA,
            outside,
        ),
        bad(
            "line: citation start_line 1.0 rejected (a JSON integer has no fraction)",
            "B",
            answer("B", put(start, 1.0)),
            SCHEMA,
            outside,
        ),
        bad(
            "line: citation start_line 1.5 rejected",
            "B",
            answer("B", put(start, 1.5)),
            SCHEMA,
            outside,
        ),
        bad("line: citation start_line true rejected", "B", answer("B", put(start, True)), SCHEMA),
        bad(
            "line: citation start_line 7.0 rejected although inside E1",
            "B",
            answer("B", put(start, 7.0)),
            SCHEMA,
        ),
        bad(
            "line: citation start_line 7e0 rejected although inside E1",
            "B",
            answer("B", text=[replace_once('"start_line": 7,', '"start_line": 7e0,')]),
            SCHEMA,
        ),
        bad(
            "line: citation end_line 7.5 rejected although inside E1",
            "B",
            answer("B", put(f"{CIT1}/end_line", 7.5)),
            SCHEMA,
        ),
        bad(
            'line: citation start_line "7" (a string) rejected',
            "B",
            answer("B", put(start, "7")),
            SCHEMA,
        ),
        bad("line: citation start_line null rejected", "B", answer("B", put(start, None)), SCHEMA),
        bad(
            "line: citation end_line 2**64 is an integer but outside E1",
            "B",
            answer("B", put(f"{CIT1}/end_line", 2**64)),
            outside,
        ),
        bad(
            "line: packet item start_line 3.0 rejected",
            "A",
            answer("A"),
            PACKET_SCHEMA,
            packet=packet(put("/items/4/start_line", 3.0)),
        ),
        bad(
            "line: packet item end_line 0 rejected",
            "A",
            answer("A"),
            PACKET_SCHEMA,
            F("EVIDENCE_RANGE", "evidence_range_ordered"),
            packet=packet(put("/items/4/end_line", 0)),
        ),
    ]


def json_cases() -> list[Case]:
    """Strict JSON: each problem is reported with its code at its line:column; nothing else
    is checked in a document that is not JSON."""
    return [
        bad(
            "json: duplicate key `id` in claim C1",
            "B",
            answer("B", text=[replace_once('"id": "C1",', '"id": "C1",\n        "id": "C1",')]),
            F("JSON_DUPLICATE_KEY"),
            located=(("JSON_DUPLICATE_KEY", "/final/claims/0/id", 6, 9),),
        ),
        bad(
            "json: NaN as a citation line",
            "B",
            answer("B", text=[replace_once('"start_line": 20', '"start_line": NaN')]),
            F("JSON_NON_FINITE"),
            located=(("JSON_NON_FINITE", "/final/citations/0/start_line", 108, 23),),
        ),
        bad(
            "json: Infinity as a citation line",
            "B",
            answer("B", text=[replace_once('"end_line": 23', '"end_line": Infinity')]),
            F("JSON_NON_FINITE"),
        ),
        bad(
            "json: -Infinity as a citation line",
            "B",
            answer("B", text=[replace_once('"end_line": 23', '"end_line": -Infinity')]),
            F("JSON_NON_FINITE"),
        ),
        bad(
            "json: 1e400 overflows a 64-bit float",
            "B",
            answer("B", text=[replace_once('"end_line": 23', '"end_line": 1e400')]),
            F("JSON_NUMBER_RANGE"),
        ),
        bad(
            "json: a number a 64-bit float would read as another (1e-400 as zero)",
            "B",
            answer("B", text=[replace_once('"end_line": 23', '"end_line": 1e-400')]),
            F("JSON_NUMBER_RANGE"),
        ),
        bad(
            "json: trailing data after the document",
            "B",
            answer("B", raw=lambda data: data + b"{}"),
            F("JSON_TRAILING_DATA"),
            located=(("JSON_TRAILING_DATA", None, 245, 1),),
        ),
        bad(
            "json: invalid UTF-8 byte in a claim text",
            "B",
            answer("B", raw=lambda data: data.replace(b"get()", b"get\xff()", 1)),
            F("JSON_INVALID_UTF8"),
            located=(("JSON_INVALID_UTF8", None, 6, 21),),
        ),
        bad(
            "json: UTF-8 byte-order mark",
            "B",
            answer("B", raw=lambda data: b"\xef\xbb\xbf" + data),
            F("JSON_INVALID_UTF8"),
            located=(("JSON_INVALID_UTF8", None, 1, 1),),
        ),
        bad(
            "json: escaped lone surrogate in a text",
            "B",
            answer(
                "B",
                put(f"{CLAIM3}/text", "@@S@@"),
                text=[replace_once("@@S@@", "bad \\ud800 text")],
            ),
            F("JSON_LONE_SURROGATE"),
        ),
        bad(
            "json: truncated document",
            "B",
            answer("B", raw=lambda data: data[:-3]),
            F("JSON_SYNTAX"),
        ),
        bad(
            "json: sparse array [E3,,E1]",
            "B",
            answer("B", text=[replace_once('"E3",\n          "E1"', '"E3",,\n          "E1"')]),
            F("JSON_SYNTAX"),
        ),
        bad("json: empty file", "B", answer("B", raw=lambda data: b""), F("JSON_SYNTAX")),
        bad(
            "json: duplicate key and NaN both reported in one pass",
            "B",
            answer(
                "B",
                text=[
                    replace_once('"id": "C1",', '"id": "C1",\n        "id": "C1",'),
                    replace_once('"start_line": 20', '"start_line": NaN'),
                ],
            ),
            F("JSON_DUPLICATE_KEY"),
            F("JSON_NON_FINITE"),
        ),
        bad(
            "json: duplicate key in the packet",
            "A",
            A_,
            F("JSON_DUPLICATE_KEY"),
            packet=packet(
                text=[
                    replace_once('"packet_id": "P1",', '"packet_id": "P1",\n  "packet_id": "P1",')
                ]
            ),
            located=(("JSON_DUPLICATE_KEY", "/packet_id", 3, 3),),
        ),
        bad(
            "json: NaN in the draft",
            "A",
            A_,
            F("JSON_NON_FINITE"),
            draft=draft(text=[replace_once('"start_line": 20', '"start_line": NaN')]),
        ),
        bad(
            "draft: draft that breaks the schema is reported as DRAFT_SCHEMA",
            "A",
            A_,
            DRAFT_SCHEMA,
            draft=draft(put("/final/claims/0/status", "proven")),
        ),
    ]


def link_cases() -> list[Case]:
    def r(code: str, rule: str) -> Expected:
        return F(code, rule)

    unknown_e = r("EVIDENCE_ID_UNKNOWN", "evidence_ids_supplied")
    dangling = {
        "uncertainty": r("LINK_DANGLING", "uncertainty_links_resolve"),
        "verification": r("LINK_DANGLING", "verification_links_resolve"),
        "citation": r("LINK_DANGLING", "citation_links_resolve"),
        "ledger": r("LINK_DANGLING", "ledger_links_resolve"),
    }
    dup = r("ID_DUPLICATE", "record_ids_unique")
    used_uncited = r("DISPOSITION_USED_UNCITED", "used_disposition_cited")
    return [
        # claims
        bad(
            "claim: source_backed C2 without evidence",
            "B",
            answer("B", put("/final/claims/1/evidence_ids", [])),
            r("CLAIM_SOURCE_UNSUPPORTED", "source_backed_claim_cited"),
            located=(("CLAIM_SOURCE_UNSUPPORTED", "/final/claims/1", 14, 7),),
        ),
        bad(
            "claim: source_backed C2 without a citation",
            "A",
            answer("A", drop("/final/citations/2")),
            r("CLAIM_SOURCE_UNSUPPORTED", "source_backed_claim_cited"),
        ),
        bad(
            "claim: source_backed C2 cited only through evidence it does not name",
            "A",
            answer("A", put("/final/claims/1/evidence_ids", ["E3"])),
            r("CLAIM_SOURCE_UNSUPPORTED", "source_backed_claim_cited"),
        ),
        ok("claim: source_backed claim with evidence and a citation of it accepted", "B", B_),
        bad(
            "claim: inference C3 without premises",
            "B",
            answer("B", put(f"{CLAIM3}/evidence_ids", [])),
            r("CLAIM_INFERENCE_WITHOUT_PREMISES", "inference_claim_has_premises"),
        ),
        ok("claim: inference with premises and no citation accepted", "B", B_),
        bad(
            "claim: unknown C4 without a U link",
            "B",
            answer("B", put("/final/claims/3/uncertainty_id", None)),
            r("CLAIM_UNKNOWN_WITHOUT_UNCERTAINTY", "unknown_claim_links_uncertainty"),
        ),
        # actions and verifications
        bad(
            "action: source-based A1 without evidence",
            "B",
            answer("B", put("/final/implementation_plan/0/evidence_ids", [])),
            r("SOURCE_BASIS_UNSUPPORTED", "source_basis_cited"),
        ),
        bad(
            "action: source-based A1 uncited",
            "B",
            answer("B", put("/final/citations/0/supports", ["C1", "V1"])),
            r("SOURCE_BASIS_UNSUPPORTED", "source_basis_cited"),
        ),
        bad(
            "verification: source-based V1 uncited",
            "A",
            answer(
                "A", put("/final/citations/0/supports", ["C1", "A1"]), drop("/final/citations/3")
            ),
            r("SOURCE_BASIS_UNSUPPORTED", "source_basis_cited"),
        ),
        ok(
            "verification: task-based V2 with empty evidence and no U link accepted",
            "B",
            answer(
                "B",
                put("/final/verification_plan/1/support_basis", "task"),
                put("/final/verification_plan/1/uncertainty_id", None),
            ),
        ),
        bad(
            "verification: missing_source V2 without a U link",
            "B",
            answer("B", put("/final/verification_plan/1/uncertainty_id", None)),
            r("MISSING_SOURCE_WITHOUT_UNCERTAINTY", "missing_source_links_uncertainty"),
        ),
        bad(
            "action: A2 without a V link and with a null limitation",
            "B",
            answer("B", put("/final/implementation_plan/1/verification_limitation", None)),
            r("ACTION_UNVERIFIED", "action_verified_or_limited"),
        ),
        ok("action: A2 with a limitation and no V link accepted", "B", B_),
        # obligations
        bad(
            "obligation: addressed O1 with only a V link (no C/A)",
            "B",
            answer("B", put(f"{OBL}/0/final_ids", ["V1"])),
            r("OBLIGATION_ADDRESSED_UNLINKED", "addressed_obligation_linked"),
        ),
        bad(
            "obligation: addressed O1 with C links and no V link",
            "B",
            answer("B", put(f"{OBL}/0/final_ids", ["C1", "C2"])),
            r("OBLIGATION_ADDRESSED_UNLINKED", "addressed_obligation_linked"),
        ),
        bad(
            "obligation: addressed O2 with A1 (no limitation) and no V link",
            "B",
            answer("B", put(f"{OBL}/1/final_ids", ["A1"])),
            r("OBLIGATION_ADDRESSED_UNLINKED", "addressed_obligation_linked"),
        ),
        bad(
            "obligation: addressed O1 with only a U link",
            "B",
            answer("B", put(f"{OBL}/0/final_ids", ["U1"])),
            r("OBLIGATION_ADDRESSED_UNLINKED", "addressed_obligation_linked"),
        ),
        ok(
            "obligation: addressed O1 by an A link with a verification_limitation accepted",
            "B",
            answer("B", put(f"{OBL}/0/final_ids", ["A2"])),
        ),
        ok(
            "obligation: addressed O1 by a C link plus an A link with a limitation accepted",
            "B",
            answer("B", put(f"{OBL}/0/final_ids", ["C1", "A2"])),
        ),
        bad(
            "obligation: source-based addressed O2 without evidence",
            "B",
            answer("B", put(f"{OBL}/1/evidence_ids", [])),
            r("OBLIGATION_SOURCE_WITHOUT_EVIDENCE", "source_obligation_has_evidence"),
        ),
        ok(
            "obligation: task-based addressed O1 without evidence accepted",
            "B",
            answer("B", put(f"{OBL}/0/evidence_ids", [])),
        ),
        ok("obligation: source-based excluded O4 needs no addressed links accepted", "B", B_),
        bad(
            "obligation: unresolved O3 without a U link",
            "B",
            answer("B", put(f"{OBL}/2/final_ids", ["C4"])),
            r("OBLIGATION_UNRESOLVED_UNLINKED", "unresolved_obligation_linked"),
        ),
        bad(
            "obligation: excluded O4 without an X link",
            "B",
            answer("B", put(f"{OBL}/3/final_ids", ["U1"])),
            r("OBLIGATION_EXCLUDED_UNLINKED", "excluded_obligation_linked"),
        ),
        # dispositions
        bad(
            "disposition: used E4 whose C1 link is cited only through other E IDs",
            "B",
            answer("B", put(f"{DISP}/3/final_ids", ["C1"])),
            used_uncited,
            located=(("DISPOSITION_USED_UNCITED", f"{DISP}/3", 221, 7),),
        ),
        bad(
            "disposition: used E4 with only a U link",
            "B",
            answer("B", put(f"{DISP}/3/final_ids", ["U1"])),
            used_uncited,
        ),
        bad(
            "disposition: used E4 whose citation was removed",
            "B",
            answer("B", drop("/final/citations/2")),
            used_uncited,
            r("CLAIM_SOURCE_UNSUPPORTED", "source_backed_claim_cited"),
        ),
        bad(
            "disposition: used E6 by an X link, even one cited from E6 (X is not C/A/V)",
            "B",
            answer(
                "B",
                push("/final/citations", citation("E6", "src/store.ts", 9, 11, ["X1"])),
                put(f"{DISP}/5/status", "used"),
            ),
            used_uncited,
        ),
        ok(
            "disposition: used E6 by a C link cited from E6 accepted",
            "B",
            answer(
                "B",
                push("/final/citations", citation("E6", "src/store.ts", 9, 11, ["C3"])),
                put(f"{DISP}/5", disposition("E6", "used", ["C3"])),
            ),
        ),
        bad(
            "disposition: excluded E5 whose X1 does not include E5",
            "B",
            answer("B", put(f"{DISP}/4", disposition("E5", "excluded", ["X1"]))),
            r("DISPOSITION_EXCLUDED_UNLINKED", "excluded_disposition_linked"),
        ),
        bad(
            "disposition: excluded E6 with only a U link",
            "B",
            answer("B", put(f"{DISP}/5/final_ids", ["U1"])),
            r("DISPOSITION_EXCLUDED_UNLINKED", "excluded_disposition_linked"),
        ),
        ok(
            "disposition: excluded E5 whose X1 includes E5 accepted",
            "B",
            answer(
                "B",
                put("/final/exclusions/0/evidence_ids", ["E6", "E5"]),
                put(f"{DISP}/4", disposition("E5", "excluded", ["X1"])),
            ),
        ),
        bad(
            "disposition: unresolved E5 without a U link",
            "B",
            answer("B", put(f"{DISP}/4/final_ids", ["C4"])),
            r("DISPOSITION_UNRESOLVED_UNLINKED", "unresolved_disposition_linked"),
        ),
        # E IDs that name no packet item
        bad(
            "E ID: claim C3 names E9",
            "B",
            answer("B", put(f"{CLAIM3}/evidence_ids", ["E3", "E9"])),
            unknown_e,
        ),
        bad(
            "E ID: action A1 names E9",
            "B",
            answer("B", put("/final/implementation_plan/0/evidence_ids", ["E3", "E9"])),
            unknown_e,
        ),
        bad(
            "E ID: verification V1 names E9",
            "B",
            answer("B", put("/final/verification_plan/0/evidence_ids", ["E3", "E2", "E9"])),
            unknown_e,
        ),
        bad(
            "E ID: exclusion X1 names E9",
            "B",
            answer("B", put("/final/exclusions/0/evidence_ids", ["E6", "E9"])),
            unknown_e,
        ),
        bad(
            "E ID: obligation O1 names E9",
            "B",
            answer("B", put(f"{OBL}/0/evidence_ids", ["E3", "E4", "E9"])),
            unknown_e,
        ),
        bad(
            "E ID: citation of E9",
            "A",
            answer("A", put(f"{CIT1}/evidence_id", "E9")),
            r("EVIDENCE_ID_UNKNOWN", "citation_evidence_supplied"),
        ),
        bad(
            "E ID: disposition of E9 (C13 invented)",
            "B",
            answer("B", push(DISP, disposition("E9", "unresolved", ["U1"]))),
            r("DISPOSITION_EVIDENCE_UNKNOWN", "disposition_evidence_supplied"),
        ),
        # links to IDs that are nowhere
        bad(
            "dangling: claim C4 uncertainty_id U9",
            "B",
            answer("B", put("/final/claims/3/uncertainty_id", "U9")),
            dangling["uncertainty"],
        ),
        bad(
            "dangling: verification V2 uncertainty_id U9",
            "B",
            answer("B", put("/final/verification_plan/1/uncertainty_id", "U9")),
            dangling["uncertainty"],
        ),
        bad(
            "dangling: action A1 verification_ids V9",
            "B",
            answer("B", put("/final/implementation_plan/0/verification_ids", ["V1", "V9"])),
            dangling["verification"],
        ),
        bad(
            "dangling: citation supports C9",
            "B",
            answer("B", put(f"{CIT1}/supports", ["C1", "C9"])),
            dangling["citation"],
        ),
        bad(
            "dangling: obligation O1 final_ids X9",
            "B",
            answer("B", put(f"{OBL}/0/final_ids", ["C1", "C2", "V1", "X9"])),
            dangling["ledger"],
        ),
        bad(
            "dangling: disposition E5 final_ids U9",
            "B",
            answer("B", put(f"{DISP}/4/final_ids", ["U1", "U9"])),
            dangling["ledger"],
        ),
        # IDs unique within their type (each record that shares the ID is reported)
        bad(
            "duplicate ID: claims C3 and C4 both C4",
            "B",
            answer("B", put(f"{CLAIM3}/id", "C4")),
            dup,
            dup,
        ),
        bad(
            "duplicate ID: actions A1 and A2 both A2",
            "B",
            answer(
                "B",
                put("/final/implementation_plan/0/id", "A2"),
                put("/final/citations/0/supports", ["C1", "A2", "V1"]),
                put(f"{OBL}/1/final_ids", ["A2", "V1"]),
                put(f"{DISP}/2/final_ids", ["C1", "A2"]),
            ),
            dup,
            dup,
        ),
        bad(
            "duplicate ID: verifications V1 and V2 both V2",
            "A",
            answer(
                "A",
                put("/final/verification_plan/0/id", "V2"),
                put("/final/implementation_plan/0/verification_ids", ["V2"]),
                put("/final/citations/0/supports", ["C1", "A1", "V2"]),
                put("/final/citations/3/supports", ["V2"]),
            ),
            dup,
            dup,
        ),
        bad(
            "duplicate ID: uncertainty U1 twice",
            "B",
            answer("B", push("/final/uncertainties", uncertainty(1))),
            dup,
            dup,
        ),
        bad(
            "duplicate ID: exclusion X1 twice",
            "B",
            answer("B", push("/final/exclusions", exclusion(1, ["E6"]))),
            dup,
            dup,
        ),
        bad(
            "duplicate ID: obligations O1 and O2 both O1",
            "B",
            answer("B", put(f"{OBL}/1/id", "O1")),
            dup,
            dup,
        ),
        ok("duplicate ID: the same number in two types (C1, A1, V1, ...) accepted", "B", B_),
        # citations
        bad(
            "citation: path src/store.ts for E1 of src/cache.ts",
            "B",
            answer("B", put(f"{CIT1}/path", "src/store.ts")),
            r("CITATION_PATH_MISMATCH", "citation_names_evidence_path"),
        ),
        bad(
            "citation: start 23 > end 20",
            "B",
            answer(
                "B",
                put("/final/citations/0/start_line", 23),
                put("/final/citations/0/end_line", 20),
            ),
            r("CITATION_RANGE", "citation_range_ordered"),
        ),
        bad(
            "citation: E1 (6-8) cited at 5-7",
            "B",
            answer("B", put(f"{CIT1}/start_line", 5)),
            r("CITATION_OUTSIDE_EVIDENCE", "citation_within_evidence_lines"),
        ),
        bad(
            "citation: E1 (6-8) cited at 7-9 (line 9 is E2's)",
            "B",
            answer("B", put(f"{CIT1}/end_line", 9)),
            r("CITATION_OUTSIDE_EVIDENCE", "citation_within_evidence_lines"),
        ),
        ok(
            "citation: E1 cited at its whole range 6-8 accepted",
            "B",
            answer("B", put(f"{CIT1}/start_line", 6), put(f"{CIT1}/end_line", 8)),
        ),
    ]


def c09_cases() -> list[Case]:
    outside = F("CITATION_OUTSIDE_EVIDENCE", "citation_within_evidence_lines")
    cite_e6 = "/final/citations/-"
    return [
        ok(
            "C09: E6 (store.ts 9-11, file's last line) cited at its real last line 11 accepted",
            "B",
            answer("B", put(cite_e6, citation("E6", "src/store.ts", 11, 11, ["X1"]))),
            source=SNAPSHOT,
        ),
        bad(
            "C09: E6 cited at 9-12, the phantom line after the file's final newline",
            "B",
            answer("B", put(cite_e6, citation("E6", "src/store.ts", 9, 12, ["X1"]))),
            outside,
            source=SNAPSHOT,
            located=(("CITATION_OUTSIDE_EVIDENCE", "/final/citations/4", 143, 7),),
        ),
        bad(
            "C09: E6 cited at the phantom line 12 alone",
            "B",
            answer("B", put(cite_e6, citation("E6", "src/store.ts", 12, 12, ["X1"]))),
            outside,
        ),
        ok(
            "C09: E1 (6-8) whose last line is blank, cited at 8 accepted",
            "B",
            answer("B", put(f"{CIT1}/start_line", 8), put(f"{CIT1}/end_line", 8)),
        ),
        bad(
            "C09: packet stretches E6 to the phantom line 12 and a citation uses it",
            "B",
            answer("B", put(cite_e6, citation("E6", "src/store.ts", 9, 12, ["X1"]))),
            F("EVIDENCE_TEXT_LINES", "evidence_text_is_its_lines"),
            # the snapshot has no line 12: the excerpt is not those lines of the source
            F("SOURCE_TEXT_MISMATCH", "evidence_text_authentic"),
            outside,
            packet=packet(put("/items/5/end_line", 12)),
            source=SNAPSHOT,
        ),
    ]


def c12_cases() -> list[Case]:
    stale = {
        "uncertainty": F("LINK_STALE_DRAFT", "uncertainty_links_not_stale"),
        "verification": F("LINK_STALE_DRAFT", "verification_links_not_stale"),
        "citation": F("LINK_STALE_DRAFT", "citation_links_not_stale"),
        "ledger": F("LINK_STALE_DRAFT", "ledger_links_not_stale"),
    }
    dangling = {
        "uncertainty": F("LINK_DANGLING", "uncertainty_links_resolve"),
        "verification": F("LINK_DANGLING", "verification_links_resolve"),
        "citation": F("LINK_DANGLING", "citation_links_resolve"),
        "ledger": F("LINK_DANGLING", "ledger_links_resolve"),
    }
    links: list[tuple[str, str, Edit]] = [
        (
            "claim C4 uncertainty_id -> draft-only U2",
            "uncertainty",
            put("/final/claims/3/uncertainty_id", "U2"),
        ),
        (
            "verification V2 uncertainty_id -> draft-only U2",
            "uncertainty",
            put("/final/verification_plan/1/uncertainty_id", "U2"),
        ),
        (
            "action A1 verification_ids -> draft-only V3",
            "verification",
            put("/final/implementation_plan/0/verification_ids", ["V1", "V3"]),
        ),
        (
            "citation supports -> draft-only A3 (deleted action)",
            "citation",
            put(f"{CIT1}/supports", ["C1", "A3"]),
        ),
        ("citation supports -> draft-only C5", "citation", put(f"{CIT1}/supports", ["C1", "C5"])),
        (
            "obligation O4 final_ids -> draft-only X2",
            "ledger",
            put(f"{OBL}/3/final_ids", ["X1", "X2"]),
        ),
        (
            "disposition E3 final_ids -> draft-only A3",
            "ledger",
            put(f"{DISP}/2/final_ids", ["C1", "A1", "A3"]),
        ),
    ]
    rows = []
    for name, kind, edit in links:
        rows.append(
            bad(
                f"C12: {name}, with --draft -> LINK_STALE_DRAFT",
                "B",
                answer("B", edit),
                stale[kind],
                draft=RICH_DRAFT,
            )
        )
        rows.append(
            bad(
                f"C12: {name}, without --draft -> LINK_DANGLING",
                "B",
                answer("B", edit),
                dangling[kind],
            )
        )
    rows += [
        ok(
            "C12: links to IDs in both the draft and the answer accepted with --draft",
            "B",
            B_,
            draft=RICH_DRAFT,
        ),
        bad(
            "C12: citation supports A9, in neither draft nor answer, with --draft -> LINK_DANGLING",
            "B",
            answer("B", put(f"{CIT1}/supports", ["C1", "A9"])),
            dangling["citation"],
            draft=RICH_DRAFT,
        ),
        bad(
            "C12: A1 renumbered A5 but a citation still supports the draft's A1",
            "B",
            answer(
                "B",
                put("/final/implementation_plan/0/id", "A5"),
                put(f"{OBL}/1/final_ids", ["A5", "V1"]),
                put(f"{DISP}/2/final_ids", ["C1", "A5"]),
            ),
            stale["citation"],
            F("SOURCE_BASIS_UNSUPPORTED", "source_basis_cited"),
            draft=draft(),
            located=(("LINK_STALE_DRAFT", "/final/citations/0/supports/1", 112, 11),),
        ),
    ]
    return rows


def c13_cases() -> list[Case]:
    missing = F("DISPOSITION_MISSING", "every_evidence_disposed")
    duplicate = F("DISPOSITION_DUPLICATE", "evidence_disposed_once")
    unknown = F("DISPOSITION_EVIDENCE_UNKNOWN", "disposition_evidence_supplied")
    return [
        bad(
            "C13: missing disposition of E5",
            "B",
            answer("B", drop(f"{DISP}/4")),
            missing,
            located=(("DISPOSITION_MISSING", "/reconciliation", 145, 21),),
        ),
        bad(
            "C13: no dispositions at all (6 missing)",
            "B",
            answer("B", put(DISP, [])),
            *[missing] * 6,
        ),
        bad(
            "C13: duplicated disposition of E1",
            "B",
            answer("B", push(DISP, disposition("E1", "used", ["C1"]))),
            duplicate,
        ),
        bad(
            "C13: duplicated E1 replaces E2 (right count, wrong set)",
            "B",
            answer("B", put(f"{DISP}/1", disposition("E1", "used", ["C1"]))),
            duplicate,
            missing,
        ),
        bad(
            "C13: substituted E6 -> E9 (E6 missing, E9 unknown, X1 does not name E9)",
            "B",
            answer("B", put(f"{DISP}/5/evidence_id", "E9")),
            missing,
            unknown,
            F("DISPOSITION_EXCLUDED_UNLINKED", "excluded_disposition_linked"),
        ),
        bad(
            "C13: substituted E5 -> E9 (E5 missing, E9 unknown)",
            "B",
            answer("B", put(f"{DISP}/4/evidence_id", "E9")),
            missing,
            unknown,
        ),
        bad(
            "C13: invented extra disposition of E9",
            "B",
            answer("B", push(DISP, disposition("E9", "unresolved", ["U1"]))),
            unknown,
        ),
    ]


def _packet_with(extra: int) -> list[tuple[str, str, int, int]]:
    return PACKET_ITEMS + EXTRA_ITEMS[:extra]


def packet_cases() -> list[Case]:
    size = F("PACKET_SIZE", "packet_item_count")
    text_lines = F("EVIDENCE_TEXT_LINES", "evidence_text_is_its_lines")
    missing = F("SOURCE_FILE_MISSING", "evidence_file_in_snapshot")
    hash_bad = F("SOURCE_HASH_MISMATCH", "evidence_file_hash_authentic")
    text_bad = F("SOURCE_TEXT_MISMATCH", "evidence_text_authentic")
    e5 = "/items/4"
    return [
        bad(
            "packet: 5 items rejected",
            "A",
            A_,
            size,
            packet=packet(items=[i for i in PACKET_ITEMS if i[0] != "E5"]),
        ),
        ok("packet: 6 items accepted", "A", A_, packet=packet(), source=SNAPSHOT),
        ok(
            "packet: 12 items accepted",
            "A",
            A_,
            packet=packet(items=_packet_with(6)),
            source=SNAPSHOT,
        ),
        ok(
            "packet: 12 items with 12 dispositions accepted for B",
            "B",
            answer(
                "B", *(push(DISP, disposition(f"E{k}", "unresolved", ["U1"])) for k in range(7, 13))
            ),
            packet=packet(items=_packet_with(6)),
            source=SNAPSHOT,
        ),
        bad("packet: 13 items rejected", "A", A_, size, packet=packet(items=_packet_with(7))),
        bad(
            "packet: 0 items rejected",
            "A",
            answer(
                "A",
                *(
                    put(f"/final/{k}", [])
                    for k in (
                        "claims",
                        "implementation_plan",
                        "verification_plan",
                        "exclusions",
                        "citations",
                    )
                ),
            ),
            size,
            packet=packet(put("/items", [])),
        ),
        bad(
            "packet: duplicate E ID (E6 twice; each item reported)",
            "A",
            A_,
            F("EVIDENCE_ID_DUPLICATE", "evidence_ids_unique"),
            F("EVIDENCE_ID_DUPLICATE", "evidence_ids_unique"),
            packet=packet(lambda p: mutated(p, "/items/-", p["items"][5])),
        ),
        bad(
            "packet: E5 start 3 > end 2",
            "A",
            A_,
            F("EVIDENCE_RANGE", "evidence_range_ordered"),
            packet=packet(put(f"{e5}/end_line", 2)),
        ),
        bad(
            "packet: E5 text with an extra phantom newline",
            "A",
            A_,
            text_lines,
            packet=packet(lambda p: mutated(p, f"{e5}/text", p["items"][4]["text"] + "\n")),
        ),
        bad(
            "packet: E5 range 3-4 for a one-line text",
            "A",
            A_,
            text_lines,
            packet=packet(put(f"{e5}/end_line", 4)),
        ),
        bad(
            "packet: E1 text without its blank last line",
            "A",
            A_,
            text_lines,
            packet=packet(lambda p: mutated(p, "/items/0/text", p["items"][0]["text"][:-1])),
        ),
        bad(
            "packet: E5 text empty for a one-line range",
            "A",
            A_,
            text_lines,
            packet=packet(put(f"{e5}/text", "")),
        ),
        ok(
            "packet: E5 text lacking its final newline keeps its line count (no --source: ok)",
            "A",
            A_,
            packet=packet(lambda p: mutated(p, f"{e5}/text", p["items"][4]["text"][:-1])),
        ),
        bad(
            "source: E5 text without its final newline differs from the snapshot",
            "A",
            A_,
            text_bad,
            packet=packet(lambda p: mutated(p, f"{e5}/text", p["items"][4]["text"][:-1])),
            source=SNAPSHOT,
        ),
        bad(
            "source: file src/store.ts missing (E5, E6)",
            "A",
            A_,
            missing,
            missing,
            source=snapshot(_delete("src/store.ts")),
        ),
        bad(
            "source: src/store.ts changed after its last line (hash only; E5, E6)",
            "A",
            A_,
            hash_bad,
            hash_bad,
            source=snapshot(_append("src/store.ts", b"// appended\n")),
        ),
        bad(
            "source: one byte of packet E3's text altered",
            "A",
            A_,
            text_bad,
            packet=packet(
                lambda p: mutated(p, "/items/2/text", p["items"][2]["text"].replace("<=", ">=", 1))
            ),
            source=SNAPSHOT,
            located=(("SOURCE_TEXT_MISMATCH", "/items/2", 23, 5),),
        ),
        ok(
            "source: one altered byte of E3's text is not detectable without --source",
            "A",
            A_,
            packet=packet(
                lambda p: mutated(p, "/items/2/text", p["items"][2]["text"].replace("<=", ">=", 1))
            ),
        ),
        bad(
            "source: one byte of the snapshot inside E5 altered (hash E5, E6; text E5)",
            "A",
            A_,
            hash_bad,
            hash_bad,
            text_bad,
            source=snapshot(_replace_bytes("src/store.ts", b"Date.now()", b"Date.now[]")),
        ),
        bad(
            "source: packet file_sha256 of E5 altered",
            "A",
            A_,
            hash_bad,
            packet=packet(put(f"{e5}/file_sha256", "f" * 64)),
            source=SNAPSHOT,
        ),
        bad(
            "source: packet path ../x escapes the root: schema rejects it and it is never read",
            "A",
            A_,
            PACKET_SCHEMA,
            missing,
            packet=packet(put(f"{e5}/path", "../x")),
            source=snapshot(_outside_copy("x")),
        ),
        bad(
            "source: a symlink in the snapshot that leads outside it is never read",
            "A",
            A_,
            missing,
            packet=packet(put(f"{e5}/path", "src/link.ts")),
            source=snapshot(_symlink_out("src/link.ts", "outside.ts")),
        ),
        bad(
            "source: packet path names a folder of the snapshot",
            "A",
            A_,
            missing,
            packet=packet(put(f"{e5}/path", "src")),
            source=SNAPSHOT,
        ),
    ]


def hostile_path_cases() -> list[Case]:
    """Schema-valid packet paths that no snapshot file can have: each is simply not in the
    snapshot (SOURCE_FILE_MISSING), never a crash."""
    missing = F("SOURCE_FILE_MISSING", "evidence_file_in_snapshot")
    e5 = "/items/4/path"

    def symlink_loop(root: Path) -> None:
        (root / "src" / "loop.ts").symlink_to("loop.ts")

    return [
        bad(
            "source: packet path 500 folders deep is not in the snapshot",
            "A",
            A_,
            missing,
            packet=packet(put(e5, "src/" + "b/" * 500 + "c.ts")),
            source=SNAPSHOT,
        ),
        bad(
            "source: packet path longer than PATH_MAX is not in the snapshot",
            "A",
            A_,
            missing,
            packet=packet(put(e5, "src/" + "b/" * 2100 + "c.ts")),
            source=SNAPSHOT,
        ),
        bad(
            "source: packet path with a NUL byte is not in the snapshot",
            "A",
            A_,
            missing,
            packet=packet(put(e5, "src/a\u0000.ts")),
            source=SNAPSHOT,
        ),
        bad(
            "source: packet path with a 300-character file name is not in the snapshot",
            "A",
            A_,
            missing,
            packet=packet(put(e5, "src/" + "a" * 300 + ".ts")),
            source=SNAPSHOT,
        ),
        bad(
            "source: packet path to a symlink loop in the snapshot is not a file in it",
            "A",
            A_,
            missing,
            packet=packet(put(e5, "src/loop.ts")),
            source=snapshot(symlink_loop),
        ),
    ]


def usage_cases() -> list[Case]:
    return [
        usage("usage: answer file missing", "B", MISSING, UNREADABLE),
        usage("usage: packet file missing", "B", B_, UNREADABLE, packet=MISSING),
        usage("usage: draft file missing", "B", B_, UNREADABLE, draft=MISSING),
        usage("usage: --source is a file, not a folder", "B", B_, UNREADABLE, source=not_a_folder),
        usage("usage: --source does not exist", "B", B_, UNREADABLE, source=no_such_folder),
        # the roles are the rules' (`session_roles`): another is a finding of theirs
        bad(
            "role: --role X is not a session role",
            "X",
            B_,
            F("REVIEW_ROLE", "review_role_known"),
            F("RECONCILIATION_ROLE_MISMATCH", "reconciliation_matches_role"),
        ),
        bad(
            "role: --role b is not a session role (roles are case-sensitive)",
            "b",
            B_,
            F("REVIEW_ROLE", "review_role_known"),
            F("RECONCILIATION_ROLE_MISMATCH", "reconciliation_matches_role"),
        ),
    ]


def many_findings_cases() -> list[Case]:
    return [
        bad(
            "every finding reported: five independent violations give five findings",
            "B",
            answer(
                "B",
                put(f"{CLAIM3}/evidence_ids", []),
                put("/final/implementation_plan/1/verification_limitation", None),
                put("/final/citations/3/start_line", 12),
                put("/final/citations/3/end_line", 10),
                put(f"{OBL}/3/final_ids", ["U1"]),
                put(f"{DISP}/4/final_ids", ["C4"]),
            ),
            F("CLAIM_INFERENCE_WITHOUT_PREMISES", "inference_claim_has_premises"),
            F("ACTION_UNVERIFIED", "action_verified_or_limited"),
            F("CITATION_RANGE", "citation_range_ordered"),
            F("OBLIGATION_EXCLUDED_UNLINKED", "excluded_obligation_linked"),
            F("DISPOSITION_UNRESOLVED_UNLINKED", "unresolved_disposition_linked"),
        ),
        bad(
            "every finding reported: schema, link and packet findings together",
            "B",
            answer("B", put("/notes", "x"), put("/final/claims/3/uncertainty_id", None)),
            SCHEMA,
            F("CLAIM_UNKNOWN_WITHOUT_UNCERTAINTY", "unknown_claim_links_uncertainty"),
            F("EVIDENCE_RANGE", "evidence_range_ordered"),
            packet=packet(put("/items/4/end_line", 2)),
        ),
    ]


def all_cases() -> list[Case]:
    cases = [
        *valid_cases(),
        *role_cases(),
        *schema_key_type_enum_cases(),
        *id_cases(),
        *text_cases(),
        *limit_cases(),
        *path_cases(),
        *line_cases(),
        *json_cases(),
        *link_cases(),
        *c09_cases(),
        *c12_cases(),
        *c13_cases(),
        *packet_cases(),
        *hostile_path_cases(),
        *usage_cases(),
        *many_findings_cases(),
    ]
    ids = [case.id for case in cases]
    duplicates = [name for name, n in Counter(ids).items() if n > 1]
    assert not duplicates, f"case ids must be unique: {duplicates}"
    return cases


CASES: list[Case] = all_cases()

# ---- running a case --------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What `rulecheck answer --format json` did with one case."""

    exit_code: int
    stdout: str
    output: str  # stdout and stderr together
    data: dict[str, Any] | None
    findings: Counter[Expected]
    located: frozenset[Located]

    def matches(self, case: Case) -> bool:
        return (
            self.exit_code == case.expected_exit
            and self.findings == Counter(case.findings)
            and all(loc in self.located for loc in case.located)
        )


def case_argv(case: Case, tmp: Path, output_format: str = "json") -> list[str]:
    """Write the case's files under `tmp` and return the `rulecheck` arguments."""
    tmp.mkdir(parents=True, exist_ok=True)

    def write(doc: Doc, name: str) -> str:
        target = tmp / name
        if doc is not MISSING:
            target.write_bytes(doc.render())
        return str(target)

    argv = [
        "answer",
        write(case.answer, "answer.json"),
        "--packet",
        write(case.packet, "packet.json"),
    ]
    argv += ["--role", case.role, "--format", output_format]
    if case.draft is not None:
        argv += ["--draft", write(case.draft, "draft.json")]
    if case.source is not None:
        argv += ["--source", str(case.source(tmp))]
    return argv


def parse_output(exit_code: int, stdout: str, output: str) -> Outcome:
    """The findings (or, for exit 2, the diagnostics) of a `--format json` run."""
    try:
        data = json.loads(stdout)
    except ValueError:
        data = None
    records: list[dict[str, Any]] = []
    if isinstance(data, dict):
        records = data.get("findings", data.get("diagnostics", []))
    findings = Counter((r["code"], r.get("rule")) for r in records)
    located = frozenset(
        (r["code"], r.get("pointer"), r.get("line"), r.get("column")) for r in records
    )
    return Outcome(exit_code, stdout, output, data, findings, located)


def run_case(case: Case, tmp: Path, rules: Path | None = None) -> Outcome:
    """Run one case in-process through the CLI (`engine.cli.main`)."""
    argv = case_argv(case, tmp)
    if rules is not None:
        argv += ["--rules", str(rules)]
    result = CliRunner().invoke(main, argv, catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return parse_output(result.exit_code, result.stdout, result.output)


# ---- rules are parsed and compiled once per distinct rule bytes ---------------------------


@contextmanager
def memoized_rules() -> Iterator[None]:
    """Parse and compile each distinct set of rule files once, keyed by paths and exact bytes.

    `rulecheck answer` re-reads, re-parses and re-compiles every rule file on each call (seconds
    with the full rules/ folder); the rows only vary their data files, so the parsed ruleset and
    its compiled program are reused for identical rule bytes. Everything after compilation
    (reading inputs, schema, graph, link rules, report, exit code) runs unchanged. The
    subprocess rows of test_answer_contract.py run the real, unmemoized entry point.
    """
    import engine.evaluate.program
    import engine.ruleset
    from engine.syntax.load import rule_paths

    original_load = engine.ruleset.load_ruleset
    original_compile = engine.evaluate.program.compile_program
    loaded: dict[tuple[Any, ...], Any] = {}
    compiled: dict[int, tuple[Any, Any]] = {}

    def load(paths: Sequence[Path]) -> Any:
        key = tuple((str(f.resolve()), f.read_bytes()) for f in rule_paths(paths))
        if key not in loaded:
            loaded[key] = original_load(paths)
        return loaded[key]

    def compile_once(ruleset: Any) -> Any:
        if id(ruleset) not in compiled:  # the ruleset is kept alive, so its id stays unique
            compiled[id(ruleset)] = (ruleset, original_compile(ruleset))
        return compiled[id(ruleset)][1]

    engine.ruleset.load_ruleset = load  # type: ignore[assignment]
    engine.evaluate.program.compile_program = compile_once  # type: ignore[assignment]
    try:
        yield
    finally:
        engine.ruleset.load_ruleset = original_load
        engine.evaluate.program.compile_program = original_compile
