"""A ruleset compiled once per run, and the evaluation of one graph against it.

Every rule kind is lowered the same way (`Compiler.rule_function`) and scheduled in one
order: each rule after every rule it reads (`passed(NAME)`, a gate's bare name, directly
or through metrics), source order otherwise, decisions after the gates they read. The
outcome of each link rule, budget and gate is then available to every later rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.check.decisions import gates_read
from engine.check.protocols import reads
from engine.check.symbols import location
from engine.errors import Diagnostic, Severity
from engine.evaluate.compile import Compiled, Compiler, Context, PacedRun
from engine.evaluate.gates import (
    CompiledBudget,
    CompiledGate,
    CompiledTable,
    RuleResult,
    TableResult,
    compile_budget,
    compile_gate,
    compile_table,
    run_budget,
    run_gate,
    run_table,
)
from engine.evaluate.links import (
    CompiledLink,
    Found,
    LinkGroup,
    Violation,
    compile_link,
    group_links,
    run_group,
)
from engine.evaluate.release import Held, asked_by, held_by, release_plan
from engine.evaluate.runtime import FAILURES, EvaluationError, failure
from engine.graph.build import GraphSpec, graph_spec
from engine.order import topological_order
from engine.progress import advance
from engine.ruleset import Ruleset
from engine.syntax import ast

VACUOUS = "VACUOUS"
DECISION_UNDECIDED = "DECISION_UNDECIDED"


@dataclass(frozen=True, slots=True)
class DecisionResult:
    """The verdict of a decision policy and the gate outcomes it read."""

    name: str
    hash: str
    note: str | None
    verdict: str
    row: int
    outcomes: dict[str, bool]


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Everything the rules of one graph concluded about one input.

    `warnings` names what the input says of the rules (`ATTR_ABSENT`: an attribute no
    record holds beside a near name) and each link rule, gate and budget that bound nothing
    on this input (`VACUOUS`): it passed, but its passing is not evidence.
    """

    violations: tuple[Violation, ...]
    budgets: tuple[RuleResult, ...]
    gates: tuple[RuleResult, ...]
    decisions: tuple[DecisionResult, ...]
    tables: tuple[TableResult, ...] = ()
    outcomes: dict[str, bool] = field(default_factory=dict)
    warnings: tuple[Diagnostic, ...] = ()
    # Each decision that could not be decided (`DECISION_UNDECIDED`): a row it had to read
    # rests on an evaluation error, so no verdict is given.
    undecided: tuple[Diagnostic, ...] = ()

    @property
    def vacuous(self) -> tuple[Diagnostic, ...]:
        """The warnings of rules that bound nothing (`VACUOUS`)."""
        return tuple(w for w in self.warnings if w.code == VACUOUS)

    @property
    def about_input(self) -> tuple[Diagnostic, ...]:
        """The other warnings: what the input says of the rules (`ATTR_ABSENT`)."""
        return tuple(w for w in self.warnings if w.code != VACUOUS)


@dataclass(frozen=True, slots=True)
class CompiledDecision:
    """A decision policy: each `when` row's condition compiled (None for `otherwise`)."""

    decl: ast.DecisionDecl
    hash: str
    conditions: tuple[Compiled | None, ...]
    read: tuple[str, ...]


def compile_decision(
    compiler: Compiler, decl: ast.DecisionDecl, rule_hash: str
) -> CompiledDecision:
    """Compile the rows of a decision policy; the linter proved exactly one row applies."""
    conditions = tuple(
        compiler.expr(row.condition) if row.condition is not None else None for row in decl.rows
    )
    read = sorted({n.id for row in decl.rows if row.condition for n in gates_read(row.condition)})
    return CompiledDecision(decl, rule_hash, conditions, tuple(read))


class Undecided(Exception):
    """A decision row's condition read a rule whose outcome rests on an evaluation error."""

    def __init__(self, row: int, message: str) -> None:
        super().__init__(message)
        self.row = row
        self.message = message


def _first_holding(decision: CompiledDecision, ctx: Context) -> int | None:
    """The index of the first `when` row whose condition holds; rows are read in order, so
    an error in a row before it leaves the decision undecided (`Undecided`)."""
    for index, condition in enumerate(decision.conditions):
        if condition is None:
            continue
        try:
            if condition(ctx, {}) is True:
                return index
        except FAILURES as error:
            raise Undecided(index + 1, failure(error)) from None
    return None


def run_decision(decision: CompiledDecision, ctx: Context) -> DecisionResult:
    """The first `when` row whose condition holds, else the `otherwise` row.

    Raises:
        Undecided: a row before the one taken could not be evaluated.
    """
    chosen = _first_holding(decision, ctx)
    if chosen is None:
        chosen = next(i for i, c in enumerate(decision.conditions) if c is None)
    decl = decision.decl
    return DecisionResult(
        decl.name.text,
        decision.hash,
        decl.note,
        decl.rows[chosen].verdict.text,
        chosen + 1,
        {name: ctx.gates[name] for name in decision.read},
    )


Step = CompiledLink | CompiledBudget | CompiledGate | CompiledTable | CompiledDecision


def _step_name(step: Step) -> str:
    return step.name if isinstance(step, CompiledLink) else step.decl.name.text


@dataclass(slots=True)
class _Run:
    """The results of one evaluation as they come, each kind in schedule order."""

    violations: list[Violation] = field(default_factory=list)
    budgets: list[RuleResult] = field(default_factory=list)
    gates: list[RuleResult] = field(default_factory=list)
    tables: list[TableResult] = field(default_factory=list)
    decisions: list[DecisionResult] = field(default_factory=list)
    vacuous: list[str] = field(default_factory=list)
    undecided: list[tuple[str, Undecided]] = field(default_factory=list)
    # What the link rules of a group found that have not been reached yet, by name.
    grouped: dict[str, Found] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Program:
    """What evaluation needs: the ruleset, its compiler, and every rule in schedule order.

    A rule is compiled when a graph it reads is first evaluated (or when it is asked for):
    a command that evaluates one graph compiles only that graph's rules."""

    ruleset: Ruleset
    compiler: Compiler
    order: tuple[str, ...]  # every rule's name, each after the rules it reads
    graphs: Mapping[str, frozenset[str]]
    hashes: Mapping[str, str]  # each declaration's hash, by name
    _specs: dict[str, GraphSpec] = field(default_factory=dict)
    _compiled: dict[str, Step] = field(default_factory=dict)
    _steps_of: dict[str, tuple[Step, ...]] = field(default_factory=dict)
    _links_of: dict[str, tuple[CompiledLink, ...]] = field(default_factory=dict)
    _groups_of: dict[str, tuple[LinkGroup, ...]] = field(default_factory=dict)
    _releases_of: dict[str, tuple[Held | None, ...]] = field(default_factory=dict)
    _paced: dict[str, PacedRun] = field(default_factory=dict)

    @property
    def schedule(self) -> tuple[Step, ...]:
        """Every rule, compiled, in schedule order."""
        return tuple(self.step(name) for name in self.order)

    @property
    def links(self) -> tuple[CompiledLink, ...]:
        """Every link rule, in schedule order."""
        return tuple(step for step in self.schedule if isinstance(step, CompiledLink))

    def step(self, name: str) -> Step:
        """Rule `name`, compiled (once)."""
        if name not in self._compiled:
            decl = self.ruleset.checked.symbols.declarations[name]
            self._compiled[name] = _compile_step(self.compiler, decl, self.hashes[name])
        return self._compiled[name]

    def steps_of(self, graph: str) -> tuple[Step, ...]:
        """The rules that read graph `graph`, compiled, in schedule order (found once)."""
        if graph not in self._steps_of:
            self._steps_of[graph] = tuple(
                self.step(name) for name in self.order if graph in self.graphs[name]
            )
        return self._steps_of[graph]

    def links_of(self, graph: str) -> tuple[CompiledLink, ...]:
        """The link rules that read graph `graph`, in schedule order (found once: asked
        per answer)."""
        if graph not in self._links_of:
            steps = self.steps_of(graph)
            self._links_of[graph] = tuple(s for s in steps if isinstance(s, CompiledLink))
        return self._links_of[graph]

    def releases_of(self, graph: str) -> tuple[Held | None, ...]:
        """Per rule of `steps_of(graph)`, what the evaluation lets go once it has run (see
        engine/evaluate/release.py; found once)."""
        if graph not in self._releases_of:
            checked = self.ruleset.checked
            names = [_step_name(step) for step in self.steps_of(graph)]
            read: dict[str, Held] = {}
            held = [held_by(name, checked.symbols, checked.infos, read) for name in names]
            asked, computed = [], frozenset[str]()
            for name, reads in zip(names, held, strict=True):
                asked.append(asked_by(name, checked.symbols, checked.infos, computed))
                computed |= reads.metrics
            self._releases_of[graph] = release_plan(held, asked)
        return self._releases_of[graph]

    def link_groups_of(self, graph: str) -> tuple[LinkGroup, ...]:
        """The link rules of `links_of(graph)` grouped to share their loops
        (`group_links`): those that read no other rule's result (found once)."""
        if graph not in self._groups_of:
            checked = self.ruleset.checked

            def reads_no_rule(name: str) -> bool:
                return not reads(name, checked.symbols, checked.infos)[0]

            links = self.links_of(graph)
            self._groups_of[graph] = group_links(self.compiler, links, reads_no_rule)
        return self._groups_of[graph]

    def table(self, name: str) -> CompiledTable:
        """The compiled table `name` (a KeyError when there is none)."""
        decl = self.ruleset.checked.symbols.declarations.get(name)
        if not isinstance(decl, ast.TableDecl):
            raise KeyError(name)
        step = self.step(name)
        assert isinstance(step, CompiledTable)
        return step

    def paced_table(self, name: str) -> PacedRun:
        """Table `name`'s bindings run a node at a time (`Compiler.paced_function`),
        compiled when first asked for: only tables derived together run so."""
        if name not in self._paced:
            decl = self.table(name).decl
            self._paced[name] = self.compiler.paced_function(f"table_{name}_paced", decl.bindings)
        return self._paced[name]

    def graph_reading(self, name: str, *rules: str) -> GraphSpec:
        """The kinds of graph `name` that the rules `rules` read, directly or through what
        they use (for tables that must run before the whole graph can be built)."""
        spec = self.graph(name)
        kinds = self.kinds_read(*rules)
        return GraphSpec(spec.name, tuple(k for k in spec.kinds if k.name in kinds))

    def kinds_read(self, *rules: str) -> frozenset[str]:
        """The kinds the rules `rules` read, directly or through what they use."""
        checked = self.ruleset.checked
        return frozenset(
            kind for rule in rules for kind in reads(rule, checked.symbols, checked.infos)[1]
        )

    def graph(self, name: str) -> GraphSpec:
        """The node kinds of graph `name` (computed once)."""
        if name not in self._specs:
            self._specs[name] = graph_spec(self.ruleset.checked, name)
        return self._specs[name]

    def evaluate(
        self,
        graph: str,
        ctx: Context,
        subject: str | frozenset[str] | None = None,
        done: Mapping[str, TableResult] | None = None,
        tables: Collection[str] | None = None,
    ) -> Evaluation:
        """Run every rule of graph `graph` on `ctx`, each after the rules it reads. A table
        in `done` (one a derived document was made from) is reported as it was computed.
        With `tables`, only the tables named there are computed (no rule reads a table's
        rows, so a table no one reports need not be held)."""
        run = _Run()
        steps = self.steps_of(graph)
        releases = self.releases_of(graph)
        groups = {link.name: group for group in self.link_groups_of(graph) for link in group.links}
        for number, (step, release) in enumerate(zip(steps, releases, strict=True)):
            advance(number, len(steps), _step_name(step))
            _run_scheduled(step, ctx, subject, run, groups, done, tables)
            if release is not None:
                release.let_go(ctx)
        return Evaluation(
            tuple(run.violations),
            tuple(run.budgets),
            tuple(run.gates),
            tuple(run.decisions),
            tuple(run.tables),
            dict(ctx.gates),
            (*ctx.warnings, *(self._vacuous(name) for name in run.vacuous)),
            tuple(self._undecided(name, why) for name, why in run.undecided),
        )

    def _undecided(self, name: str, why: Undecided) -> Diagnostic:
        decl = self.ruleset.checked.symbols.declarations[name]
        assert isinstance(decl, ast.DecisionDecl)
        row = decl.rows[why.row - 1]
        return self._about(
            name,
            row.span,
            DECISION_UNDECIDED,
            f"decision `{name}` cannot be decided: row {why.row} "
            f"(`{row.verdict.text}`) cannot be read: {why.message}",
            "error",
            "an outcome that could not be evaluated is neither true nor false; fix the "
            "input or the rule the error names",
        )

    def _vacuous(self, name: str) -> Diagnostic:
        decl = self.ruleset.checked.symbols.declarations[name]
        what = ast.declaration_kind(decl)
        return self._about(
            name,
            decl.name.span,
            VACUOUS,
            f"{what} `{name}` binds nothing on this input: its outcome is not evidence",
            "warning",
            "check that the rule's `for` clauses and ledger reach the records they mean to",
        )

    def _about(
        self, name: str, span: ast.Span, code: str, message: str, severity: Severity, hint: str
    ) -> Diagnostic:
        """A diagnostic about rule `name`, located at `span` of its rule file, with its hash."""
        where = location(span)
        return Diagnostic(
            code,
            message,
            dataclasses.replace(where, file=portable_path(where.file)),
            severity=severity,
            hint=hint,
            rule=name,
            rule_hash=self.ruleset.hashed.by_name()[name].hash,
        )


def portable_path(file: str) -> str:
    """A rule file's path relative to the working folder when it is inside it, so reports
    name `rules/x.rules` the same way on every machine."""
    try:
        return Path(file).resolve().relative_to(Path.cwd()).as_posix()
    except (ValueError, OSError):
        return file


def _record(result: RuleResult, ctx: Context, results: list[RuleResult], run: _Run) -> None:
    """Keep a gate's or budget's result, readable by later rules as `passed(NAME)`."""
    ctx.gates[result.name] = result.passed
    if result.error is not None:
        ctx.errors[result.name] = result.error
    results.append(result)
    if result.vacuous:
        run.vacuous.append(result.name)


def _run_link(step: CompiledLink, group: LinkGroup, ctx: Context, subject: Any, run: _Run) -> None:
    """A link rule's findings, in its place in the schedule. The first rule of a group to
    be reached runs the group; the others take what it found for them."""
    if step.name not in run.grouped:
        names = (link.name for link in group.links)
        run.grouped.update(zip(names, run_group(group, ctx, subject), strict=True))
    found, bound = run.grouped.pop(step.name)
    ctx.gates[step.name] = not found
    run.violations += found
    if not bound and not found:
        run.vacuous.append(step.name)


def _run_scheduled(
    step: Step,
    ctx: Context,
    subject: Any,
    run: _Run,
    groups: Mapping[str, LinkGroup],
    done: Mapping[str, TableResult] | None,
    tables: Collection[str] | None,
) -> None:
    """One rule in its place in the schedule: a table in `done` is taken as it was
    computed, a table not in `tables` (when given) is skipped, any other rule runs."""
    if isinstance(step, CompiledTable):
        name = step.decl.name.text
        if done and name in done:
            run.tables.append(done[name])
            return
        if tables is not None and name not in tables:
            return
    _run_step(step, ctx, subject, run, groups)


def _run_step(
    step: Step, ctx: Context, subject: Any, run: _Run, groups: Mapping[str, LinkGroup]
) -> None:
    match step:
        case CompiledLink():
            _run_link(step, groups[step.name], ctx, subject, run)
        case CompiledBudget():
            _record(run_budget(step, ctx), ctx, run.budgets, run)
        case CompiledGate():
            _record(run_gate(step, ctx), ctx, run.gates, run)
        case CompiledTable():
            run.tables.append(run_table(step, ctx))
        case CompiledDecision():
            try:
                run.decisions.append(run_decision(step, ctx))
            except Undecided as why:
                run.undecided.append((step.decl.name.text, why))
        case _:  # pragma: no cover
            raise EvaluationError(f"unknown rule step {type(step).__name__}")


# Within what the references leave free, rules run kind by kind as they always have.
_RANK = {ast.LinkDecl: 0, ast.BudgetDecl: 1, ast.GateDecl: 2, ast.DecisionDecl: 3, ast.TableDecl: 4}


def compile_program(ruleset: Ruleset) -> Program:
    """The program of a checked, hashed ruleset: its rules scheduled, each compiled when
    first used."""
    names = [
        decl.name.text
        for decl in ruleset.checked.declarations()
        if isinstance(decl, _STEP_DECLARATIONS)
    ]
    hashes = {d.name: d.hash for d in ruleset.hashed.declarations}
    order = _schedule(names, ruleset)
    return Program(ruleset, Compiler(ruleset.checked), order, ruleset.checked.graphs, hashes)


_STEP_DECLARATIONS = (ast.LinkDecl, ast.GateDecl, ast.BudgetDecl, ast.DecisionDecl, ast.TableDecl)


def _compile_step(compiler: Compiler, decl: ast.Declaration, hashed: str) -> Step:
    """One rule, compiled."""
    match decl:
        case ast.LinkDecl():
            return compile_link(compiler, decl, hashed)
        case ast.GateDecl():
            return compile_gate(compiler, decl, hashed)
        case ast.BudgetDecl():
            return compile_budget(compiler, decl, hashed)
        case ast.DecisionDecl():
            return compile_decision(compiler, decl, hashed)
        case ast.TableDecl():
            return compile_table(compiler, decl, hashed)
    raise EvaluationError(f"`{decl.name.text}` is not a rule")  # pragma: no cover


def _schedule(names: list[str], ruleset: Ruleset) -> tuple[str, ...]:
    """Every rule after the rules it reads, directly or through metrics and constants.

    The linter refuses cycles (`CYCLIC_DEFINITION`), so the order always exists.
    """
    infos = ruleset.checked.infos
    declarations = ruleset.checked.symbols.declarations
    users: dict[str, list[str]] = {name: [] for name in names}
    symbols = ruleset.checked.symbols
    for name in names:
        for used in reads(name, symbols, infos)[0]:
            users.setdefault(used, []).append(name)
    position = {name: index for index, name in enumerate(names)}

    def key(name: str) -> tuple[int, int]:
        return (_RANK[type(declarations[name])], position[name])

    return tuple(topological_order(users, key=key))
