"""Warnings for declarations that can never matter (unused, unread, or running nowhere)
and for scans that grow with the square of the input.

None of these makes a ruleset wrong, so each is a warning; `rulecheck lint --strict`
makes them errors. A gate nothing reads decides nothing, and a rule that reads no kind
runs on no graph: its outcome would never be computed, which must not look like a pass.
A count, quantifier or aggregate over a whole kind that picks records by `==` against a
variable bound outside it reads every record of the kind once per outer binding; the
keyed lookup `having` finds the same records through an index.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from engine.check.symbols import SymbolTable, location, names_in
from engine.check.types import DeclInfo
from engine.errors import Diagnostic
from engine.syntax import ast
from engine.syntax.format import format_expr

_UNUSED = {
    ast.ConstDecl: ("UNUSED_CONST", "constant"),
    ast.MetricDecl: ("UNUSED_METRIC", "metric"),
    ast.CodeDecl: ("UNUSED_CODE", "reject code"),
}
_RULES = (ast.LinkDecl, ast.GateDecl, ast.BudgetDecl, ast.TableDecl, ast.DecisionDecl)


def usage_warnings(
    symbols: SymbolTable,
    infos: Mapping[str, DeclInfo],
    graphs: Mapping[str, frozenset[str]],
    disjoint: frozenset[str],
) -> list[Diagnostic]:
    """A warning for each unused constant, metric and code, each gate nothing reads, and
    each rule that runs on no graph (`disjoint` rules already have an error)."""
    used = {ref for info in infos.values() for ref in info.references}
    warnings = []
    for name, decl in symbols.declarations.items():
        unused = _UNUSED.get(type(decl))
        if unused is not None and name not in used:
            code, what = unused
            warnings.append(_warning(code, f"{what} `{name}` is never used", decl))
        elif isinstance(decl, ast.GateDecl) and name not in used:
            message = f"no decision, table or rule reads gate `{name}`: it decides nothing"
            warnings.append(_warning("GATE_UNREAD", message, decl))
        if isinstance(decl, _RULES) and graphs and not graphs.get(name) and name not in disjoint:
            message = (
                f"{ast.declaration_kind(decl)} `{name}` reads no kind, so it runs on no graph "
                "and is never evaluated"
            )
            warnings.append(_warning("RULE_RUNS_NOWHERE", message, decl))
    return warnings


def ungated_warnings(
    symbols: SymbolTable, infos: Mapping[str, DeclInfo], graphs: Mapping[str, frozenset[str]]
) -> list[Diagnostic]:
    """A LINK_UNGATED warning for each link rule and budget of a graph whose protocols
    decide through an admission gate or a verdict, when no admission gate or verdict of
    those protocols reads it, however indirectly: its violations are reported, and a
    bundle that violates it is still admitted (`rulecheck check` exits 0)."""
    deciding: dict[str, set[str]] = {}
    for protocol in symbols.of_type(ast.ProtocolDecl).values():
        roots = [entry.text for entry in (*protocol.admission, *protocol.verdict)]
        if roots:
            read = _read_from(roots, infos)
            for graph in protocol.graph:
                deciding.setdefault(graph.text, set()).update(read)
    warnings = []
    for name, decl in symbols.declarations.items():
        if not isinstance(decl, ast.LinkDecl | ast.BudgetDecl):
            continue
        decided = sorted(g for g in graphs.get(name, frozenset()) if g in deciding)
        if decided and not any(name in deciding[g] for g in decided):
            what = ast.declaration_kind(decl)
            message = (
                f"no admission gate or verdict of a protocol of graph `{decided[0]}` reads "
                f"{what} `{name}`: a bundle that breaks it is reported and still admitted"
            )
            hint = (
                f"read it where the protocol decides, e.g. `require passed({name})` in "
                "its admission gate"
            )
            warnings.append(_warning("LINK_UNGATED", message, decl, hint))
    return warnings


def _read_from(roots: list[str], infos: Mapping[str, DeclInfo]) -> set[str]:
    """Every declaration the roots read, directly or through others, the roots included."""
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            info = infos.get(name)
            pending += info.references if info is not None else ()
    return seen


def _warning(code: str, message: str, decl: ast.Declaration, hint: str | None = None) -> Diagnostic:
    return Diagnostic(
        code,
        message,
        location(decl.name.span),
        hint=hint,
        severity="warning",
        rule=decl.name.text,
    )


# ---- quadratic scans -----------------------------------------------------------------------

_Scan = ast.Quantifier | ast.Count | ast.Aggregate


def scan_warnings(symbols: SymbolTable) -> list[Diagnostic]:
    """A QUADRATIC_SCAN warning for each count, quantifier or aggregate over a whole kind
    whose filter or condition compares its variable's attribute by `==` with a value that
    depends on a variable bound outside it (`count(u in K where u.a == t.a)`)."""
    warnings: list[Diagnostic] = []
    for name, decl in symbols.declarations.items():
        for scan, keys in _scans(decl, symbols):
            source = scan.source
            assert isinstance(source, ast.Name)
            written = ", ".join(f'"{attribute}": {value}' for attribute, value in keys)
            message = (
                f"`{scan.var} in {source.id}` compares "
                + ", ".join(f"`{scan.var}.{attribute}`" for attribute, _ in keys)
                + f" with a value of an outer variable: every {source.id} is read once per "
                "binding, which grows with the square of the input"
            )
            hint = f"look the records up by key: `having({source.id}, {{{written}}})`"
            warnings.append(
                Diagnostic(
                    "QUADRATIC_SCAN",
                    message,
                    location(scan.span),
                    hint=hint,
                    severity="warning",
                    rule=name,
                )
            )
    return warnings


def _scans(
    decl: ast.Declaration, symbols: SymbolTable
) -> Iterator[tuple[_Scan, list[tuple[str, str]]]]:
    """The quadratic scans of a declaration, each with its keys (attribute, outer value)."""
    match decl:
        case ast.MetricDecl():
            params = {p.name.text: p.type.text in symbols.kinds for p in decl.params}
            yield from _expression_scans(decl.body, params, symbols)
        case ast.LinkDecl() | ast.GateDecl() | ast.TableDecl() | ast.BudgetDecl():
            scope: dict[str, bool] = {}
            for binding in decl.bindings:
                yield from _expression_scans(binding.source, scope, symbols)
                scope = {**scope, binding.var.text: _reads_input(binding.source, scope, symbols)}
                if binding.where is not None:
                    yield from _expression_scans(binding.where, scope, symbols)
            for part, bound in _rule_parts(decl, scope, symbols):
                yield from _expression_scans(part, bound, symbols)


def _rule_parts(
    decl: ast.LinkDecl | ast.GateDecl | ast.TableDecl | ast.BudgetDecl,
    scope: dict[str, bool],
    symbols: SymbolTable,
) -> list[tuple[ast.Expr, dict[str, bool]]]:
    """The expressions a rule evaluates at each binding, each with the variables it sees."""
    match decl:
        case ast.LinkDecl() | ast.GateDecl():
            return [(decl.require, scope)]
        case ast.TableDecl():
            return [(column.expr, scope) for column in decl.columns]
    ledger = decl.ledger
    entry = {**scope, ledger.var.text: _reads_input(ledger.source, scope, symbols)}
    parts = [(ledger.source, scope), (decl.ceiling, scope), (ledger.order, entry)]
    parts += [(expr, entry) for expr in (ledger.where, decl.total, decl.reserve) if expr]
    return parts


def _reads_input(expr: ast.Expr, scope: dict[str, bool], symbols: SymbolTable) -> bool:
    """Whether a value may vary with the input: it names a kind, navigates, calls a metric
    or reads a variable that varies (a `for arm in first_round_arms` does not)."""
    stack: list[object] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            if scope.get(node.id, node.id in symbols.kinds):
                return True
        elif isinstance(node, ast.Navigate | ast.Call) and (
            isinstance(node, ast.Navigate) or node.func in symbols.metrics
        ):
            return True
        if isinstance(node, tuple):
            stack.extend(node)
        else:
            stack.extend(getattr(node, name) for name in ast.child_fields(type(node)))
    return False


# What holds no count, quantifier or aggregate: values written, and atoms.
_LEAVES = ast.ATOMS | {ast.Name}
_SCAN_CLASSES = frozenset({ast.Quantifier, ast.Count, ast.Aggregate})


def _expression_scans(
    expr: ast.Expr, scope: dict[str, bool], symbols: SymbolTable
) -> Iterator[tuple[_Scan, list[tuple[str, str]]]]:
    """The quadratic scans in `expr`, whose variables are `scope` (each: does it vary?).

    Every expression node of every declaration is visited (a quarter of checking a large
    file), so the walk keeps one stack of nodes for each set of variables in scope: the
    parts inside a scan, which see its variable too, are walked after the rest."""
    subtrees: list[tuple[object, dict[str, bool]]] = [(expr, scope)]
    while subtrees:
        root, bound = subtrees.pop()
        nodes = [root]
        while nodes:
            node = nodes.pop()
            cls = node.__class__
            if cls in _SCAN_CLASSES:
                assert isinstance(node, _Scan)
                nodes.append(node.source)
                inner = {**bound, node.var: _reads_input(node.source, bound, symbols)}
                subtrees += [(part, inner) for part in _parts_in_scope(node)]
                found = _scan_keys(node, bound, symbols)
                if found:
                    yield node, found
            elif cls is tuple:
                nodes += [item for item in node if item.__class__ not in _LEAVES]  # type: ignore[attr-defined]
            else:
                for name in ast.EXPRESSION_FIELDS[cls]:
                    child = getattr(node, name)
                    if child.__class__ not in _LEAVES:  # nothing to look for inside
                        nodes.append(child)


def _parts_in_scope(scan: _Scan) -> list[ast.Expr]:
    """The parts of a scan that see its variable: its filter, element or condition."""
    parts = [scan.where, scan.element if isinstance(scan, ast.Aggregate) else None]
    parts.append(scan.body if isinstance(scan, ast.Quantifier) else None)
    return [part for part in parts if part is not None]


def _scan_keys(scan: _Scan, bound: dict[str, bool], symbols: SymbolTable) -> list[tuple[str, str]]:
    """The keys that make `scan` quadratic (none when it is not)."""
    whole_kind = (
        isinstance(scan.source, ast.Name)
        and scan.source.id not in bound
        and scan.source.id in symbols.kinds
    )
    if not whole_kind:
        return []
    conditions = [scan.where]
    if isinstance(scan, ast.Quantifier):
        conditions.append(scan.body)
    varying = frozenset(name for name, varies in bound.items() if varies)
    return [
        key
        for condition in conditions
        if condition is not None
        for key in _keys(condition, scan.var, varying)
    ]


def _conjuncts(expr: ast.Expr) -> Iterator[ast.Expr]:
    if isinstance(expr, ast.BoolOp) and expr.op == "and":
        for operand in expr.operands:
            yield from _conjuncts(operand)
    else:
        yield expr


def _keys(condition: ast.Expr, var: str, outer: frozenset[str]) -> Iterator[tuple[str, str]]:
    """`(attribute, value as written)` for each conjunct `var.attribute == value` whose value
    reads a variable of `outer` (the outer variables that vary with the input), not `var`."""
    for part in _conjuncts(condition):
        if not (isinstance(part, ast.Binary) and part.op == "=="):
            continue
        for mine, other in ((part.left, part.right), (part.right, part.left)):
            if not (
                isinstance(mine, ast.Attribute)
                and isinstance(mine.target, ast.Name)
                and mine.target.id == var
            ):
                continue
            names = set(names_in(other))
            if var not in names and names & outer:
                yield mine.name, format_expr(other)
                break
