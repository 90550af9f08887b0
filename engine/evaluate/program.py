"""A ruleset compiled once per run: every link rule as a closure, grouped by graph."""

from __future__ import annotations

from dataclasses import dataclass

from engine.evaluate.compile import Compiler
from engine.evaluate.links import CompiledLink, compile_link
from engine.graph.build import GraphSpec, graph_spec
from engine.ruleset import Ruleset
from engine.syntax import ast


@dataclass(frozen=True, slots=True)
class Program:
    """What evaluation needs: the ruleset, its compiler, and the compiled link rules."""

    ruleset: Ruleset
    compiler: Compiler
    links: tuple[CompiledLink, ...]
    link_graphs: dict[str, str]

    def links_of(self, graph: str) -> tuple[CompiledLink, ...]:
        """The link rules that read graph `graph`, in source order."""
        return tuple(link for link in self.links if self.link_graphs[link.name] == graph)

    def graph(self, name: str) -> GraphSpec:
        """The node kinds of graph `name`."""
        return graph_spec(self.ruleset.checked, name)


def rule_graph(ruleset: Ruleset, name: str) -> str | None:
    """The graph a rule reads (the graph of the kinds it uses), or None if it reads none."""
    kinds = ruleset.checked.symbols.kinds
    graphs = {kinds[k].graph.text for k in ruleset.checked.infos[name].kinds if k in kinds}
    return min(graphs) if graphs else None


def compile_program(ruleset: Ruleset) -> Program:
    """Compile every link rule of a checked, hashed ruleset."""
    compiler = Compiler(ruleset.checked)
    hashes = {d.name: d.hash for d in ruleset.hashed.declarations}
    links = []
    graphs = {}
    for decl in ruleset.checked.declarations():
        if isinstance(decl, ast.LinkDecl):
            links.append(compile_link(compiler, decl, hashes[decl.name.text]))
            graphs[decl.name.text] = rule_graph(ruleset, decl.name.text) or ""
    return Program(ruleset, compiler, tuple(links), graphs)
