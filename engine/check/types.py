"""Name resolution, types and units of expressions, collected declaration by declaration."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.builtins import BY_NAME as BUILTINS
from engine.check.kinds import check_kind, check_within
from engine.check.protocols import check_protocol
from engine.check.replay import REPLAY_ARITY, REPLAY_ENTRIES, check_replay, replayed_tables
from engine.check.symbols import SymbolTable, did_you_mean, location
from engine.errors import Diagnostic
from engine.fastinit import faster_init
from engine.syntax import ast
from engine.syntax.format import format_expr
from engine.units import NUMBER, TIME, UNITS, Dimension


@faster_init  # the checker makes one per expression
@dataclass(frozen=True, slots=True)
class Type:
    """The static type of an expression."""

    tag: str  # number | text | bool | null | any | node | set | list | map
    dimension: Dimension | None = None
    kinds: tuple[str, ...] = ()
    element: Type | None = None
    # a map whose entries are of different types (a record: `limits`), each entry's own
    fields: tuple[tuple[str, Type], ...] = ()

    def render(self) -> str:
        """A short human description, e.g. `tokens`, `text`, `set of claim`."""
        if self.tag == "number":
            return self.dimension.render() if self.dimension else "number"
        if self.tag == "node":
            return " or ".join(self.kinds) if self.kinds else "node"
        if self.element is not None:
            return f"{self.tag} of {self.element.render()}"
        return self.tag


ANY = Type("any")
TEXT = Type("text")
BOOL = Type("bool")
NULL = Type("null")
NUMBER_TYPE = Type("number", NUMBER)
TEXT_LIST = Type("list", element=TEXT)


def quantity(dimension: Dimension) -> Type:
    """A number of the given dimension."""
    return Type("number", dimension)


def nodes(kinds: tuple[str, ...]) -> Type:
    """A set of nodes of the given kinds."""
    return Type("set", element=Type("node", kinds=kinds))


SIMPLE_TYPES: dict[str, Type] = {
    "number": NUMBER_TYPE,
    "text": TEXT,
    "bool": BOOL,
    "list": TEXT_LIST,
    "any": ANY,
    **{name: quantity(unit.dimension) for name, unit in UNITS.items()},
}

COLLECTIONS = ("set", "list", "map")

# Type names of other languages, and what the rule language calls the same thing: spelling
# distance would offer a unit for them (`int` -> `min`).
FOREIGN_TYPES = {
    "int": "number",
    "integer": "number",
    "float": "number",
    "double": "number",
    "decimal": "number",
    "str": "text",
    "string": "text",
    "boolean": "bool",
    "array": "list",
}


@dataclass(slots=True)
class DeclInfo:
    """What the checker learnt about one declaration."""

    references: set[str] = field(default_factory=set)
    kinds: set[str] = field(default_factory=set)
    type: Type = ANY
    attached: dict[str, str] = field(default_factory=dict)  # file -> sha256, hashed with it


def _compatible(a: Type, b: Type) -> bool:
    if "any" in (a.tag, b.tag) or "null" in (a.tag, b.tag):
        return True
    if a.tag != b.tag:
        return False
    if a.tag == "number":
        return a.dimension == b.dimension
    if a.element is not None and b.element is not None:
        return _compatible(a.element, b.element)
    return True


class TypeChecker:
    """Resolves names and infers types; every problem becomes a located Diagnostic."""

    def __init__(
        self, symbols: SymbolTable, recorded: Mapping[str, Mapping[str, str]] | None = None
    ) -> None:
        self.symbols = symbols
        self.recorded = recorded or {}
        self.diagnostics: list[Diagnostic] = []
        self.info: DeclInfo = DeclInfo()
        self.decl_name = ""
        self.infos: dict[str, DeclInfo] = {}
        self._in_progress: set[str] = set()
        # the last navigation that reached each set of several kinds, as written: named
        # when an attribute exists on only some of them
        self._ambiguous: dict[tuple[str, ...], str] = {}
        self._passable_rules: frozenset[str] | None = None
        self._edges_by_label: dict[str, list[tuple[str, frozenset[str]]]] | None = None
        self._attrs_of: dict[str, dict[str, ast.AttrDecl]] = {}  # per kind, by name

    def _edges_labelled(self, label: str) -> list[tuple[str, frozenset[str]]]:
        """Each edge `label` as (the kind it leaves, the kinds it enters). Indexed once:
        scanning every kind at each `<-` made checking quadratic in the kinds."""
        if self._edges_by_label is None:
            self._edges_by_label = {}
            for name, decl in self.symbols.kinds.items():
                for edge in decl.edges:
                    targets = frozenset(t.text for t in edge.targets)
                    self._edges_by_label.setdefault(edge.label.text, []).append((name, targets))
        return self._edges_by_label.get(label, [])

    def _passable(self) -> frozenset[str]:
        """The rules `passed(RULE)` can name; built once, not at every call (that was
        quadratic in the number of declarations)."""
        if self._passable_rules is None:
            self._passable_rules = frozenset(
                name
                for name, decl in self.symbols.declarations.items()
                if isinstance(decl, ast.LinkDecl | ast.GateDecl | ast.BudgetDecl)
            )
        return self._passable_rules

    # -- reporting -------------------------------------------------------------------------

    def error(self, code: str, message: str, span: ast.Span, hint: str | None = None) -> None:
        """Record an error located at `span`, attributed to the current declaration."""
        self.diagnostics.append(
            Diagnostic(code, message, location(span), hint=hint, rule=self.decl_name or None)
        )

    # -- declarations ----------------------------------------------------------------------

    def check(self, decl: ast.Declaration) -> DeclInfo:
        """Check one declaration; returns its references, kinds read and value type."""
        match decl:
            case ast.ConstDecl():
                self.const_type(decl)
                return self.infos[decl.name.text]
            case ast.MetricDecl():
                self.metric_type(decl)
                return self.infos[decl.name.text]
        self.info = DeclInfo()
        self.decl_name = decl.name.text
        self.infos[self.decl_name] = self.info
        match decl:
            case ast.KindDecl():
                self._check_kind(decl)
            case ast.CodeDecl():
                pass
            case ast.LinkDecl():
                scope = self._bindings(decl.bindings, {})
                self._expect_bool(decl.require, scope)
                if decl.code.text not in self.symbols.codes:
                    self.error(
                        "UNKNOWN_CODE",
                        f"reject code `{decl.code.text}` is not declared",
                        decl.code.span,
                        did_you_mean(decl.code.text, self.symbols.codes),
                    )
                else:
                    self.info.references.add(decl.code.text)
            case ast.GateDecl():
                scope = self._bindings(decl.bindings, {})
                self._expect_bool(decl.require, scope)
            case ast.TableDecl():
                scope = self._bindings(decl.bindings, {})
                seen: set[str] = set()
                for column in decl.columns:
                    if column.name.text in seen:
                        self.error(
                            "DUPLICATE_NAME",
                            f"column `{column.name.text}` appears twice in table "
                            f"`{decl.name.text}`",
                            column.name.span,
                        )
                    seen.add(column.name.text)
                    self.expr(column.expr, scope)
            case ast.BudgetDecl():
                self._check_budget(decl)
            case ast.ProtocolDecl():
                facts = check_protocol(decl, self.symbols, self.recorded.get(decl.name.text, {}))
                self.diagnostics += facts.diagnostics
                self.info.references |= facts.references
                self.info.attached = facts.attached
            case ast.TransitionsDecl():
                self.diagnostics += check_replay(decl, self.symbols)
                if decl.replay is not None and decl.replay.kind.text in self.symbols.kinds:
                    self.info.references.add(decl.replay.kind.text)
            case ast.DecisionDecl():
                pass  # checked by its own module
            case _:  # pragma: no cover
                raise TypeError(f"unsupported declaration {type(decl).__name__}")
        return self.info

    def const_type(self, decl: ast.ConstDecl) -> Type:
        """The type of a constant (memoised; constants may use other constants)."""
        return self._memoised(decl, lambda: self.expr(decl.value, {}, constant=True))

    def metric_type(self, decl: ast.MetricDecl) -> Type:
        """The result type of a metric, inferred from its body (memoised)."""

        def infer() -> Type:
            scope = {param.name.text: self.declared_type(param.type) for param in decl.params}
            return self.expr(decl.body, scope)

        return self._memoised(decl, infer)

    def _memoised(self, decl: ast.ConstDecl | ast.MetricDecl, infer: Callable[[], Type]) -> Type:
        name = decl.name.text
        if name in self.infos:
            return self.infos[name].type
        if name in self._in_progress:
            return ANY  # a cycle, reported by the cycle check
        saved = (self.info, self.decl_name)
        self.info, self.decl_name = DeclInfo(), name
        self._in_progress.add(name)
        self.info.type = infer()
        self._in_progress.discard(name)
        self.infos[name] = self.info
        self.info, self.decl_name = saved
        return self.infos[name].type

    def declared_type(self, type_name: ast.Ident) -> Type:
        """The type named in an `attr` or parameter declaration."""
        text = type_name.text
        if text in SIMPLE_TYPES:
            return SIMPLE_TYPES[text]
        if text in self.symbols.kinds:
            self.info.references.add(text)
            return Type("node", kinds=(text,))
        candidates = list(SIMPLE_TYPES) + list(self.symbols.kinds)
        foreign = FOREIGN_TYPES.get(text.casefold())
        hint = (
            f"did you mean `{foreign}`?" if foreign else did_you_mean(text, candidates)
        ) or "expected a unit, number, text, bool, list or any"
        self.error("UNKNOWN_TYPE", f"unknown type `{text}`", type_name.span, hint)
        return ANY

    def _check_kind(self, decl: ast.KindDecl) -> None:
        self.diagnostics += check_kind(decl)  # records pointers and `as text`
        self.diagnostics += check_within(decl, self.symbols.kinds)
        seen: set[str] = set()
        for attr in decl.attrs:
            self.declared_type(attr.type)
            if attr.name.text in seen or attr.name.text == "id":
                self.error(
                    "DUPLICATE_NAME",
                    f"attribute `{attr.name.text}` is declared twice in kind `{decl.name.text}`",
                    attr.name.span,
                )
            seen.add(attr.name.text)
        labels: set[str] = set()
        for edge in decl.edges:
            if edge.label.text in labels:
                # a second edge of one label would replace the first's targets, unseen
                what = "`within`" if edge.within else f"edge `{edge.label.text}`"
                self.error(
                    "DUPLICATE_NAME",
                    f"{what} is declared twice in kind `{decl.name.text}`",
                    edge.label.span,
                    "one edge per label: list every kind it may reach, "
                    "`edge LABEL -> KIND, KIND`; `within KIND` is the edge `within`",
                )
            labels.add(edge.label.text)
            for target in edge.targets:
                if target.text not in self.symbols.kinds:
                    self.error(
                        "UNKNOWN_KIND",
                        f"edge `{edge.label.text}` leads to unknown kind `{target.text}`",
                        target.span,
                        did_you_mean(target.text, self.symbols.kinds),
                    )
        # A kind only names kinds (attribute types, edge targets); it does not use their
        # definitions, and a kind may name itself or kinds that name it (`attr parent: node`).
        # Rules that read such an attribute or edge reference the kind they reach themselves.
        self.info.references.difference_update(self.symbols.kinds)

    def _check_budget(self, decl: ast.BudgetDecl) -> None:
        scope = self._bindings(decl.bindings, {})
        ledger = decl.ledger
        element = self._element_type(ledger.source, scope)
        inner = {**scope, ledger.var.text: element}
        if ledger.where is not None:
            self._expect_bool(ledger.where, inner)
        self.expr(ledger.order, inner)
        total = self.expr(decl.total, inner)
        ceiling = self.expr(decl.ceiling, scope)
        self._same_dimension(total, ceiling, decl.op, decl.ceiling.span)
        if decl.reserve is not None:
            reserve = self.expr(decl.reserve, inner)
            self._same_dimension(reserve, ceiling, decl.op, decl.reserve.span)

    def _bindings(
        self, bindings: tuple[ast.Binding, ...], scope: dict[str, Type]
    ) -> dict[str, Type]:
        for binding in bindings:
            element = self._element_type(binding.source, scope)
            scope = {**scope, binding.var.text: element}
            if binding.where is not None:
                self._expect_bool(binding.where, scope)
        return scope

    # -- expressions -----------------------------------------------------------------------

    def _expect_bool(self, expr: ast.Expr, scope: dict[str, Type]) -> None:
        found = self.expr(expr, scope)
        if found.tag not in ("bool", "any"):
            self.error(
                "TYPE_MISMATCH",
                f"expected a condition (bool), found {found.render()}",
                expr.span,
            )

    def _element_type(self, source: ast.Expr, scope: dict[str, Type]) -> Type:
        found = self.expr(source, scope)
        if found.tag == "map":
            return TEXT  # a map iterates over its keys
        if found.tag in COLLECTIONS and found.element is not None:
            return found.element
        if found.tag != "any":
            self.error(
                "TYPE_MISMATCH",
                f"expected a set, list or kind to iterate over, found {found.render()}",
                source.span,
            )
        return ANY

    def expr(self, node: ast.Expr, scope: dict[str, Type], constant: bool = False) -> Type:
        """The type of `node`; `constant` forbids anything but constants and metrics."""
        # one look-up by class: a `match` over the 18 expression classes tested them in turn
        typing = _EXPRESSION_TYPES.get(node.__class__)
        if typing is None:  # pragma: no cover
            raise TypeError(f"unsupported expression {type(node).__name__}")
        return typing(self, node, scope, constant)

    def _number(self, node: ast.Number, scope: dict[str, Type], constant: bool) -> Type:
        return quantity(UNITS[node.unit].dimension) if node.unit else NUMBER_TYPE

    def _quantifier(self, node: ast.Quantifier, scope: dict[str, Type], constant: bool) -> Type:
        element = self._element_type(node.source, scope)
        inner = {**scope, node.var: element}
        if node.where is not None:
            self._expect_bool(node.where, inner)
        if node.body is not None:
            self._expect_bool(node.body, inner)
        return BOOL

    def _aggregate(self, node: ast.Aggregate, scope: dict[str, Type], constant: bool) -> Type:
        element = self._element_type(node.source, scope)
        inner = {**scope, node.var: element}
        if node.where is not None:
            self._expect_bool(node.where, inner)
        value = self.expr(node.element, inner)
        if node.op == "values":
            return Type("list", element=value)
        return self._numeric(value, node.element.span, node.op)

    def _count_or_select(
        self, node: ast.Count | ast.Select, scope: dict[str, Type], constant: bool
    ) -> Type:
        element = self._element_type(node.source, scope)
        if node.where is not None:
            self._expect_bool(node.where, {**scope, node.var: element})
        return NUMBER_TYPE if isinstance(node, ast.Count) else Type("list", element=element)

    def _set_literal(self, node: ast.SetLiteral, scope: dict[str, Type], constant: bool) -> Type:
        items = [self.expr(item, scope, constant) for item in node.items]
        return Type("set", element=self._unify(items, node.span))

    def _map_literal(self, node: ast.MapLiteral, scope: dict[str, Type], constant: bool) -> Type:
        keys = [key for key, _ in node.entries]
        for key in sorted({key for key in keys if keys.count(key) > 1}):
            self.error("DUPLICATE_NAME", f"map key `{key}` appears twice", node.span)
        values = [self.expr(value, scope, constant) for _, value in node.entries]
        return self._map_type(keys, values)

    def _unary(self, node: ast.Unary, scope: dict[str, Type], constant: bool) -> Type:
        operand = self.expr(node.operand, scope, constant)
        if node.op == "not":
            self._expect_bool_type(operand, node.operand.span)
            return BOOL
        return self._numeric(operand, node.operand.span, "-")

    def _conditional(self, node: ast.Conditional, scope: dict[str, Type], constant: bool) -> Type:
        self._expect_bool_type(self.expr(node.condition, scope, constant), node.condition.span)
        then = self.expr(node.then, scope, constant)
        otherwise = self.expr(node.otherwise, scope, constant)
        if then.tag == otherwise.tag == "number":
            self._same_dimension(then, otherwise, "if", node.span)
        elif not _compatible(then, otherwise):
            return ANY  # e.g. a count or the text "unscorable": a value for reports
        return then if then.tag not in ("null", "any") else otherwise

    def _bool_op(self, node: ast.BoolOp, scope: dict[str, Type], constant: bool) -> Type:
        for part in node.operands:
            self._expect_bool_type(self.expr(part, scope, constant), part.span)
        return BOOL

    def _expect_bool_type(self, found: Type, span: ast.Span) -> None:
        if found.tag not in ("bool", "any"):
            self.error("TYPE_MISMATCH", f"expected bool, found {found.render()}", span)

    def _numeric(self, found: Type, span: ast.Span, op: str) -> Type:
        if found.tag in ("number", "any"):
            return found
        self.error("TYPE_MISMATCH", f"`{op}` needs a number, found {found.render()}", span)
        return ANY

    def _map_type(self, keys: list[str], values: list[Type]) -> Type:
        """A map of one value type, or a record: each entry keeps its own type."""
        known = [t for t in values if t.tag not in ("any", "null")]
        if all(_compatible(known[0], other) for other in known[1:]):
            return Type("map", element=known[0] if known else ANY)
        return Type("map", element=ANY, fields=tuple(zip(keys, values, strict=True)))

    def _unify(self, types: list[Type], span: ast.Span) -> Type:
        known = [t for t in types if t.tag not in ("any", "null")]
        if not known:
            return ANY
        first = known[0]
        for other in known[1:]:
            if not _compatible(first, other):
                self.error(
                    "TYPE_MISMATCH",
                    f"mixed element types {first.render()} and {other.render()}",
                    span,
                )
                return ANY
        return first

    def _name(self, node: ast.Name, scope: dict[str, Type], constant: bool) -> Type:
        if node.id in scope:
            return scope[node.id]
        decl = self.symbols.declarations.get(node.id)
        if decl is None:
            visible = list(scope) + list(self.symbols.declarations)
            self.error(
                "UNKNOWN_NAME",
                f"unknown name `{node.id}`",
                node.span,
                did_you_mean(node.id, visible),
            )
            return ANY
        if constant and not isinstance(decl, ast.ConstDecl):
            self.error(
                "NOT_CONSTANT",
                f"a constant may only use constants and metrics, not the "
                f"{ast.declaration_kind(decl)} `{node.id}`",
                node.span,
            )
            return ANY
        self.info.references.add(node.id)
        match decl:
            case ast.ConstDecl():
                return self.const_type(decl)
            case ast.KindDecl():
                self.info.kinds.add(node.id)
                return nodes((node.id,))
            case ast.GateDecl():
                return BOOL
        self.error(
            "TYPE_MISMATCH",
            f"the {ast.declaration_kind(decl)} `{node.id}` cannot be used as a value",
            node.span,
            "call a metric with its arguments" if isinstance(decl, ast.MetricDecl) else None,
        )
        return ANY

    def _attribute(self, node: ast.Attribute, scope: dict[str, Type], constant: bool) -> Type:
        target = self.expr(node.target, scope, constant)
        if target.tag == "any":
            return ANY
        if target.tag == "map":
            self._map_key(node)
            entries = dict(target.fields)
            return entries.get(node.name, target.element or ANY)
        if target.tag != "node":
            self.error(
                "TYPE_MISMATCH",
                f"`.{node.name}` needs a node or a map, found {target.render()}",
                node.span,
            )
            return ANY
        if node.name == "id":
            return TEXT
        found: list[Type] = []
        for kind in target.kinds:
            declared = self.symbols.kinds.get(kind)
            if declared is None:  # an edge to an undeclared kind, reported at the edge
                return ANY
            attrs = self._attrs_of.get(kind)
            if attrs is None:
                attrs = self._attrs_of[kind] = {a.name.text: a for a in declared.attrs}
            if node.name not in attrs:
                if len(target.kinds) > 1:
                    self._some_kinds_lack(node, target.kinds, kind)
                else:
                    self.error(
                        "UNKNOWN_ATTRIBUTE",
                        f"kind `{kind}` has no attribute `{node.name}`",
                        node.span,
                        did_you_mean(node.name, [*attrs, "id"]),
                    )
                return ANY
            found.append(self.declared_type(attrs[node.name].type))
        return self._unify(found, node.span) if found else ANY

    def _some_kinds_lack(self, node: ast.Attribute, kinds: tuple[str, ...], lacking: str) -> None:
        """`.NAME` on nodes that may be of several kinds, one of which lacks it: name the
        kinds and the navigation that reached them, and how to keep only the right ones."""
        named = " and ".join(f"`{k}`" for k in kinds)
        navigation = self._ambiguous.get(kinds)
        reached = f"`{navigation}` reaches" if navigation else "these nodes may be of"
        having = [
            k for k in kinds if any(a.name.text == node.name for a in self.symbols.kinds[k].attrs)
        ]
        source = navigation or "NODES"
        hint = (
            f"keep the nodes of one kind: `of_kind({source}, {having[0]})`"
            if having
            else f"no kind of {named} has an attribute `{node.name}`"
        )
        self.error(
            "UNKNOWN_ATTRIBUTE",
            f"{reached} kinds {named}, and kind `{lacking}` has no attribute `{node.name}`",
            node.span,
            hint,
        )

    def _map_key(self, node: ast.Attribute) -> None:
        target = node.target
        if isinstance(target, ast.Call) and REPLAY_ENTRIES.get(target.func):
            entries = REPLAY_ENTRIES[target.func]
            if target.func not in self.symbols.metrics and node.name not in entries:
                self.error(
                    "UNKNOWN_ATTRIBUTE",
                    f"`{target.func}` has no entry `{node.name}`",
                    node.span,
                    did_you_mean(node.name, entries) or "entries: " + ", ".join(entries),
                )
            return
        if not isinstance(node.target, ast.Name):
            return
        decl = self.symbols.declarations.get(node.target.id)
        if isinstance(decl, ast.ConstDecl) and isinstance(decl.value, ast.MapLiteral):
            keys = [key for key, _ in decl.value.entries]
            if node.name not in keys:
                self.error(
                    "UNKNOWN_ATTRIBUTE",
                    f"map `{node.target.id}` has no entry `{node.name}`",
                    node.span,
                    did_you_mean(node.name, keys),
                )

    def _navigate(self, node: ast.Navigate, scope: dict[str, Type], constant: bool) -> Type:
        target = self.expr(node.target, scope, constant)
        if target.tag == "any":
            return nodes(())
        if target.tag in ("set", "list") and target.element and target.element.tag == "node":
            target = target.element  # navigation from every node of a collection
        if target.tag != "node":
            self.error(
                "TYPE_MISMATCH",
                f"navigation needs a node, found {target.render()}",
                node.span,
            )
            return ANY
        kinds = self.symbols.kinds
        reached: set[str] = set()
        if node.outgoing:
            if any(kind not in kinds for kind in target.kinds):
                return ANY  # an edge to an undeclared kind, reported at the edge
            for kind in target.kinds:
                for edge in kinds[kind].edges:
                    if edge.label.text == node.label:
                        reached.update(t.text for t in edge.targets)
        else:
            sources = set(target.kinds)
            for name, targets in self._edges_labelled(node.label):
                if targets & sources:
                    reached.add(name)
        if not reached:
            direction = "leaves" if node.outgoing else "enters"
            labels = {e.label.text for k in kinds.values() for e in k.edges}
            self.error(
                "UNKNOWN_EDGE",
                f"no edge `{node.label}` {direction} kind {target.render()}",
                node.span,
                did_you_mean(node.label, labels),
            )
            return nodes(())
        self.info.kinds.update(reached)
        self.info.references.update(reached)  # a rule uses the kinds it navigates to
        if len(reached) > 1:
            self._ambiguous[tuple(sorted(reached))] = format_expr(node)
        return nodes(tuple(sorted(reached)))

    def _call(self, node: ast.Call, scope: dict[str, Type], constant: bool) -> Type:
        if node.func == "passed" and node.func not in self.symbols.metrics:
            return self._passed(node)
        if node.func == "having" and node.func not in self.symbols.metrics:
            return self._having(node, scope, constant)
        if node.func == "next_by" and node.func not in self.symbols.metrics:
            return self._next_by(node, scope, constant)
        if node.func in REPLAY_ARITY and node.func not in self.symbols.metrics:
            return self._replay(node, scope, constant)
        args = [self.expr(arg, scope, constant) for arg in node.args]
        metric = self.symbols.metrics.get(node.func)
        if metric is not None:
            self.info.references.add(node.func)
            if len(args) != len(metric.params):
                self.error(
                    "ARITY_MISMATCH",
                    f"metric `{node.func}` takes {len(metric.params)} "
                    f"argument{'' if len(metric.params) == 1 else 's'}, got {len(args)}",
                    node.span,
                )
                return ANY
            for arg, arg_type, param in zip(node.args, args, metric.params, strict=True):
                expected = self.declared_type(param.type)
                if not _compatible(arg_type, expected):
                    self.error(
                        "UNIT_MISMATCH" if arg_type.tag == "number" else "TYPE_MISMATCH",
                        f"argument `{param.name.text}` of `{node.func}` expects "
                        f"{expected.render()}, found {arg_type.render()}",
                        arg.span,
                    )
            return self.metric_type(metric)
        if node.func not in BUILTINS:
            self.error(
                "UNKNOWN_FUNCTION",
                f"unknown function `{node.func}`",
                node.span,
                did_you_mean(node.func, [*BUILTINS, *self.symbols.metrics]),
            )
            return ANY
        return self._builtin(node, args)

    def _builtin(self, node: ast.Call, args: list[Type]) -> Type:
        if node.func == "union":
            return self._union(node, args)
        if node.func == "passed":
            return self._passed(node)
        arity = BUILTINS[node.func].arity
        if arity is not None and len(args) != arity:
            self.error(
                "ARITY_MISMATCH",
                f"`{node.func}` takes {arity} argument{'s' if arity > 1 else ''}, got {len(args)}",
                node.span,
            )
            return ANY
        match node.func:
            case (
                "len"
                | "line_count"
                | "id_number"
                | "id_count"
                | "record_line"
                | "file_size"
                | "text_bytes"
            ):
                return NUMBER_TYPE
            case "file_sha256" | "record_sha256" | "ruleset_hash" | "schema_sha256":
                return TEXT
            case "member_sha256":
                return TEXT
            case "file_lines" | "file_text":
                return TEXT
            case "lock_ruleset_hash" | "concat" | "head" | "seeded_key" | "json_sha256":
                return TEXT
            case "json_text" | "text_sha256" | "rulecheck_version" | "grammar_sha256" | "text_diff":
                return TEXT
            case "json_at" | "unavailable":
                return ANY
            case "pluck":
                return Type("list", element=ANY)
            case "sorted_unique":
                if args[0].tag in ("set", "list"):
                    return Type("list", element=args[0].element)
                if args[0].tag != "any":
                    self.error("TYPE_MISMATCH", "`sorted_unique` needs a set or list", node.span)
                return Type("list", element=ANY)
            case "check":
                return self._nested_check(node)
            case "seeded_order":
                if args[2].tag not in ("set", "list", "any"):
                    self.error("TYPE_MISMATCH", "`seeded_order` orders a set or list", node.span)
                return TEXT_LIST
            case "utc":
                return quantity(TIME)
            case "one":
                if args[0].tag in ("set", "list") and args[0].element is not None:
                    return args[0].element
                if args[0].tag != "any":
                    self.error("TYPE_MISMATCH", "`one` needs a set or list", node.args[0].span)
                return ANY
            case "entry":
                if args[0].tag not in ("map", "any"):
                    self.error("TYPE_MISMATCH", "`entry` needs a map first", node.args[0].span)
                    return ANY
                return args[0].element or ANY
            case "ratio":
                top = self._numeric(args[0], node.args[0].span, "ratio")
                bottom = self._numeric(args[1], node.args[1].span, "ratio")
                if top.dimension is None or bottom.dimension is None:
                    return ANY
                return quantity(top.dimension / bottom.dimension)
            case "abs":
                return self._numeric(args[0], node.args[0].span, "abs")
            case "unique" | "starts_with" | "contains":
                return BOOL
            case "of_kind":
                kind = node.args[1]
                if not (isinstance(kind, ast.Name) and kind.id in self.symbols.kinds):
                    self.error("TYPE_MISMATCH", "`of_kind` needs a kind name second", kind.span)
                    return ANY
                if args[0].tag not in ("set", "list", "any"):
                    self.error("TYPE_MISMATCH", "`of_kind` needs a set of nodes", node.span)
                return nodes((kind.id,))
            case "ids":
                if args[0].tag == "set" and args[0].element and args[0].element.tag == "node":
                    return Type("set", element=TEXT)
                self.error(
                    "TYPE_MISMATCH", "`ids` needs a kind or a set of nodes", node.args[0].span
                )
                return ANY
            case _:  # prefix, kind
                return TEXT

    def _nested_check(self, node: ast.Call) -> Type:
        """`check(PROTOCOL, files, given)`: PROTOCOL is a text naming a declared protocol."""
        target = node.args[0]
        protocols = self.symbols.of_type(ast.ProtocolDecl)
        if not (isinstance(target, ast.String) and target.value in protocols):
            shown = target.value if isinstance(target, ast.String) else None
            self.error(
                "TYPE_MISMATCH",
                "`check` takes the name of a declared protocol first, as text",
                target.span,
                did_you_mean(shown, protocols) if shown is not None else None,
            )
            return ANY
        return Type("map", element=ANY)

    def _passed(self, node: ast.Call) -> Type:
        """`passed(RULE)`: the outcome of a link rule, gate or budget evaluated earlier."""
        target = node.args[0] if len(node.args) == 1 else None
        rules = self._passable()
        if not (isinstance(target, ast.Name) and target.id in rules):
            self.error(
                "TYPE_MISMATCH",
                "`passed` takes the name of one link rule, gate or budget",
                node.span,
                did_you_mean(target.id, rules) if isinstance(target, ast.Name) else None,
            )
            return BOOL
        self.info.references.add(target.id)
        return BOOL

    def _having(self, node: ast.Call, scope: dict[str, Type], constant: bool) -> Type:
        """`having(KIND, {"attr": value, ...})`: a kind name, then a map written out whose
        keys are attributes of the kind and whose values could equal them."""
        if len(node.args) != 2:
            for arg in node.args:
                self.expr(arg, scope, constant)
            self.error(
                "ARITY_MISMATCH", f"`having` takes 2 arguments, got {len(node.args)}", node.span
            )
            return ANY
        kind, keys = node.args
        self.expr(kind, scope, constant)
        if not (
            isinstance(kind, ast.Name) and kind.id not in scope and kind.id in self.symbols.kinds
        ):
            self.error("TYPE_MISMATCH", "`having` needs a kind name first", kind.span)
            return self._having_keys(keys, None, scope, constant)
        return self._having_keys(keys, kind.id, scope, constant)

    def _next_by(self, node: ast.Call, scope: dict[str, Type], constant: bool) -> Type:
        """`next_by(KIND, "attr", n)`: a kind name, one of its number or text attributes
        written as a text, and a node of that kind."""
        args = [self.expr(arg, scope, constant) for arg in node.args]
        if len(args) != 3:
            self.error("ARITY_MISMATCH", f"`next_by` takes 3 arguments, got {len(args)}", node.span)
            return ANY
        kind, name, subject = node.args
        if not (
            isinstance(kind, ast.Name) and kind.id not in scope and kind.id in self.symbols.kinds
        ):
            self.error("TYPE_MISMATCH", "`next_by` needs a kind name first", kind.span)
            return ANY
        found = nodes((kind.id,))
        if not isinstance(name, ast.String):
            self.error(
                "TYPE_MISMATCH",
                "`next_by` needs the attribute to sort by written out second, as a text",
                name.span,
                f'e.g. `next_by({kind.id}, "start", q)`',
            )
            return found
        record = Type("node", kinds=(kind.id,))
        attribute = ast.Attribute(ast.Name("@record"), name.value, name.span)
        sorted_by = self._attribute(attribute, {"@record": record}, constant)
        if sorted_by.tag not in ("number", "text", "any"):
            self.error(
                "TYPE_MISMATCH",
                f"`next_by` sorts by a number or a text, and `{name.value}` is "
                f"{sorted_by.render()}",
                name.span,
            )
        if not _compatible(args[2], record):
            self.error(
                "TYPE_MISMATCH",
                f"`next_by` needs a node of kind `{kind.id}` third, found {args[2].render()}",
                subject.span,
            )
        return found

    def _replay(self, node: ast.Call, scope: dict[str, Type], constant: bool) -> Type:
        """`replay_step(TABLE, e)`, `replay_entity(TABLE, id)`, `replay_entities(TABLE)`,
        `replay_at(TABLE, id, position)`: TABLE names a transition table with a `replay`
        clause; the rule then reads the table and the kind of its events."""
        func, arity = node.func, REPLAY_ARITY[node.func]
        if len(node.args) != arity:
            for arg in node.args:
                self.expr(arg, scope, constant)
            self.error(
                "ARITY_MISMATCH",
                f"`{func}` takes {arity} argument{'s' if arity > 1 else ''}, got {len(node.args)}",
                node.span,
            )
            return ANY
        table, *rest = node.args
        args = [self.expr(arg, scope, constant) for arg in rest]
        tables = replayed_tables(self.symbols)
        if not (isinstance(table, ast.Name) and table.id not in scope and table.id in tables):
            shown = table.id if isinstance(table, ast.Name) else None
            self.error(
                "REPLAY_TABLE",
                f"`{func}` needs the name of a transition table with a `replay` clause first",
                table.span,
                (did_you_mean(shown, tables) if shown is not None else None)
                or ("tables with a replay: " + ", ".join(sorted(tables)) if tables else None),
            )
            return ANY
        if constant:
            self.error("NOT_CONSTANT", f"a constant may not replay `{table.id}`", node.span)
            return ANY
        replay = tables[table.id].replay
        assert replay is not None
        self.info.references.add(table.id)
        if replay.kind.text in self.symbols.kinds:
            self.info.references.add(replay.kind.text)
            self.info.kinds.add(replay.kind.text)
        event = args[0] if args else ANY
        if func == "replay_step" and not (
            event.tag in ("any", "null")
            or (event.tag == "node" and set(event.kinds) <= {replay.kind.text})
        ):
            self.error(
                "TYPE_MISMATCH",
                f"`replay_step` needs a `{replay.kind.text}` event second, "
                f"found {args[0].render()}",
                rest[0].span,
            )
        if func in ("replay_entity", "replay_at") and args[0].tag not in ("text", "any", "null"):
            self.error(
                "TYPE_MISMATCH",
                f"`{func}` needs an entity id (a text) second, found {args[0].render()}",
                rest[0].span,
            )
        if func == "replay_at" and args[1].tag not in ("number", "text", "any"):
            self.error(
                "TYPE_MISMATCH",
                f"`replay_at` needs a position (a number or text) third, found {args[1].render()}",
                rest[1].span,
            )
        if func == "replay_total":
            return self._replay_total(node, replay, args[0], rest[0].span)
        if func == "replay_entities":
            return TEXT_LIST
        if func == "replay_at":
            return TEXT
        return Type("map", element=ANY)

    def _replay_total(
        self, node: ast.Call, replay: ast.ReplayClause, position: Type, span: ast.Span
    ) -> Type:
        """`replay_total(TABLE, position)`: the table's replay keeps a `ledger`; the total
        has the ledger attribute's unit."""
        if position.tag not in ("number", "text", "any"):
            self.error(
                "TYPE_MISMATCH",
                f"`replay_total` needs a position (a number or text) second, found "
                f"{position.render()}",
                span,
            )
        kind = self.symbols.kinds.get(replay.kind.text)
        if replay.ledger is None or kind is None:
            self.error(
                "REPLAY_TABLE",
                "`replay_total` needs a table whose `replay` clause keeps a `ledger`",
                node.args[0].span,
            )
            return ANY
        attrs = {a.name.text: a.type for a in kind.attrs}
        found = attrs.get(replay.ledger.text)
        return self.declared_type(found) if found is not None else ANY

    def _having_keys(
        self, keys: ast.Expr, kind: str | None, scope: dict[str, Type], constant: bool
    ) -> Type:
        found = nodes((kind,)) if kind is not None else ANY
        if not isinstance(keys, ast.MapLiteral):
            self.expr(keys, scope, constant)
            self.error(
                "TYPE_MISMATCH",
                "`having` needs its keys written out second, as a map of attribute names to values",
                keys.span,
                'e.g. `having(result, {"trial": r.trial, "run": r.run})`',
            )
            return found
        names = [name for name, _ in keys.entries]
        for name in sorted({name for name in names if names.count(name) > 1}):
            self.error("DUPLICATE_NAME", f"map key `{name}` appears twice", keys.span)
        record = Type("node", kinds=(kind,)) if kind is not None else ANY
        for name, value in keys.entries:
            value_type = self.expr(value, scope, constant)
            attribute = ast.Attribute(ast.Name("@record"), name, value.span)
            expected = self._attribute(attribute, {"@record": record}, constant)
            if not _compatible(expected, value_type):
                self.error(
                    "UNIT_MISMATCH"
                    if value_type.tag == expected.tag == "number"
                    else "TYPE_MISMATCH",
                    f"`having` compares `{name}` ({expected.render()}) with {value_type.render()}",
                    value.span,
                )
        return found

    def _union(self, node: ast.Call, args: list[Type]) -> Type:
        if not args:
            self.error("ARITY_MISMATCH", "`union` takes at least one argument", node.span)
            return ANY
        elements = []
        for arg, found in zip(node.args, args, strict=True):
            if found.tag not in ("set", "list") or found.element is None:
                self.error(
                    "TYPE_MISMATCH",
                    f"`union` needs sets or lists, found {found.render()}",
                    arg.span,
                )
                return ANY
            elements.append(found.element)
        if all(e.tag == "node" for e in elements):
            kinds = tuple(sorted({k for e in elements for k in e.kinds}))
            return nodes(kinds) if all(e.kinds for e in elements) else nodes(())
        return Type("list", element=self._unify(elements, node.span))

    def _binary(self, node: ast.Binary, scope: dict[str, Type], constant: bool) -> Type:
        left = self.expr(node.left, scope, constant)
        right = self.expr(node.right, scope, constant)
        if node.op in ("in", "not in"):
            if right.tag not in (*COLLECTIONS, "any"):
                self.error(
                    "TYPE_MISMATCH",
                    f"`{node.op}` needs a set, list or map on its right, found {right.render()}",
                    node.right.span,
                )
            elif right.tag == "map" and not _compatible(left, TEXT):
                self.error("TYPE_MISMATCH", f"map keys are text, not {left.render()}", node.span)
            elif (
                right.tag != "map"
                and right.element is not None
                and not _compatible(left, right.element)
            ):
                self.error(
                    "TYPE_MISMATCH",
                    f"cannot look for {left.render()} in {right.render()}",
                    node.span,
                )
            return BOOL
        if node.op in ("==", "!="):
            if not _compatible(left, right):
                self._mismatch(left, right, node.op, node.span)
            return BOOL
        if node.op in ast.COMPARISONS:
            self._numeric(left, node.left.span, node.op)
            self._numeric(right, node.right.span, node.op)
            self._same_dimension(left, right, node.op, node.span)
            return BOOL
        left = self._numeric(left, node.left.span, node.op)
        right = self._numeric(right, node.right.span, node.op)
        if left.dimension is None or right.dimension is None:
            return ANY
        if node.op in ("+", "-"):
            self._same_dimension(left, right, node.op, node.span)
            return left
        if node.op == "*":
            return quantity(left.dimension * right.dimension)
        return quantity(left.dimension / right.dimension)

    def _same_dimension(self, left: Type, right: Type, op: str, span: ast.Span) -> None:
        if left.tag == right.tag == "number" and left.dimension != right.dimension:
            self._mismatch(left, right, op, span)

    def _mismatch(self, left: Type, right: Type, op: str, span: ast.Span) -> None:
        both_numbers = left.tag == right.tag == "number"
        self.error(
            "UNIT_MISMATCH" if both_numbers else "TYPE_MISMATCH",
            f"`{op}` cannot combine {left.render()} with {right.render()}",
            span,
        )


def _constant_type(found: Type) -> Callable[[TypeChecker, Any, dict[str, Type], bool], Type]:
    def typed(checker: TypeChecker, node: Any, scope: dict[str, Type], constant: bool) -> Type:
        return found

    return typed


# The type of each expression class, by class (the AST's classes have no subclasses).
_EXPRESSION_TYPES: dict[type, Callable[[TypeChecker, Any, dict[str, Type], bool], Type]] = {
    ast.Number: TypeChecker._number,
    ast.String: _constant_type(TEXT),
    ast.Bool: _constant_type(BOOL),
    ast.Null: _constant_type(NULL),
    ast.Name: TypeChecker._name,
    ast.Attribute: TypeChecker._attribute,
    ast.Navigate: TypeChecker._navigate,
    ast.Call: TypeChecker._call,
    ast.Quantifier: TypeChecker._quantifier,
    ast.Aggregate: TypeChecker._aggregate,
    ast.Count: TypeChecker._count_or_select,
    ast.Select: TypeChecker._count_or_select,
    ast.SetLiteral: TypeChecker._set_literal,
    ast.MapLiteral: TypeChecker._map_literal,
    ast.Unary: TypeChecker._unary,
    ast.Binary: TypeChecker._binary,
    ast.Conditional: TypeChecker._conditional,
    ast.BoolOp: TypeChecker._bool_op,
}
