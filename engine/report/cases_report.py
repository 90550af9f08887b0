"""Report of `rulecheck test`: one line per case, a diff of expected and observed for each
failure, the coverage of rule outcomes and decision rows, the surviving mutants, and
`N passed, N failed` last."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engine.cases.run import Difference, Observed
from engine.cases.suite import OUTCOMES, CaseResult, Coverage, Group, MutantResult


def _inline(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def _case_where(result: CaseResult) -> str:
    where = result.case.where
    return f"{where.file}:{where.line}:{where.column}"


def counts(results: Sequence[CaseResult]) -> tuple[int, int]:
    """How many cases passed and how many failed."""
    passed = sum(r.passed for r in results)
    return passed, len(results) - passed


def _difference_lines(difference: Difference) -> list[str]:
    return [
        f"  {difference.key}",
        f"    - expected {_inline(difference.expected)}",
        f"    + observed {_inline(difference.observed)}",
    ]


def coverage_figures(cover: Coverage) -> dict[str, int]:
    """The coverage as counts: rules reached (any outcome), rules reaching both pass and
    fail, outcomes reached of every rule's three, decision rows taken."""
    rules = cover.rule_outcomes
    return {
        "rules": len(rules),
        "rules_reached": sum(bool(r.reached) for r in rules),
        "rules_pass_and_fail": sum({"pass", "fail"} <= set(r.reached) for r in rules),
        "outcomes": len(rules) * len(OUTCOMES),
        "outcomes_reached": sum(len(r.reached) for r in rules),
        "rows": len(cover.rows),
        "rows_reached": sum(r.reached for r in cover.rows),
    }


def _coverage_lines(group: Group, cover: Coverage) -> list[str]:
    shown = ", ".join(str(p) for p in cover.rules)
    lines = [f"COVERAGE {shown} (ruleset {group.ruleset.hashed.ruleset_hash[:12]})"]
    width = max((len(r.name) for r in cover.rule_outcomes), default=0)
    for rule in cover.rule_outcomes:
        reached = " ".join(rule.reached) or "-"
        lines.append(f"  {rule.kind:8} {rule.name:{width}}  {reached:18} {rule.where}")
    for row in cover.rows:
        mark = "taken" if row.reached else "-"
        lines.append(
            f"  decision {row.decision} row {row.row} => {row.verdict}: {mark}  {row.where}"
        )
    missing = [r for r in cover.rule_outcomes if not r.reached]
    rows = [r for r in cover.rows if not r.reached]
    if missing or rows:
        lines.append("  not reached by any case:")
        lines += [f"    {r.kind} {r.name} ({r.where})" for r in missing]
        lines += [f"    decision {r.decision} row {r.row} => {r.verdict} ({r.where})" for r in rows]
    f = coverage_figures(cover)
    lines.append(
        f"  rules reached {f['rules_reached']}/{f['rules']}, with pass and fail "
        f"{f['rules_pass_and_fail']}/{f['rules']}; outcomes {f['outcomes_reached']}/"
        f"{f['outcomes']}; decision rows {f['rows_reached']}/{f['rows']}"
    )
    return lines


def mutation_figures(results: Sequence[MutantResult]) -> dict[str, int]:
    """How many mutants were tried, caught, survived (unreached ones too) and invalid."""
    return {
        "mutants": len(results),
        "caught": sum(r.status == "caught" for r in results),
        "survived": sum(r.surviving for r in results),
        "unreached": sum(r.status == "unreached" for r in results),
        "invalid": sum(r.status == "invalid" for r in results),
    }


def _mutation_lines(group: Group, results: Sequence[MutantResult]) -> list[str]:
    shown = ", ".join(str(p) for p in group.rules)
    f = mutation_figures(results)
    lines = [
        f"MUTATIONS {shown}: {f['mutants']} mutants, {f['caught']} caught, "
        f"{f['survived']} survived ({f['unreached']} unreached), {f['invalid']} invalid"
    ]
    for result in results:
        if result.surviving:
            m = result.mutant
            why = " (no case evaluates a rule it changes)" if result.status == "unreached" else ""
            lines.append(
                f"  SURVIVED {m.where} `{m.original}` -> `{m.replacement}` in {m.declaration}{why}"
            )
    return lines


def observed_lines(observed: Observed) -> list[str]:
    """What one case's run concluded, for `--verbose`: the refusal, or the verdict, each
    decision's row and each rule outcome."""
    if observed.refused:
        return [f"  observed refused: {', '.join(d.code for d in observed.diagnostics)}"]
    head = "passed" if observed.passed else "failed"
    if observed.admitted is not None:
        head += ", admitted" if observed.admitted else ", not admitted"
    if observed.verdict is not None:
        head += f", verdict {observed.verdict}"
    lines = [f"  observed {head}"]
    lines += [f"    decision {n}: {v} (row {row})" for n, (v, row) in observed.decisions.items()]
    for outcome in OUTCOMES:
        names = [n for n, seen in observed.rules.items() if seen.outcome == outcome]
        if names:
            lines.append(f"    {outcome} ({len(names)}): {', '.join(names)}")
    return lines


def cases_text(
    groups: Sequence[Group],
    coverages: Sequence[Coverage] | None,
    mutations: Sequence[Sequence[MutantResult]] | None,
    verbose: bool = False,
) -> str:
    """The report for reading; `N passed, N failed` is its last line. With `verbose`,
    each case's line is followed by what its run observed."""
    results = [r for g in groups for r in g.results]
    lines = []
    for result in results:
        lines.append(
            f"{'PASS' if result.passed else 'FAIL'} {_case_where(result)} {result.case.name}"
        )
        for difference in result.differences:
            lines += _difference_lines(difference)
        if verbose:
            lines += observed_lines(result.observed)
    for index, group in enumerate(groups):
        if coverages is not None:
            lines += ["", *_coverage_lines(group, coverages[index])]
        if mutations is not None:
            lines += ["", *_mutation_lines(group, mutations[index])]
    passed, failed = counts(results)
    if coverages is not None or mutations is not None:
        lines.append("")
    lines.append(f"{passed} passed, {failed} failed")
    return "\n".join(lines) + "\n"


def cases_json(
    groups: Sequence[Group],
    coverages: Sequence[Coverage] | None,
    mutations: Sequence[Sequence[MutantResult]] | None,
) -> dict[str, Any]:
    """The report as data (canonical when serialised with sorted keys)."""
    results = [r for g in groups for r in g.results]
    passed, failed = counts(results)
    data: dict[str, Any] = {
        "cases": [
            {
                "file": r.case.where.file,
                "line": r.case.where.line,
                "column": r.case.where.column,
                "name": r.case.name,
                "kind": r.case.kind,
                "passed": r.passed,
                "differences": [
                    {"key": d.key, "expected": d.expected, "observed": d.observed}
                    for d in r.differences
                ],
            }
            for r in results
        ],
        "passed": passed,
        "failed": failed,
    }
    if coverages is not None:
        data["coverage"] = [
            {
                "rules": [str(p) for p in c.rules],
                "ruleset_hash": g.ruleset.hashed.ruleset_hash,
                "figures": coverage_figures(c),
                "rule_outcomes": [
                    {"name": r.name, "kind": r.kind, "where": r.where, "reached": list(r.reached)}
                    for r in c.rule_outcomes
                ],
                "decision_rows": [
                    {
                        "decision": r.decision,
                        "row": r.row,
                        "verdict": r.verdict,
                        "where": r.where,
                        "reached": r.reached,
                    }
                    for r in c.rows
                ],
            }
            for g, c in zip(groups, coverages, strict=True)
        ]
    if mutations is not None:
        data["mutations"] = [
            {
                "rules": [str(p) for p in g.rules],
                "figures": mutation_figures(found),
                "mutants": [
                    {
                        "where": m.mutant.where,
                        "declaration": m.mutant.declaration,
                        "original": m.mutant.original,
                        "replacement": m.mutant.replacement,
                        "status": m.status,
                        "caught_by": list(m.caught_by),
                    }
                    for m in found
                ],
            }
            for g, found in zip(groups, mutations, strict=True)
        ]
    return data
