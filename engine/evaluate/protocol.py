"""Check a bundle against a protocol the rules declare: `rulecheck check BUNDLE`.

find the protocol (`--protocol`, or the bundle's `rulecheck.yaml`) -> load its documents
-> the graph it names -> every rule of that graph -> its entry points: the admission gate,
the verdict decision and the report tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.bundle.protocol_bundle import ProtocolBundle, load_protocol_bundle, read_protocol_file
from engine.check.symbols import did_you_mean
from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.inputs import GraphResult, evaluate_documents
from engine.evaluate.program import DecisionResult, Program
from engine.syntax import ast


@dataclass(frozen=True, slots=True)
class ProtocolResult:
    """What the rules concluded about one bundle under one protocol."""

    bundle: ProtocolBundle
    graph: GraphResult
    protocol_hash: str

    @property
    def protocol(self) -> ast.ProtocolDecl:
        """The protocol the bundle was checked against."""
        return self.bundle.protocol

    @property
    def admitted(self) -> bool | None:
        """The admission gate's outcome; None when the protocol declares none."""
        if not self.protocol.admission:
            return None
        return self.graph.evaluation.outcomes.get(self.protocol.admission[0].text, False)

    @property
    def verdict(self) -> DecisionResult | None:
        """The verdict decision's result; None when the protocol declares none."""
        if not self.protocol.verdict:
            return None
        name = self.protocol.verdict[0].text
        return next((d for d in self.graph.evaluation.decisions if d.name == name), None)

    @property
    def passed(self) -> bool:
        """Admitted, where the protocol has an admission gate; else every rule holds."""
        admitted = self.admitted
        return self.graph.passed if admitted is None else admitted


def declared_protocols(program: Program) -> dict[str, ast.ProtocolDecl]:
    """The protocols the rules declare, by name."""
    return program.ruleset.checked.symbols.of_type(ast.ProtocolDecl)


def find_protocol(program: Program, root: Path, name: str | None) -> ast.ProtocolDecl | None:
    """The protocol to check `root` against: `name`, else the one `rulecheck.yaml` names;
    None when neither is given.

    Raises:
        RulecheckError: exit 2 for an unknown protocol; exit 1 when the bundle names
            another protocol than `name`, or pins another ruleset than the one loaded.
    """
    pinned = read_protocol_file(root) if root.is_dir() else None
    chosen = name or (pinned["protocol"] if pinned else None)
    if chosen is None:
        return None
    protocols = declared_protocols(program)
    if chosen not in protocols:
        hint = did_you_mean(chosen, protocols) or (
            f"the rules declare: {', '.join(sorted(protocols)) or 'no protocol'}"
        )
        raise RulecheckError(
            [Diagnostic("USAGE_PROTOCOL", f"the rules declare no protocol `{chosen}`", hint=hint)],
            ExitCode.USAGE,
        )
    if pinned is not None:
        _check_pin(program, root, chosen, pinned)
    return protocols[chosen]


def _check_pin(program: Program, root: Path, chosen: str, pinned: dict[str, str]) -> None:
    where = Location(str(root / "rulecheck.yaml"))
    problems = []
    if pinned["protocol"] != chosen:
        message = f"the bundle is for protocol `{pinned['protocol']}`, not `{chosen}`"
        problems.append(Diagnostic("PROTOCOL_MISMATCH", message, where))
    expected = pinned.get("ruleset_hash")
    actual = program.ruleset.hashed.ruleset_hash
    if expected is not None and expected != actual:
        message = f"the bundle pins ruleset `{expected}`; the rules loaded are `{actual}`"
        problems.append(Diagnostic("PROTOCOL_RULESET_MISMATCH", message, where))
    if problems:
        raise RulecheckError(problems, ExitCode.REFUSED)


def evaluate_protocol(program: Program, root: Path, protocol: ast.ProtocolDecl) -> ProtocolResult:
    """Load the bundle's documents and evaluate the protocol's graph over them."""
    bundle = load_protocol_bundle(root, protocol)
    optional = frozenset(d.name.text for d in protocol.documents if d.optional)
    graph = evaluate_documents(
        program, protocol.graph[0].text, bundle.documents, optional, root=root
    )
    hashes = program.ruleset.hashed.by_name()
    return ProtocolResult(bundle, graph, hashes[protocol.name.text].hash)
