"""A ruleset compiled once per run, and the evaluation of one graph against it.

Order of evaluation on a graph: link rules, then budgets, then gates in dependency order,
then decision policies. Each link rule, budget and gate outcome is available to later
rules as `passed(NAME)` (or a gate's bare name), and to decisions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import networkx as nx

from engine.check.decisions import decide, gates_read
from engine.evaluate.compile import Compiler, Context
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
from engine.evaluate.links import CompiledLink, Violation, compile_link, run_link
from engine.graph.build import GraphSpec, graph_spec
from engine.ruleset import Ruleset
from engine.syntax import ast


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
    """Everything the rules of one graph concluded about one input."""

    violations: tuple[Violation, ...]
    budgets: tuple[RuleResult, ...]
    gates: tuple[RuleResult, ...]
    decisions: tuple[DecisionResult, ...]
    tables: tuple[TableResult, ...] = ()
    outcomes: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Program:
    """What evaluation needs: the ruleset, its compiler, and every compiled rule."""

    ruleset: Ruleset
    compiler: Compiler
    links: tuple[CompiledLink, ...]
    gates: tuple[CompiledGate, ...]
    budgets: tuple[CompiledBudget, ...]
    decisions: tuple[ast.DecisionDecl, ...]
    tables: tuple[CompiledTable, ...]
    graphs: Mapping[str, frozenset[str]]
    _specs: dict[str, GraphSpec] = field(default_factory=dict)

    def links_of(self, graph: str) -> tuple[CompiledLink, ...]:
        """The link rules that read graph `graph`, in source order."""
        return tuple(link for link in self.links if graph in self.graphs[link.name])

    def graph(self, name: str) -> GraphSpec:
        """The node kinds of graph `name` (computed once)."""
        if name not in self._specs:
            self._specs[name] = graph_spec(self.ruleset.checked, name)
        return self._specs[name]

    @staticmethod
    def _record(result: RuleResult, ctx: Context) -> RuleResult:
        """Make a rule's outcome readable by the rules after it (`passed(NAME)`)."""
        ctx.gates[result.name] = result.passed
        return result

    def evaluate(
        self, graph: str, ctx: Context, subject: str | frozenset[str] | None = None
    ) -> Evaluation:
        """Run every rule of graph `graph` on `ctx`, in dependency order."""
        violations: list[Violation] = []
        for link in self.links_of(graph):
            found = run_link(link, ctx, subject)
            ctx.gates[link.name] = not found
            violations += found
        budgets = [
            self._record(run_budget(budget, ctx), ctx)
            for budget in self.budgets
            if graph in self.graphs[budget.decl.name.text]
        ]
        gates = [
            self._record(run_gate(gate, ctx), ctx)
            for gate in self.gates
            if graph in self.graphs[gate.decl.name.text]
        ]
        hashes = {d.name: d.hash for d in self.ruleset.hashed.declarations}
        decisions = []
        for decl in self.decisions:
            if graph in self.graphs[decl.name.text]:
                row = decide(decl, ctx.gates)
                read = _gates_read(decl)
                decisions.append(
                    DecisionResult(
                        decl.name.text,
                        hashes[decl.name.text],
                        decl.note,
                        row.verdict.text,
                        decl.rows.index(row) + 1,
                        {name: ctx.gates[name] for name in read},
                    )
                )
        tables = tuple(
            run_table(table, ctx)
            for table in self.tables
            if graph in self.graphs[table.decl.name.text]
        )
        return Evaluation(
            tuple(violations),
            tuple(budgets),
            tuple(gates),
            tuple(decisions),
            tables,
            dict(ctx.gates),
        )


def _gates_read(decl: ast.DecisionDecl) -> list[str]:
    names = [n.id for row in decl.rows if row.condition for n in gates_read(row.condition)]
    return sorted(set(names))


def compile_program(ruleset: Ruleset) -> Program:
    """Compile every link rule, gate and budget of a checked, hashed ruleset."""
    compiler = Compiler(ruleset.checked)
    hashes = {d.name: d.hash for d in ruleset.hashed.declarations}
    graphs = ruleset.checked.graphs
    links, gates, budgets, decisions, tables = [], [], [], [], []
    for decl in ruleset.checked.declarations():
        name = decl.name.text
        if isinstance(decl, ast.LinkDecl):
            links.append(compile_link(compiler, decl, hashes[name]))
        elif isinstance(decl, ast.GateDecl):
            gates.append(compile_gate(compiler, decl, hashes[name]))
        elif isinstance(decl, ast.BudgetDecl):
            budgets.append(compile_budget(compiler, decl, hashes[name]))
        elif isinstance(decl, ast.DecisionDecl):
            decisions.append(decl)
        elif isinstance(decl, ast.TableDecl):
            tables.append(compile_table(compiler, decl, hashes[name]))
    ordered = _gate_order(gates, ruleset)
    return Program(
        ruleset,
        compiler,
        tuple(links),
        ordered,
        tuple(budgets),
        tuple(decisions),
        tuple(tables),
        graphs,
    )


def _gate_order(gates: list[CompiledGate], ruleset: Ruleset) -> tuple[CompiledGate, ...]:
    """Gates so that every gate comes after the gates it reads (source order otherwise)."""
    by_name = {gate.decl.name.text: gate for gate in gates}
    order = nx.DiGraph()
    order.add_nodes_from(by_name)
    for name in by_name:
        for ref in ruleset.checked.infos[name].references:
            if ref in by_name:
                order.add_edge(ref, name)
    position = {name: index for index, name in enumerate(by_name)}
    ranked = nx.lexicographical_topological_sort(order, key=lambda name: position[name])
    return tuple(by_name[name] for name in ranked)
