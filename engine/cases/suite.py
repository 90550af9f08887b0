"""`rulecheck test`: every case of the case files run against the rules each names, with
the coverage of rule outcomes and decision rows the cases reach."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.cases.files import Case, CaseFile, RuleEdit
from engine.cases.mutate import Mutant, changed_rules, mutant_ruleset, mutants
from engine.cases.run import Difference, Observed, Prepared, compare, prepare, run_case
from engine.check import check_rules
from engine.check.symbols import did_you_mean
from engine.errors import Diagnostic, ExitCode, RulecheckError
from engine.evaluate.inputs import declared_graphs
from engine.evaluate.program import Program, compile_program
from engine.evaluate.protocol import declared_protocols
from engine.freeze.diff import diff_sides, ruleset_side
from engine.freeze.hashing import hash_ruleset
from engine.limits import read_input
from engine.progress import advance
from engine.ruleset import Ruleset, load_ruleset
from engine.syntax import ast
from engine.syntax.parse import grammar_version, parse_text
from engine.textlines import normalize_newlines

RULE_TYPES = (ast.LinkDecl, ast.GateDecl, ast.BudgetDecl)
OUTCOMES = ("pass", "fail", "vacuous")


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case's run: what it observed and every expectation it did not meet."""

    case: Case
    observed: Observed
    differences: tuple[Difference, ...]

    @property
    def passed(self) -> bool:
        return not self.differences


@dataclass(slots=True)
class Group:
    """The cases that run against one set of rule paths, and those rules compiled."""

    rules: tuple[Path, ...]
    ruleset: Ruleset
    program: Program
    cases: list[Case] = field(default_factory=list)
    # the declarations a case's `rule_edits` change, as `rulecheck diff` names them
    changed: tuple[str, ...] = ()
    prepared: list[Prepared] = field(default_factory=list)
    results: list[CaseResult] = field(default_factory=list)


def load_groups(
    files: Sequence[CaseFile], refuse: Callable[[Ruleset], None] | None = None
) -> list[Group]:
    """The case files' cases grouped by the rules they name, each set of rules loaded once
    (and, with `refuse`, refused unless they are the locked rules).

    Raises:
        RulecheckError: as loading rules does; exit 2 when a case names a rule, decision,
            graph or protocol the rules do not declare.
    """
    groups: dict[tuple[Path, ...], Group] = {}
    problems: list[Diagnostic] = []
    for case_file in files:
        key = tuple(sorted({p.resolve() for p in case_file.rules}))
        if key not in groups:
            ruleset = load_ruleset(list(case_file.rules))
            if refuse is not None:
                refuse(ruleset)
            groups[key] = Group(case_file.rules, ruleset, compile_program(ruleset))
        group = groups[key]
        for case in case_file.cases:
            if case.rule_edits:
                edited = edited_group(group, case)
                problems += unknown_names(edited.program, case)
                edited.cases.append(case)
                groups[(*key, Path(case.file), Path(case.name))] = edited
                continue
            problems += unknown_names(group.program, case)
            group.cases.append(case)
    if problems:
        raise RulecheckError(problems, ExitCode.USAGE)
    return [group for group in groups.values() if group.cases]


def edited_group(group: Group, case: Case) -> Group:
    """A group of one case that runs against its rules with the case's `rule_edits`
    applied in memory, and the declarations those edits change.

    Raises:
        RulecheckError: exit 2 when an edit names no rule file of the case, or text that
            is not in it exactly once, or the edited rules do not check.
    """
    texts = {}
    for rule_file in group.ruleset.checked.files:
        texts[Path(rule_file.path).resolve()] = rule_file
    replaced: dict[Path, str] = {}
    for edit in case.rule_edits:
        target = edit.file.resolve()
        if target not in texts:
            raise _rule_edit_error(edit, f"`{edit.file}` is no rule file the case runs against")
        text = replaced.get(target)
        if text is None:
            text = normalize_newlines(read_input(target).decode("utf-8"))
        found = text.count(edit.text)
        if found != 1:
            where = "nowhere" if found == 0 else f"{found} times"
            message = f"`text:` is found {where} in `{edit.file}`; it must be once"
            raise _rule_edit_error(edit, message)
        replaced[target] = text.replace(edit.text, edit.replace)
    files = []
    for path, rule_file in texts.items():
        if path not in replaced:
            files.append(rule_file)
            continue
        try:
            files.append(parse_text(replaced[path], rule_file.path))
        except RulecheckError as error:
            raise RulecheckError(error.diagnostics, ExitCode.USAGE) from None
    checked = check_rules(files)
    if not checked.ok:
        raise RulecheckError(list(checked.diagnostics), ExitCode.USAGE)
    ruleset = Ruleset(checked, hash_ruleset(checked, grammar_version()))
    diff = diff_sides(
        ruleset_side("rules", group.ruleset.hashed), ruleset_side("edited", ruleset.hashed)
    )
    changed = tuple(c.name for c in diff.changes if not c.via)
    return Group(group.rules, ruleset, compile_program(ruleset), changed=changed)


def _rule_edit_error(edit: RuleEdit, message: str) -> RulecheckError:
    return RulecheckError([Diagnostic("CASES_EDIT", message, edit.where)], ExitCode.USAGE)


def unknown_names(program: Program, case: Case) -> list[Diagnostic]:
    """Every name a case expects of that the rules do not declare as that kind."""
    declarations = program.ruleset.checked.symbols.declarations
    rules = {n for n, d in declarations.items() if isinstance(d, RULE_TYPES)}
    decisions = {n for n, d in declarations.items() if isinstance(d, ast.DecisionDecl)}
    tables = {n for n, d in declarations.items() if isinstance(d, ast.TableDecl)}
    problems = []

    def check(name: str, known: set[str] | frozenset[str], what: str, pointer: str) -> None:
        if name in known:
            return
        hint = did_you_mean(name, known) or f"the rules declare {len(known)} such names"
        message = f"the rules declare no {what} `{name}`"
        problems.append(Diagnostic("CASES_UNKNOWN_NAME", message, case.at(pointer), hint=hint))

    for name in case.expect.get("rules", {}):
        check(name, rules, "link rule, gate or budget", f"/expect/rules/{name}")
    for number, name in enumerate(case.expect.get("violated", [])):
        check(name, rules, "link rule", f"/expect/violated/{number}")
    for name in case.expect.get("decisions", {}):
        check(name, decisions, "decision", f"/expect/decisions/{name}")
    for name in case.expect.get("tables", {}):
        check(name, tables, "table", f"/expect/tables/{name}")
    if case.graph is not None:
        check(case.graph, declared_graphs(program), "graph", "/evaluate")
    if case.protocol is not None:
        check(case.protocol, set(declared_protocols(program)), "protocol", "/protocol")
    return problems


def prepare_groups(groups: Sequence[Group], scratch: Path) -> None:
    """Each case's files, edited copies made once (under `scratch`) for every run."""
    number = 0
    for group in groups:
        for case in group.cases:
            group.prepared.append(prepare(case, scratch / str(number), group.ruleset))
            number += 1


def run_group(group: Group, program: Program | None = None) -> list[CaseResult]:
    """Every case of a group against its rules (or against `program`, a mutant of them)."""
    chosen = program or group.program
    results = []
    for case, prepared in zip(group.cases, group.prepared, strict=True):
        observed = run_case(chosen, case, prepared)
        differences = compare(case, observed)
        wanted = case.expect.get("changed")
        if wanted is not None and sorted(wanted) != sorted(group.changed):
            differences.append(Difference("changed", sorted(wanted), sorted(group.changed)))
        results.append(CaseResult(case, observed, tuple(differences)))
    return results


@dataclass(frozen=True, slots=True)
class RuleCoverage:
    """A link rule, gate or budget and the outcomes the cases reached."""

    name: str
    kind: str
    where: str
    reached: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RowCoverage:
    """A decision row and whether a case's decision took it."""

    decision: str
    row: int
    verdict: str
    where: str
    reached: bool


@dataclass(frozen=True, slots=True)
class Coverage:
    """What the cases of one group reach of its rules."""

    rules: tuple[Path, ...]
    rule_outcomes: tuple[RuleCoverage, ...]
    rows: tuple[RowCoverage, ...]


def coverage(group: Group) -> Coverage:
    """Per rule the outcomes (pass, fail, vacuous) the cases reach; per decision row
    whether some case takes it. A refused run reaches nothing."""
    reached: dict[str, set[str]] = {}
    rows: dict[str, set[int]] = {}
    for result in group.results:
        for name, seen in result.observed.rules.items():
            reached.setdefault(name, set()).add(seen.outcome)
        for name, (_verdict, row) in result.observed.decisions.items():
            if row is not None:  # an undecided decision takes no row
                rows.setdefault(name, set()).add(row)
    rule_list = []
    row_list = []
    for decl in group.ruleset.checked.declarations():
        name = decl.name.text
        span = decl.name.span
        where = f"{span.file}:{span.line}:{span.column}"
        if isinstance(decl, RULE_TYPES):
            outcomes = tuple(o for o in OUTCOMES if o in reached.get(name, set()))
            rule_list.append(RuleCoverage(name, ast.declaration_kind(decl), where, outcomes))
        elif isinstance(decl, ast.DecisionDecl):
            for number, decision_row in enumerate(decl.rows, start=1):
                row_span = decision_row.span
                at = f"{row_span.file}:{row_span.line}:{row_span.column}"
                taken = number in rows.get(name, set())
                row_list.append(RowCoverage(name, number, decision_row.verdict.text, at, taken))
    return Coverage(group.rules, tuple(rule_list), tuple(row_list))


@dataclass(frozen=True, slots=True)
class MutantResult:
    """A mutant and what became of it: `caught` (by the cases named), `survived` (every
    case still passes), `unreached` (no case evaluates a rule it changes: it survives
    too), or `invalid` (the mutated rules do not check, so it is no mutant)."""

    mutant: Mutant
    status: str
    caught_by: tuple[str, ...] = ()

    @property
    def surviving(self) -> bool:
        return self.status in ("survived", "unreached")


def mutate_group(group: Group) -> list[MutantResult]:
    """Every threshold mutant of the group's rules, run against its cases. A mutant is
    caught when a case that passes on the rules as written fails on it."""
    baseline = [result.passed for result in group.results]
    graphs: set[str] | None = set()
    for result in group.results:
        if result.observed.graph is None:
            graphs = None  # a refused run: which graph it would reach is not known
            break
        assert graphs is not None
        graphs.add(result.observed.graph)
    found = []
    for mutant in mutants(group.ruleset):
        ruleset = mutant_ruleset(group.ruleset, mutant)
        if ruleset is None:
            found.append(MutantResult(mutant, "invalid"))
            continue
        changed = changed_rules(group.ruleset, ruleset)
        reach = ruleset.checked.graphs
        if graphs is not None and not any(
            reach.get(name, frozenset()) & graphs for name in changed
        ):
            found.append(MutantResult(mutant, "unreached"))
            continue
        results = run_group(group, compile_program(ruleset))
        caught = tuple(
            f"{r.case.file}: {r.case.name}"
            for r, passed in zip(results, baseline, strict=True)
            if passed and not r.passed
        )
        found.append(MutantResult(mutant, "caught" if caught else "survived", caught))
    return found


def run_suite(groups: list[Group], mutate: bool = False) -> list[list[MutantResult]]:
    """Run every case of every group once, keeping its result in the group; with `mutate`,
    then every mutant of each group's rules (the edited copies live until then)."""
    total = sum(len(group.cases) for group in groups)
    with tempfile.TemporaryDirectory(prefix="rulecheck-test-") as scratch:
        prepare_groups(groups, Path(scratch))
        done = 0
        for group in groups:
            group.results = run_group(group)
            done += len(group.cases)
            advance(done, total)
        # the threshold mutants are of the rules as written, never of a case's edited rules
        if not mutate:
            return []
        return [
            [] if any(c.rule_edits for c in group.cases) else mutate_group(group)
            for group in groups
        ]
