"""The reference floor: a hand-written, plain-Python checker of the seed-000 response contract.

Not part of the engine and not used by it. It does the same structural work as
`rulecheck answers` (strict JSON, both JSON Schemas and every link rule of
`rules/000_response_links.rules` and `rules/000_packet.rules`), written the way one would
write it by hand with no rule engine: one pass over each record list, dict and set look-ups,
compiled regexes, no quadratic loops. `tests/bench/answers_bench.py` times `rulecheck`
against it, so this file answers "how fast could a straightforward Python checker be?".

`check(answer_bytes, packet, role)` returns the problem codes it finds, using the rule
files' code names (`EVIDENCE_ID_UNKNOWN`, `LINK_DANGLING`, `DISPOSITION_MISSING`, ...) and
the engine's names for the other stages (`JSON_DUPLICATE_KEY`, `RESPONSE_SCHEMA`,
`PACKET_SCHEMA`, ...). An empty list means structurally valid. Like the engine it reports
every JSON Schema problem it finds; unlike the engine it stops after a schema problem
instead of also running the link rules over a malformed document, so on such documents
its code list can be a subset of the engine's (the verdict is the same).

Not covered, because `rulecheck answers` only does them when the index names them: a
draft file (pass the draft's final record IDs as `draft_ids` to get the stale-link rules)
and `--source` snapshot authentication (SOURCE_* codes).

Run `.venv/bin/python tests/bench/reference_checker.py INDEX` to check an index and print
answers/s, or `... --self-check` to prove it accepts valid answers and rejects mutants.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection
from decimal import Decimal
from pathlib import Path
from typing import Any

# ---- limits of the contract ---------------------------------------------------------------

TEXT_MAX = 2048  # Unicode scalar values
FINAL_LIMITS = {
    "claims": 32,
    "implementation_plan": 32,
    "verification_plan": 32,
    "uncertainties": 32,
    "exclusions": 64,
    "citations": 128,
}
OBLIGATIONS_MIN, OBLIGATIONS_MAX = 1, 16
PACKET_MIN_ITEMS, PACKET_MAX_ITEMS = 6, 12  # rules/000_design.rules
DISPOSITIONS_PER_ID = 1  # rules/000_quality_gates.rules
ROLES_WITH_RECONCILIATION = frozenset({"B"})
STATEMENT_PREFIXES = frozenset("CAV")
ADDRESSING_PREFIXES = frozenset("CA")

# ---- strict JSON --------------------------------------------------------------------------

_BOM = b"\xef\xbb\xbf"
_FLOAT_MAX = sys.float_info.max
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]")


class JsonProblem(Exception):
    """The document is not strict JSON; `code` names why."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise JsonProblem("JSON_DUPLICATE_KEY")
    return obj


def _constant(name: str) -> Any:
    raise JsonProblem("JSON_NON_FINITE")  # NaN, Infinity, -Infinity


def _float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:  # 1e400 overflows to inf
        raise JsonProblem("JSON_NUMBER_RANGE")
    if len(text) > 15 or abs(value) < sys.float_info.min:  # maybe not read as written
        try:
            written = Decimal(text) == Decimal(repr(value))
        except ArithmeticError:  # an exponent beyond Decimal's
            written = value == 0.0 and not text.lower().partition("e")[0].strip("-+0.")
        if not written:
            raise JsonProblem("JSON_NUMBER_RANGE")
    return value


def _int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:  # more digits than int() accepts
        raise JsonProblem("JSON_NUMBER_RANGE") from None
    if len(text) > 308 and abs(value) > _FLOAT_MAX:
        raise JsonProblem("JSON_NUMBER_RANGE")
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float, parse_int=_int
)


def parse_strict(raw: bytes) -> Any:
    """Decode UTF-8 JSON, refusing a BOM, invalid UTF-8, duplicate keys, NaN/Infinity,
    out-of-range numbers, lone surrogates and trailing data (raises JsonProblem).
    Numbers written with a fraction or exponent come back as float, so `1.0` fails an
    integer check."""
    if raw.startswith(_BOM):
        raise JsonProblem("JSON_INVALID_UTF8")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise JsonProblem("JSON_INVALID_UTF8") from None
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as error:
        code = "JSON_TRAILING_DATA" if error.msg == "Extra data" else "JSON_SYNTAX"
        raise JsonProblem(code) from None
    except RecursionError:
        raise JsonProblem("JSON_SYNTAX") from None
    if "\\u" in text and _SURROGATE_HINT.search(text):  # rare: only then look closer
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise JsonProblem("JSON_LONE_SURROGATE") from None
    return value


# ---- JSON Schema constraints, by hand -------------------------------------------------------


def _id_matcher(prefixes: str) -> Callable[[str], Any]:
    return re.compile(f"[{prefixes}][1-9][0-9]*").fullmatch


E_ID, C_ID, A_ID, V_ID = _id_matcher("E"), _id_matcher("C"), _id_matcher("A"), _id_matcher("V")
U_ID, X_ID, O_ID = _id_matcher("U"), _id_matcher("X"), _id_matcher("O")
SUPPORT_ID, FINAL_ID = _id_matcher("CAVX"), _id_matcher("CAVUX")
P_ID, T_ID = _id_matcher("P"), _id_matcher("T")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+").fullmatch
_COMMIT = re.compile(r"[0-9a-f]{40}").fullmatch
_SHA256 = re.compile(r"[0-9a-f]{64}").fullmatch


def is_text(value: Any) -> bool:
    """A trimmed, nonempty string of at most 2,048 code points (whitespace as Python's
    `str.isspace`, which is what the schema's `\\S` means under `re`)."""
    return (
        type(value) is str
        and 0 < len(value) <= TEXT_MAX
        and not value[0].isspace()
        and not value[-1].isspace()
    )


def is_nullable_text(value: Any) -> bool:
    return value is None or is_text(value)


def is_path(value: Any) -> bool:
    """A POSIX relative path: no absolute root, no empty segment, no `..` segment (and, as
    the schema's `.` does not match it, no newline)."""
    return (
        type(value) is str
        and value != ""
        and value[0] != "/"
        and value[-1] != "/"
        and "//" not in value
        and "\n" not in value
        and ".." not in value.split("/")
    )


def is_line(value: Any) -> bool:
    """A positive JSON integer (not a bool, not `1.0`)."""
    return type(value) is int and value >= 1


def _ids_of(match: Callable[[str], Any], unique: bool = True, nonempty: bool = False) -> Any:
    def check(value: Any) -> bool:
        if type(value) is not list or (nonempty and not value):
            return False
        for item in value:
            if type(item) is not str or not match(item):
                return False
        return not unique or len(set(value)) == len(value)

    return check


def _nullable(match: Callable[[str], Any]) -> Callable[[Any], bool]:
    return lambda value: value is None or (type(value) is str and match(value) is not None)


def _string(match: Callable[[str], Any]) -> Callable[[Any], bool]:
    return lambda value: type(value) is str and match(value) is not None


def _enum(*values: str) -> Callable[[Any], bool]:
    allowed = frozenset(values)
    return lambda value: type(value) is str and value in allowed


E_IDS = _ids_of(E_ID)
CLAIM = {
    "id": _string(C_ID),
    "text": is_text,
    "status": _enum("source_backed", "inference", "unknown"),
    "evidence_ids": E_IDS,
    "uncertainty_id": _nullable(U_ID),
}
ACTION = {
    "id": _string(A_ID),
    "action": is_text,
    "rationale": is_text,
    "support_basis": _enum("source", "task"),
    "evidence_ids": E_IDS,
    "verification_ids": _ids_of(V_ID),
    "verification_limitation": is_nullable_text,
}
VERIFICATION = {
    "id": _string(V_ID),
    "expected_behavior": is_text,
    "method": is_text,
    "support_basis": _enum("source", "task", "missing_source"),
    "evidence_ids": E_IDS,
    "uncertainty_id": _nullable(U_ID),
}
UNCERTAINTY = {
    "id": _string(U_ID),
    "missing_information": is_text,
    "consequence": is_text,
    "verification_step": is_text,
}
EXCLUSION = {"id": _string(X_ID), "scope_item": is_text, "reason": is_text, "evidence_ids": E_IDS}
CITATION = {
    "evidence_id": _string(E_ID),
    "path": is_path,
    "start_line": is_line,
    "end_line": is_line,
    "supports": _ids_of(SUPPORT_ID, nonempty=True),
}
OBLIGATION = {
    "id": _string(O_ID),
    "text": is_text,
    "basis": _enum("task", "source"),
    "status": _enum("addressed", "excluded", "unresolved"),
    "evidence_ids": E_IDS,
    "final_ids": _ids_of(FINAL_ID, nonempty=True),
}
DISPOSITION = {
    "evidence_id": _string(E_ID),
    "status": _enum("used", "excluded", "unresolved"),
    "final_ids": _ids_of(FINAL_ID, nonempty=True),
}
FINAL_RECORDS = {
    "claims": CLAIM,
    "implementation_plan": ACTION,
    "verification_plan": VERIFICATION,
    "uncertainties": UNCERTAINTY,
    "exclusions": EXCLUSION,
    "citations": CITATION,
}
PACKET_FIELDS = {
    "packet_id": _string(P_ID),
    "task_id": _string(T_ID),
    "repository": _string(_REPOSITORY),
    "commit": _string(_COMMIT),
    "items": lambda value: type(value) is list,
}
ITEM = {
    "id": _string(E_ID),
    "path": is_path,
    "start_line": is_line,
    "end_line": is_line,
    "file_sha256": _string(_SHA256),
    "text": lambda value: type(value) is str,
}


def _object(
    value: Any, fields: dict[str, Callable[[Any], bool]], code: str, out: list[str]
) -> bool:
    """Check one closed object: required keys, no extra keys, each field's constraint.
    Appends one `code` per problem; True when the object is valid."""
    if type(value) is not dict:
        out.append(code)
        return False
    ok = True
    if value.keys() != fields.keys():
        out.extend([code] * len(value.keys() ^ fields.keys()))
        ok = False
    for key, valid in fields.items():
        if key in value and not valid(value[key]):
            out.append(code)
            ok = False
    return ok


def _records(
    value: Any, fields: dict[str, Any], low: int, high: int | None, out: list[str]
) -> bool:
    if type(value) is not list:
        out.append("RESPONSE_SCHEMA")
        return False
    ok = low <= len(value) and (high is None or len(value) <= high)
    if not ok:
        out.append("RESPONSE_SCHEMA")
    for record in value:
        ok = _object(record, fields, "RESPONSE_SCHEMA", out) and ok
    return ok


def response_schema_problems(answer: Any) -> list[str]:
    """Every violation of response_contract.schema.json (one RESPONSE_SCHEMA per problem)."""
    out: list[str] = []
    if type(answer) is not dict:
        return ["RESPONSE_SCHEMA"]
    if answer.keys() != {"final", "reconciliation"}:
        out.extend(["RESPONSE_SCHEMA"] * len(answer.keys() ^ {"final", "reconciliation"}))
    final = answer.get("final")
    if type(final) is not dict:
        if "final" in answer:
            out.append("RESPONSE_SCHEMA")
    else:
        if final.keys() != FINAL_RECORDS.keys():
            out.extend(["RESPONSE_SCHEMA"] * len(final.keys() ^ FINAL_RECORDS.keys()))
        for key, fields in FINAL_RECORDS.items():
            if key in final:
                _records(final[key], fields, 0, FINAL_LIMITS[key], out)
    ledger = answer.get("reconciliation")
    if ledger is not None:
        fields = {"obligations": None, "evidence_dispositions": None}
        if type(ledger) is not dict:
            out.append("RESPONSE_SCHEMA")
        else:
            out.extend(["RESPONSE_SCHEMA"] * len(ledger.keys() ^ fields.keys()))
            if "obligations" in ledger:
                _records(ledger["obligations"], OBLIGATION, OBLIGATIONS_MIN, OBLIGATIONS_MAX, out)
            if "evidence_dispositions" in ledger:
                _records(ledger["evidence_dispositions"], DISPOSITION, 0, None, out)
    return out


def packet_schema_problems(packet: Any) -> list[str]:
    """Every violation of evidence_packet.schema.json (one PACKET_SCHEMA per problem)."""
    out: list[str] = []
    _object(packet, PACKET_FIELDS, "PACKET_SCHEMA", out)
    if type(packet) is dict and type(packet.get("items")) is list:
        for item in packet["items"]:
            _object(item, ITEM, "PACKET_SCHEMA", out)
    return out


# ---- link rules -------------------------------------------------------------------------------


def line_count(text: str) -> int:
    """Physical lines: a line ends at `\\n`; a final `\\n` does not start another line."""
    return text.count("\n") + (0 if text == "" or text.endswith("\n") else 1)


def _first_by_id(records: list[dict[str, Any]], key: str = "id") -> dict[str, dict[str, Any]]:
    """ID -> the first record with that ID (a later duplicate is not a link target)."""
    index: dict[str, dict[str, Any]] = {}
    for record in records:
        index.setdefault(record[key], record)
    return index


def packet_link_problems(items: list[dict[str, Any]], out: list[str]) -> None:
    """rules/000_packet.rules, without the `--source` snapshot rules."""
    if not PACKET_MIN_ITEMS <= len(items) <= PACKET_MAX_ITEMS:
        out.append("PACKET_SIZE")
    counts = Counter(item["id"] for item in items)
    for item in items:
        if counts[item["id"]] != 1:
            out.append("EVIDENCE_ID_DUPLICATE")
        start, end = item["start_line"], item["end_line"]
        if start > end:
            out.append("EVIDENCE_RANGE")
        elif line_count(item["text"]) != end - start + 1:
            out.append("EVIDENCE_TEXT_LINES")


def link_problems(
    answer: dict[str, Any],
    items: list[dict[str, Any]],
    role: str,
    draft_ids: Collection[str] = (),
) -> list[str]:
    """rules/000_response_links.rules over a schema-valid answer and packet."""
    out: list[str] = []
    final = answer["final"]
    claims = final["claims"]
    actions = final["implementation_plan"]
    verifications = final["verification_plan"]
    uncertainties = final["uncertainties"]
    exclusions = final["exclusions"]
    citations = final["citations"]
    ledger = answer["reconciliation"]
    obligations = ledger["obligations"] if ledger is not None else []
    dispositions = ledger["evidence_dispositions"] if ledger is not None else []

    evidence = _first_by_id(items)
    first_claim = _first_by_id(claims)
    first_action = _first_by_id(actions)
    first_verification = _first_by_id(verifications)
    first_uncertainty = _first_by_id(uncertainties)
    first_exclusion = _first_by_id(exclusions)
    final_ids = (
        first_claim.keys()
        | first_action.keys()
        | first_verification.keys()
        | first_uncertainty.keys()
        | first_exclusion.keys()
    )
    stale = set(draft_ids) - final_ids

    def resolve(link: str) -> None:  # LINK_DANGLING / LINK_STALE_DRAFT for one final link
        if link not in final_ids:
            out.append("LINK_STALE_DRAFT" if link in stale else "LINK_DANGLING")

    # role and identity
    if (role in ROLES_WITH_RECONCILIATION) != (ledger is not None):
        out.append("RECONCILIATION_ROLE_MISMATCH")
    for records in (claims, actions, verifications, uncertainties, exclusions, obligations):
        if records:
            counts = Counter(record["id"] for record in records)
            if len(counts) != len(records):
                out.extend("ID_DUPLICATE" for record in records if counts[record["id"]] > 1)

    # citations: evidence, links, path and lines; index what each record is cited with
    cited_evidence: dict[str, set[str]] = {}  # final record ID -> E IDs citing it
    supports_of_evidence: dict[str, set[str]] = {}  # E ID -> IDs its citations support
    for citation in citations:
        e_id = citation["evidence_id"]
        supports = citation["supports"]
        for target in supports:
            resolve(target)
            cited_evidence.setdefault(target, set()).add(e_id)
        start, end = citation["start_line"], citation["end_line"]
        if start > end:
            out.append("CITATION_RANGE")
        item = evidence.get(e_id)
        if item is None:
            out.append("EVIDENCE_ID_UNKNOWN")
            continue
        supports_of_evidence.setdefault(e_id, set()).update(supports)
        if citation["path"] != item["path"]:
            out.append("CITATION_PATH_MISMATCH")
        first, last = item["start_line"], item["end_line"]
        if not (start >= first and end <= last and end <= first + line_count(item["text"]) - 1):
            out.append("CITATION_OUTSIDE_EVIDENCE")

    def cited(record: dict[str, Any], first: dict[str, dict[str, Any]]) -> bool:
        """Some citation supporting this record cites one of its evidence IDs."""
        if first[record["id"]] is not record:  # a duplicate receives no links
            return False
        by = cited_evidence.get(record["id"])
        return by is not None and not by.isdisjoint(record["evidence_ids"])

    def unknown_evidence(record: dict[str, Any]) -> None:
        for e_id in record["evidence_ids"]:
            if e_id not in evidence:
                out.append("EVIDENCE_ID_UNKNOWN")

    # claims
    for claim in claims:
        unknown_evidence(claim)
        if claim["uncertainty_id"] is not None:
            resolve(claim["uncertainty_id"])
        status = claim["status"]
        if status == "source_backed":
            if not claim["evidence_ids"] or not cited(claim, first_claim):
                out.append("CLAIM_SOURCE_UNSUPPORTED")
        elif status == "inference":
            if not claim["evidence_ids"]:
                out.append("CLAIM_INFERENCE_WITHOUT_PREMISES")
        elif claim["uncertainty_id"] is None:
            out.append("CLAIM_UNKNOWN_WITHOUT_UNCERTAINTY")

    # actions and verifications
    for action in actions:
        unknown_evidence(action)
        for target in action["verification_ids"]:
            resolve(target)
        if action["support_basis"] == "source" and (
            not action["evidence_ids"] or not cited(action, first_action)
        ):
            out.append("SOURCE_BASIS_UNSUPPORTED")
        if not action["verification_ids"] and action["verification_limitation"] is None:
            out.append("ACTION_UNVERIFIED")
    for verification in verifications:
        unknown_evidence(verification)
        if verification["uncertainty_id"] is not None:
            resolve(verification["uncertainty_id"])
        basis = verification["support_basis"]
        if basis == "source":
            if not verification["evidence_ids"] or not cited(verification, first_verification):
                out.append("SOURCE_BASIS_UNSUPPORTED")
        elif basis == "missing_source" and verification["uncertainty_id"] is None:
            out.append("MISSING_SOURCE_WITHOUT_UNCERTAINTY")
    for exclusion in exclusions:
        unknown_evidence(exclusion)

    # obligations
    for obligation in obligations:
        unknown_evidence(obligation)
        links = obligation["final_ids"]
        for target in links:
            resolve(target)
        status = obligation["status"]
        prefixes = {target[0] for target in links}
        if status == "addressed":
            limited = any(
                first_action[t]["verification_limitation"] is not None
                for t in links
                if t in first_action
            )
            if prefixes.isdisjoint(ADDRESSING_PREFIXES) or ("V" not in prefixes and not limited):
                out.append("OBLIGATION_ADDRESSED_UNLINKED")
            if obligation["basis"] == "source" and not obligation["evidence_ids"]:
                out.append("OBLIGATION_SOURCE_WITHOUT_EVIDENCE")
        elif status == "unresolved":
            if "U" not in prefixes:
                out.append("OBLIGATION_UNRESOLVED_UNLINKED")
        elif "X" not in prefixes:
            out.append("OBLIGATION_EXCLUDED_UNLINKED")

    # evidence dispositions
    disposed: Counter[str] = Counter()
    for disposition in dispositions:
        e_id = disposition["evidence_id"]
        links = disposition["final_ids"]
        for target in links:
            resolve(target)
        if e_id in evidence:
            disposed[e_id] += 1
        else:
            out.append("DISPOSITION_EVIDENCE_UNKNOWN")
        status = disposition["status"]
        if status == "used":
            supported = supports_of_evidence.get(e_id, ())
            if not any(t[0] in STATEMENT_PREFIXES and t in supported for t in links):
                out.append("DISPOSITION_USED_UNCITED")
        elif status == "excluded":
            if not any(
                e_id in first_exclusion[t]["evidence_ids"] for t in links if t in first_exclusion
            ):
                out.append("DISPOSITION_EXCLUDED_UNLINKED")
        elif not any(t in first_uncertainty for t in links):
            out.append("DISPOSITION_UNRESOLVED_UNLINKED")
    if ledger is not None:
        for item in items:
            # a later item with a duplicate E ID is no link target, so nothing disposes it
            count = disposed[item["id"]] if evidence[item["id"]] is item else 0
            if count < 1:
                out.append("DISPOSITION_MISSING")
            elif count > DISPOSITIONS_PER_ID:
                out.append("DISPOSITION_DUPLICATE")
    return out


def check(
    answer_bytes: bytes, packet: dict[str, Any], role: str, draft_ids: Collection[str] = ()
) -> list[str]:
    """Every structural problem code of one answer (empty list: structurally valid).

    `packet` is the parsed evidence packet (use `parse_strict` on its bytes); `role` is
    D, A or B; `draft_ids` are the IDs of the draft's final records, if there is a draft.
    """
    problems = packet_schema_problems(packet)
    try:
        answer = parse_strict(answer_bytes)
    except JsonProblem as problem:
        return [*problems, problem.code]
    problems += response_schema_problems(answer)
    if problems:
        return problems
    items = packet["items"]
    packet_link_problems(items, problems)
    problems += link_problems(answer, items, role, draft_ids)
    return problems


# ---- running over an index -------------------------------------------------------------------


def read_index(index: Path) -> list[tuple[Path, Path, str]]:
    """(answer, packet, role) of every entry; paths are relative to the index's folder."""
    base = index.parent
    jobs = []
    for line in index.read_bytes().splitlines():
        if line.strip():
            entry = parse_strict(line)
            jobs.append((base / entry["answer"], base / entry["packet"], entry["role"]))
    return jobs


def run_index(index: Path) -> tuple[int, dict[str, list[str]], float]:
    """Check every answer of an index: (answers, {answer path: codes} of the invalid ones,
    seconds). Reading the index and the packets is timed too; packets are read once."""
    started = time.perf_counter()
    packets: dict[Path, Any] = {}
    flagged: dict[str, list[str]] = {}
    jobs = read_index(index)
    for answer_path, packet_path, role in jobs:
        packet = packets.get(packet_path)
        if packet is None:
            try:
                packet = parse_strict(packet_path.read_bytes())
            except JsonProblem as problem:
                packet = problem
            packets[packet_path] = packet
        if isinstance(packet, JsonProblem):
            flagged[str(answer_path)] = [packet.code]
            continue
        problems = check(answer_path.read_bytes(), packet, role)
        if problems:
            flagged[str(answer_path)] = problems
    return len(jobs), flagged, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Check an index with the reference checker and print answers/s (or run the self-check)."""
    parser = argparse.ArgumentParser(description="Reference checker of the seed-000 contract.")
    parser.add_argument("index", nargs="?", type=Path, help="JSON Lines index of answers")
    parser.add_argument("--self-check", action="store_true", help="run the self-check")
    args = parser.parse_args(argv)
    if args.self_check or args.index is None:
        self_check()
        print("self-check passed")
        if args.index is None:
            return 0
    total, flagged, seconds = run_index(args.index)
    print(
        f"{total} answers: {total - len(flagged)} structurally valid, {len(flagged)} with "
        f"findings; {seconds:.3f} s, {total / seconds:,.0f} answers/s"
    )
    for path, codes in list(flagged.items())[:10]:
        print(f"  {path}: {', '.join(sorted(set(codes)))}")
    return 0 if not flagged else 1


# ---- mutations and self-check ----------------------------------------------------------------


def _dumps(answer: dict[str, Any]) -> bytes:
    return json.dumps(answer).encode()


def _missing_disposition(answer: dict[str, Any]) -> bytes:
    answer["reconciliation"]["evidence_dispositions"].pop()
    return _dumps(answer)


def _dangling_link(answer: dict[str, Any]) -> bytes:
    answer["final"]["citations"][0]["supports"].append("C99")
    return _dumps(answer)


def _thirty_third_claim(answer: dict[str, Any]) -> bytes:
    claims = answer["final"]["claims"]
    template = claims[0]
    while len(claims) < 33:
        claims.append(dict(template, id=f"C{len(claims) + 1}"))
    return _dumps(answer)


def _duplicate_key(answer: dict[str, Any]) -> bytes:
    text = _dumps(answer).decode()
    return text.replace(
        '"status": "source_backed"', '"status": "inference", "status": "source_backed"', 1
    ).encode()


def _float_line(answer: dict[str, Any]) -> bytes:
    text = _dumps(answer).decode()
    return text.replace('"start_line": 1,', '"start_line": 1.0,', 1).encode()


def _unknown_evidence(answer: dict[str, Any]) -> bytes:
    answer["final"]["claims"][0]["evidence_ids"].append("E13")
    return _dumps(answer)


def _phantom_line(answer: dict[str, Any]) -> bytes:
    citation = answer["final"]["citations"][1]  # E1's lines 3..5; line 6 is past the final newline
    citation["end_line"] += 1
    return _dumps(answer)


def _duplicate_disposition(answer: dict[str, Any]) -> bytes:
    dispositions = answer["reconciliation"]["evidence_dispositions"]
    dispositions.append(dict(dispositions[0]))
    return _dumps(answer)


def _role_mismatch(answer: dict[str, Any]) -> bytes:
    answer["reconciliation"] = None
    return _dumps(answer)


def _non_finite(answer: dict[str, Any]) -> bytes:
    text = _dumps(answer).decode()
    return text.replace('"start_line": 1,', '"start_line": NaN,', 1).encode()


def _trailing_data(answer: dict[str, Any]) -> bytes:
    return _dumps(answer) + b" {}"


def _invalid_utf8(answer: dict[str, Any]) -> bytes:
    return _dumps(answer).replace(b"claim 1 ", b"claim \xff ", 1)


def _untrimmed_text(answer: dict[str, Any]) -> bytes:
    answer["final"]["claims"][0]["text"] += " "
    return _dumps(answer)


def _leading_zero_id(answer: dict[str, Any]) -> bytes:
    answer["final"]["uncertainties"][0]["id"] = "U01"
    return _dumps(answer)


def _dotdot_path(answer: dict[str, Any]) -> bytes:
    answer["final"]["citations"][0]["path"] = "src/../module1.ts"
    return _dumps(answer)


def _used_uncited(answer: dict[str, Any]) -> bytes:
    answer["reconciliation"]["evidence_dispositions"][0]["final_ids"] = ["U1"]
    return _dumps(answer)


def _action_unverified(answer: dict[str, Any]) -> bytes:
    answer["final"]["implementation_plan"][0]["verification_ids"] = []
    return _dumps(answer)


def _extra_key(answer: dict[str, Any]) -> bytes:
    answer["final"]["exclusions"][0]["note"] = "extra"
    return _dumps(answer)


# (name, mutation of a valid generated B answer, a code the result must contain)
MUTATIONS: tuple[tuple[str, Callable[[dict[str, Any]], bytes], str], ...] = (
    ("missing disposition", _missing_disposition, "DISPOSITION_MISSING"),
    ("dangling link", _dangling_link, "LINK_DANGLING"),
    ("33rd claim", _thirty_third_claim, "RESPONSE_SCHEMA"),
    ("duplicate key", _duplicate_key, "JSON_DUPLICATE_KEY"),
    ("1.0 as a line", _float_line, "RESPONSE_SCHEMA"),
    ("unknown E ID", _unknown_evidence, "EVIDENCE_ID_UNKNOWN"),
    ("line past the final newline", _phantom_line, "CITATION_OUTSIDE_EVIDENCE"),
    ("duplicate disposition", _duplicate_disposition, "DISPOSITION_DUPLICATE"),
    ("B without reconciliation", _role_mismatch, "RECONCILIATION_ROLE_MISMATCH"),
    ("NaN", _non_finite, "JSON_NON_FINITE"),
    ("trailing data", _trailing_data, "JSON_TRAILING_DATA"),
    ("invalid UTF-8", _invalid_utf8, "JSON_INVALID_UTF8"),
    ("untrimmed text", _untrimmed_text, "RESPONSE_SCHEMA"),
    ("ID with a leading zero", _leading_zero_id, "RESPONSE_SCHEMA"),
    ("`..` in a path", _dotdot_path, "RESPONSE_SCHEMA"),
    ("used disposition without a citation", _used_uncited, "DISPOSITION_USED_UNCITED"),
    ("action without verification", _action_unverified, "ACTION_UNVERIFIED"),
    ("extra key", _extra_key, "RESPONSE_SCHEMA"),
)


def mutate(answer_bytes: bytes, number: int) -> tuple[bytes, str, str]:
    """Mutation `number` (cyclic) of a valid answer: (mutated bytes, name, expected code)."""
    name, mutation, code = MUTATIONS[number % len(MUTATIONS)]
    return mutation(json.loads(answer_bytes)), name, code


def self_check(answers: int = 200) -> None:
    """Accept `answers` generated valid answers; reject every mutation for the expected
    reason; raise AssertionError otherwise."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from generate import generate  # tests/bench/generate.py

    with tempfile.TemporaryDirectory(prefix="refcheck-") as folder:
        index = generate(Path(folder), answers)
        total, flagged, _ = run_index(index)
        assert total == answers, f"{total} answers read, {answers} generated"
        assert not flagged, f"valid answers rejected: {list(flagged.items())[:3]}"
        jobs = read_index(index)
        packets = {path: parse_strict(path.read_bytes()) for _, path, _ in jobs}
        rng = random.Random(0)
        for number in range(len(MUTATIONS)):
            answer_path, packet_path, role = jobs[rng.randrange(len(jobs))]
            raw, name, code = mutate(answer_path.read_bytes(), number)
            problems = check(raw, packets[packet_path], role)
            assert code in problems, f"{name}: expected {code}, got {problems}"
        # The role rule both ways, and a bad packet.
        answer_path, packet_path, _ = jobs[0]
        raw = answer_path.read_bytes()
        assert check(raw, packets[packet_path], "A") == ["RECONCILIATION_ROLE_MISMATCH"]
        small = dict(packets[packet_path], items=packets[packet_path]["items"][:5])
        assert "PACKET_SIZE" in check(raw, small, "B")


if __name__ == "__main__":
    sys.exit(main())
