"""The graph as networkx sees it (`Graph.nx_graph`): the same nodes, attributes and
labelled edges the evaluator reads, built only when asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from builders import make_answer, make_packet

from engine.evaluate.program import compile_program
from engine.graph.build import build_graph
from engine.ruleset import load_ruleset

RULES = Path(__file__).resolve().parent.parent / "rules"


def test_the_networkx_graph_is_the_evaluated_graph() -> None:
    program = compile_program(load_ruleset([RULES]))
    documents = {"answer": make_answer("B"), "packet": make_packet(), "review": {"role": "B"}}
    graph = build_graph(program.graph("answer"), documents)
    exported = graph.nx_graph()
    assert set(exported.nodes) == set(graph.attrs)
    for node in graph.attrs:
        place = graph.place(node)
        assert place is not None
        shown = {**graph.node_attrs(node), "@document": place[0], "@pointer": place[1]}
        assert exported.nodes[node] == shown
        assert exported.nodes[node].get("id") == graph.id_of(node)  # `packet` is keyed by packet_id
    packet = graph.by_kind["packet"][0]
    assert "id" not in graph.attrs[packet] and exported.nodes[packet]["id"] == "P1"
    claim = graph.by_kind["claim"][0]
    assert graph.place(claim) == ("answer", "/final/claims/0")
    assert graph.record(claim) is documents["answer"]["final"]["claims"][0]  # not a copy
    expected = {
        (node, target, label)
        for label, edges in graph.edges().items()
        for node, targets in edges.items()
        for target in targets
    }
    found = {(u, v, label) for u, v, data in exported.edges(data=True) for label in data["labels"]}
    assert found == expected and expected  # the answer graph has edges: C -> E, ...
    assert graph.nx_graph() is exported  # built once


def test_networkx_is_not_imported_to_evaluate() -> None:
    lint = f"sys.argv = ['rulecheck', 'lint', {str(RULES)!r}]"
    script = "\n".join(
        [
            "import sys",
            "from engine.cli import main",
            lint,
            "try:\n    main()\nexcept SystemExit:\n    pass",
            "import engine.graph.build, engine.evaluate.nested",
            "assert 'networkx' not in sys.modules, 'networkx was imported'",
        ]
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_a_label_s_edges_are_made_when_first_followed_and_are_the_same() -> None:
    """The evaluator makes a label's edges when a rule first follows it; asked for all of
    them (export, networkx) the graph makes the rest: the same edges either way."""
    program = compile_program(load_ruleset([RULES]))
    documents = {"answer": make_answer("B"), "packet": make_packet(), "review": {"role": "B"}}
    lazy = build_graph(program.graph("answer"), documents)
    assert "evidence_ids" not in lazy.outgoing  # no rule has followed it yet
    claim = lazy.by_kind["claim"][0]
    reached = lazy.outgoing["evidence_ids"][claim]
    assert reached and all(node[0] == "evidence" for node in reached)
    assert "evidence_ids" in lazy.outgoing
    whole = build_graph(program.graph("answer"), documents).edges()
    assert list(whole) == list(lazy.edges())  # declaration order, however they were asked
    assert whole == lazy.edges()
    assert lazy.outgoing["no_such_label"] == {}
