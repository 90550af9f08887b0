"""`rulecheck controls`: an expected-result table of named controls and mutations, each
answered by cases of `*.cases.yaml` files, run through the same path as `rulecheck test`.

The table (docs/testing.md, "Controls") names every control with its specimen, the result
it requires and its expected structural and semantic outcomes, and every mutation with the
control that owns it and the reason code it must produce. A control passes when it has a
case and every case of it passes; a mutation passes when its case passes, declares
exactly which link rules it breaks (`expect.violated`), and produces the owner's code: its
owning control fails for the intended reason and no other control changes result. A
control with no case is a failure, never a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from engine.cases.files import CaseFile, read_case_files, read_validated_yaml, written_at
from engine.cases.suite import CaseResult, Group
from engine.check.symbols import did_you_mean
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError

SCHEMA = "controls"


@dataclass(frozen=True, slots=True)
class Control:
    """One control: its specimen, the result it requires, and the cases that show it."""

    id: str
    specimen: str
    required: str
    structural: str
    semantic: str
    cases: tuple[str, ...]
    where: Location


@dataclass(frozen=True, slots=True)
class Mutation:
    """One mutation: the case that applies it, its owning control and the code it must give."""

    mutation: str
    owner: str
    case: str | None
    code: str | None
    fails: str | None
    where: Location
    escapes: str | None = None

    @property
    def intended(self) -> str:
        """The intended reason, as the report shows it."""
        if self.escapes is not None:
            return f"{self.escapes} no longer fails"
        return self.code if self.code is not None else f"{self.fails} fails"


@dataclass(frozen=True, slots=True)
class ControlTable:
    """An expected-result table and the case files its rows name."""

    path: Path
    notes: str
    case_files: tuple[CaseFile, ...]
    accepted: tuple[str, ...]
    controls: tuple[Control, ...]
    mutations: tuple[Mutation, ...]


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the report: what was expected and observed, and whether it holds."""

    kind: str
    id: str
    title: str
    expected: str
    observed: str
    codes: tuple[str, ...]
    passed: bool
    reason: str


def read_control_table(path: Path) -> ControlTable:
    """The table at `path`, validated, with its case files read and every name resolved.

    Raises:
        RulecheckError: exit 2 with every located problem.
    """
    data, positions = read_validated_yaml(path, "CONTROLS", SCHEMA)

    def at(pointer: str) -> Location:
        return written_at(str(path), positions, pointer)

    case_files = tuple(read_case_files(path.parent / p for p in data["cases"]))
    controls = tuple(
        Control(
            c["id"],
            c["specimen"],
            c["required"],
            c["structural"],
            c["semantic"],
            tuple(c["cases"]),
            at(f"/controls/{n}"),
        )
        for n, c in enumerate(data["controls"])
    )
    mutations = tuple(
        Mutation(
            m["mutation"],
            m["owner"],
            m.get("case"),
            m.get("code"),
            m.get("fails"),
            at(f"/mutations/{n}"),
            m.get("escapes"),
        )
        for n, m in enumerate(data["mutations"])
    )
    notes = str(data.get("notes", ""))
    table = ControlTable(
        path, notes, case_files, tuple(data.get("accepted", [])), controls, mutations
    )
    problems = _unresolved(table, at)
    if problems:
        raise RulecheckError(problems, ExitCode.USAGE)
    return table


def _unresolved(table: ControlTable, at: Callable[[str], Location]) -> list[Diagnostic]:
    """Every case name no case file holds, owner no control is, and id used twice."""
    names = {case.name for f in table.case_files for case in f.cases}
    ids = [c.id for c in table.controls]
    problems = []

    def unknown(pointer: str, what: str, name: str, known: Iterable[str]) -> None:
        hint = did_you_mean(name, known)
        problems.append(
            Diagnostic(
                "CONTROLS_UNKNOWN_NAME", f"no {what} is named `{name}`", at(pointer), hint=hint
            )
        )

    for n, control in enumerate(table.controls):
        if control.id in ids[:n]:
            message = f"two controls are named `{control.id}`"
            problems.append(Diagnostic("CONTROLS_SCHEMA", message, at(f"/controls/{n}/id")))
        for k, name in enumerate(control.cases):
            if name not in names:
                unknown(f"/controls/{n}/cases/{k}", "case", name, names)
    for n, mutation in enumerate(table.mutations):
        if mutation.case is not None and mutation.case not in names:
            unknown(f"/mutations/{n}/case", "case", mutation.case, names)
        if mutation.owner not in ids:
            unknown(f"/mutations/{n}/owner", "control", mutation.owner, ids)
    for n, name in enumerate(table.accepted):
        if name not in names:
            unknown(f"/accepted/{n}", "case", name, names)
    return problems


def control_rows(table: ControlTable, groups: list[Group]) -> list[Row]:
    """One row per accepted run, control and mutation, in the table's order, then one per
    case of the files that no row names, from the results the groups' cases reached
    (`run_suite` has run them)."""
    results = {r.case.name: r for group in groups for r in group.results}
    rows = [_result_row("accepted", results[name]) for name in table.accepted]
    rows += [_control_row(c, [results[name] for name in c.cases]) for c in table.controls]
    owners = {c.id: [results[name] for name in c.cases] for c in table.controls}
    rows += [
        _mutation_row(m, results.get(m.case or ""), owners.get(m.owner, []))
        for m in table.mutations
    ]
    named = {*table.accepted, *(n for c in table.controls for n in c.cases)}
    named |= {m.case for m in table.mutations if m.case is not None}
    # a case of the files that no row names still ran: it is shown, so that it cannot fail
    # unseen
    rows += [_result_row("case", r) for name, r in results.items() if name not in named]
    return rows


def _outcome(result: CaseResult) -> str:
    seen = result.observed
    if seen.refused:
        return "refused before judging: " + ", ".join(d.code for d in seen.diagnostics)
    judged = seen.admitted if seen.admitted is not None else seen.passed
    outcome = "accepted" if judged else "refused"
    return f"{outcome}: {seen.verdict}" if seen.verdict else outcome


def _expected(result: CaseResult) -> str:
    expect = result.case.expect
    judged = expect.get("admitted", expect.get("passed"))
    outcome = "" if judged is None else ("accepted" if judged else "refused")
    verdict = expect.get("verdict")
    return ": ".join(part for part in (outcome, verdict) if part) or "as its case expects"


def _codes(result: CaseResult) -> tuple[str, ...]:
    rules = result.observed.rules.values()
    return tuple(sorted({code for rule in rules for code, _ids in rule.violations}))


def _failure(result: CaseResult) -> str:
    return "; ".join(
        f"{d.key}: expected {d.expected!r}, observed {d.observed!r}" for d in result.differences
    )


def _result_row(kind: str, result: CaseResult) -> Row:
    """A row of one case shown as itself: an accepted run, or a case no row names."""
    reason = "" if result.passed else _failure(result)
    return Row(
        kind,
        "-",
        result.case.name,
        _expected(result),
        _outcome(result),
        _codes(result),
        result.passed,
        reason,
    )


def _columns(control: Control) -> str:
    """The required result with its structural and semantic outcomes, kept apart."""
    return f"{control.required} [structural: {control.structural}; semantic: {control.semantic}]"


def _control_row(control: Control, results: list[CaseResult]) -> Row:
    if not results:
        return Row(
            "control",
            control.id,
            control.specimen,
            _columns(control),
            "no specimen",
            (),
            False,
            "the table names no case for this control",
        )
    failed = [r for r in results if not r.passed]
    codes = tuple(sorted({c for r in results for c in _codes(r)}))
    observed = "; ".join(dict.fromkeys(_outcome(r) for r in results))
    reason = "; ".join(f"{r.case.name}: {_failure(r)}" for r in failed)
    return Row(
        "control",
        control.id,
        control.specimen,
        _columns(control),
        observed,
        codes,
        not failed,
        reason,
    )


def _mutation_row(mutation: Mutation, result: CaseResult | None, owner: list[CaseResult]) -> Row:
    if result is None:
        reason = "the table names no case that applies this mutation"
        return Row(
            "mutation",
            mutation.owner,
            mutation.mutation,
            mutation.intended,
            "not applied",
            (),
            False,
            reason,
        )
    codes = _codes(result)
    reasons = []
    if not result.passed:
        reasons.append(_failure(result))
    if "violated" not in result.case.expect:
        reasons.append("its case does not say which link rules it breaks (`expect.violated`)")
    if mutation.code is not None and mutation.code not in codes:
        reasons.append(f"the owning control's code {mutation.code} is not produced")
    seen = result.observed.rules.get(mutation.fails or "")
    if mutation.fails is not None and (seen is None or seen.outcome != "fail"):
        reasons.append(f"the owning control's rule {mutation.fails} does not fail")
    if mutation.escapes is not None:
        reasons += _escape_problems(mutation.escapes, result, owner)
    return Row(
        "mutation",
        mutation.owner,
        mutation.mutation,
        mutation.intended,
        _outcome(result),
        codes,
        not reasons,
        "; ".join(reasons),
    )


def _escapes_seen(name: str, result: CaseResult) -> bool:
    """True when the case expects rule `name` to fail, and it did."""
    wanted = result.case.expect.get("rules", {}).get(name)
    if isinstance(wanted, dict):
        failing = wanted.get("violations") or wanted.get("failing")
        expects_fail = wanted.get("outcome") == "fail" or bool(failing)
    else:
        expects_fail = wanted == "fail"
    seen = result.observed.rules.get(name)
    return expects_fail and seen is not None and seen.outcome == "fail"


def _escape_problems(name: str, result: CaseResult, owner: list[CaseResult]) -> list[str]:
    """Why a mutation of the rules is not caught by its owning control: it changes no
    declaration, the rule it breaks still fails under it, or no case of the owner
    requires that rule to fail on the rules as written (so the owner's result is what
    changes)."""
    problems = []
    if not result.case.rule_edits or not result.case.expect.get("changed"):
        problems.append("its case edits no rule file, or does not say which declarations change")
    seen = result.observed.rules.get(name)
    if seen is None or seen.outcome != "pass":
        problems.append(f"the rule {name} does not pass under the mutation")
    if not any(r.passed and _escapes_seen(name, r) for r in owner):
        problems.append(f"no passing case of the owning control requires {name} to fail")
    return problems


def row_counts(rows: list[Row]) -> tuple[int, int]:
    """How many rows hold and how many do not."""
    passed = sum(r.passed for r in rows)
    return passed, len(rows) - passed
