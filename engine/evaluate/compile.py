"""Compile checked rules into Python functions, once per run, before any input is read.

Each expression becomes Python source that calls the run-time semantics in
`engine.evaluate.runtime`; a rule's `for` clauses become nested loops, and the `and`,
`or` and quantifiers of its conditions become statements (`_truth_lines`); elsewhere
quantifiers and aggregates become generator expressions. The generated code is compiled with
`compile()` and kept, so evaluating a rule costs what hand-written Python would, plus
the semantic checks. The compiler implements the language only: constants, metrics and
kinds all come from the rules.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar

from engine.builtins import BUILTINS, BY_NAME
from engine.check import CheckedRuleset
from engine.check.replay import REPLAY_ARITY
from engine.codecache import compiled
from engine.evaluate import replay, runtime
from engine.evaluate.runtime import Context, EvaluationError
from engine.freeze.canonical import canonical_form, canonical_json
from engine.graph.build import Graph, NodeKey
from engine.syntax import ast
from engine.textlines import line_count
from engine.units import to_base

Env = dict[str, Any]
Compiled = Callable[[Context, Env], Any]
Failures = list[tuple[Env, str]]
RuleRun = Callable[[Context, Env, Callable[[Env], None] | None, list[Env], Failures], int]
# A rule's bindings run a node at a time: the nodes it binds, or its count when it binds none
PacedRun = Callable[
    [Context, Env, Callable[[Env], None] | None, list[Env], Failures], Iterator[NodeKey] | int
]
# A group of link rules (`Compiler.link_group`): failed bindings and errors tagged with the
# index of their rule in the group.
GroupRun = Callable[
    [Context, Env, list[tuple[int, Env]], list[tuple[int, Env, str]]], tuple[int, ...]
]

__all__ = [
    "Compiled",
    "Compiler",
    "Context",
    "Env",
    "EvaluationError",
    "Failures",
    "GroupRun",
    "PacedRun",
    "RuleRun",
]

ELEMENT_MARK = "@element:"
_PREAMBLE = "G = ctx.graph; A = G.attrs; OUT = G.outgoing; K = G.by_kind"
# Run-time functions of operators, aggregates and the builtins compiled specially; the
# other builtins' functions come from the builtin table.
_RUNTIME_NAMES = (
    "coll attr attr_id eq member lt le gt ge add sub mul div neg not_ median lower_quartile "
    "upper_quartile mean minimum maximum "
    "total node_ids union of_kind having next_by id_count gate bound truth navigate items failure "
    "remember set_of condition data_sha256"
)
_RUNTIME = {
    f"_{name}": getattr(runtime, name)
    for name in {*_RUNTIME_NAMES.split(), *(b.runtime for b in BUILTINS if b.runtime)}
}
_LITERALS = (ast.Number, ast.String, ast.Bool, ast.Null)
_ORDER = {"<": "_lt", "<=": "_le", ">": "_gt", ">=": "_ge"}
_ARITHMETIC = {"+": "_add", "-": "_sub", "*": "_mul", "/": "_div"}
_AGGREGATES = {"median": "_median", "mean": "_mean", "min": "_minimum", "max": "_maximum"}
_AGGREGATES["sum"] = "_total"
_AGGREGATES["lower_quartile"] = "_lower_quartile"
_AGGREGATES["upper_quartile"] = "_upper_quartile"
# Builtins whose value is always JSON data as parsed, or null (see `_gives_data`): a file's
# parsed JSON, and texts.
_GIVES_DATA = frozenset(
    {"json_at", "concat", "head", "seeded_key", "json_sha256", "text_sha256", "json_text"}
)
# A builtin with a run-time function compiles to a plain call of it.
_SIMPLE_BUILTINS = {b.name: f"_{b.runtime}" for b in BUILTINS if b.runtime is not None}
# The common case of a builtin's one argument, computed inline as its runtime function
# computes it, by that function's name: the argument's classes, and the value's code with
# the argument as `{0}`. Any other argument calls the function (which gives the error).
_COMMON_CASES = {
    "_length": (("list", "str"), "len({0})"),
    "_prefix": (("str",), "{0}.rstrip(_ID_DIGITS)"),
    "_lines": (("str",), "_line_count({0})"),
}


# Generated code that reads a value without side effects or cost: a local, or an attribute
# of a node's attributes (safe to evaluate twice).
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.get\('[A-Za-z_][A-Za-z0-9_]*'\))?")


def _is_id_set(node: ast.Expr, symbols: Any) -> bool:
    """Whether an expression is `ids(KIND)` of the builtin (a frozenset of texts)."""
    return (
        isinstance(node, ast.Call)
        and node.func == "ids"
        and node.func not in symbols.metrics
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in symbols.kinds
    )


def _env_code(entries: list[str]) -> str:
    """Code for a binding's environment: the free variables plus the clauses bound so far."""
    return "{**env" + "".join(f", {entry}" for entry in entries) + "}"


def _list_owner(source: ast.Expr, scope: dict[str, str]) -> str | None:
    """The bound variable whose list attribute a `for` clause iterates (`for e in c.ids`)."""
    if (
        isinstance(source, ast.Attribute)
        and isinstance(source.target, ast.Name)
        and source.target.id in scope
    ):
        return source.target.id
    return None


def _yields_bool(node: ast.Expr) -> bool:
    """Whether the code of `node` always gives a Python bool (or raises): comparisons,
    membership, `not`, `and`/`or` and quantifiers compile so. A conditional on one needs no
    `_truth` check; a chain of `if m == "..."` would otherwise pay one call per branch."""
    match node:
        case ast.Bool() | ast.BoolOp() | ast.Quantifier():
            return True
        case ast.Binary():
            return node.op in ast.COMPARISONS or node.op in ("in", "not in")
        case ast.Unary():
            return node.op == "not"
    return False


# How deeply `and`, `or` and quantifiers nest as statements; deeper ones stay expressions
# (each level indents, and each quantifier is a loop: Python allows 20 nested blocks).
_LOWERED_DEPTH = 6
_Made = TypeVar("_Made")


def _is_condition(node: ast.Expr) -> bool:
    """Whether `node` is an `and`, an `or` or a quantifier (compiled as statements)."""
    return isinstance(node, ast.BoolOp | ast.Quantifier)


def _is_var(node: ast.Expr, var: str) -> bool:
    """Whether `node` is the variable `var` itself."""
    return isinstance(node, ast.Name) and node.id == var


def _singleton(node: ast.Expr) -> str | None:
    """The code of a null or boolean literal, None for any other expression."""
    match node:
        case ast.Null():
            return "None"
        case ast.Bool():
            return "True" if node.value else "False"
    return None


# What a metric's body may hold and still cost less to compute than to memoise: reads of
# its parameters' attributes, literals, names, comparisons and logic; no call, loop,
# navigation or arithmetic (exact fractions add in microseconds).
_CHEAP_EXPRESSIONS = (
    *ast.LITERALS,
    ast.Name,
    ast.Attribute,
    ast.Unary,
    ast.BoolOp,
    ast.Conditional,
)
_CHEAP_OPERATORS = ast.COMPARISONS | {"in", "not in"}


def _cheaper_than_its_memo(body: ast.Expr, metrics: Collection[str]) -> bool:
    """Whether a metric body is only attribute reads, literals, comparisons, logic and
    keyed look-ups (`having`, not a metric of that name): such a body costs less than its
    memo key and look-up, and a memo entry per call of it (once per pair of records, say)
    would be held for the whole evaluation, for at best the price of an index look-up."""
    pending: list[Any] = [body]
    while pending:
        node = pending.pop()
        if isinstance(node, tuple):
            pending.extend(node)
        elif isinstance(node, ast.Binary) and node.op in _CHEAP_OPERATORS:
            pending += [node.left, node.right]
        elif isinstance(node, ast.Call) and node.func == "having" and node.func not in metrics:
            keys = node.args[1]
            assert isinstance(keys, ast.MapLiteral)  # the checker allows no other form
            pending += [value for _, value in keys.entries]
        elif not isinstance(node, _CHEAP_EXPRESSIONS):
            return False
        else:
            pending.extend(getattr(node, name) for name in ast.expression_fields(type(node)))
    return True


# From this many arms a chain of `x == "text"` tests is lowered to a look-up (`_switch`).
_SWITCH_ARMS = 8


def _switch_arms(
    node: ast.Conditional,
) -> tuple[ast.Name | None, dict[str, ast.Expr], ast.Expr]:
    """The name a chain `if x == "a" then A else if x == "b" then B ... else Z` tests,
    its arms from the top (each text to its branch, in order), and what follows the last
    (Z, or the rest of a longer chain). The chain stops at a test of another form or
    name, or at a text already tested (that arm could never be taken)."""
    subject: ast.Name | None = None
    arms: dict[str, ast.Expr] = {}
    current: ast.Expr = node
    while isinstance(current, ast.Conditional):
        test = current.condition
        if not isinstance(test, ast.Binary) or test.op != "==":
            break
        name, text = test.left, test.right
        if isinstance(name, ast.String):
            name, text = text, name
        if not isinstance(name, ast.Name) or not isinstance(text, ast.String):
            break
        if subject is not None and (name.id != subject.id or text.value in arms):
            break
        subject = name
        arms[text.value] = current.then
        current = current.otherwise
    return subject, arms, current


def _balanced(branches: list[str], low: int, high: int, place: str, first: str) -> str:
    """The branch at `place` among `branches[low:high]`, by halving the range: `first`
    (which sets `place`) is the test at the root, `place` the tests below it."""
    if high - low == 1:
        return branches[low]
    middle = (low + high) // 2
    test = f"{first} < {middle}"
    below = _balanced(branches, low, middle, place, place)
    above = _balanced(branches, middle, high, place, place)
    return f"(({below}) if {test} else ({above}))"


def memoised(decl: ast.MetricDecl, metrics: Collection[str]) -> bool:
    """Whether a metric keeps a table of its values (one value, without parameters): not
    when its body costs less than the table's key and look-up (`_cheaper_than_its_memo`)."""
    return not decl.params or not _cheaper_than_its_memo(decl.body, metrics)


def _exact(value: Fraction) -> int | Fraction:
    return value.numerator if value.denominator == 1 else value


@dataclass(frozen=True, slots=True)
class _Slots:
    """How a rule's function records what it finds: its count of bindings, and the tag
    its failed bindings and errors carry (its index in a group: rules sharing a loop share
    the lists) with the suffix of the locals of its clauses after the first (rules sharing
    a loop must not share those)."""

    n: str = "n"
    tag: str = ""  # "" alone; "K, " for the rule at index K of a group
    suffix: str = ""

    def failed(self, env: str) -> str:
        """The statement that records the failed binding `env`."""
        return f"failed.append(({self.tag}{env}))"

    def error(self, env: str) -> str:
        """The statement that records that binding `env` could not be evaluated."""
        return f"errors.append(({self.tag}{env}, _failure(error)))"


@dataclass(frozen=True, slots=True)
class _Rule:
    """One rule to lower: its clauses, its requirement (None: each binding goes to `sink`)
    and where it writes."""

    bindings: tuple[ast.Binding, ...]
    require: ast.Expr | None
    slots: _Slots = _Slots()


def clause_key(binding: ast.Binding) -> bytes:
    """What makes two `for` clauses one loop: the same variable over the same source, as
    written but for layout (their filters aside)."""
    return canonical_json([binding.var.text, canonical_form(binding.source)])


def _sharing_next_clause(rules: list[_Rule], depth: int) -> list[list[_Rule]]:
    """`rules`, which share their clauses up to `depth`, in groups that also share that
    clause's filter and their next clause (`clause_key`), each group where its first rule
    is; a rule with no next clause is a group of its own."""
    groups: dict[object, list[_Rule]] = {}
    for position, rule in enumerate(rules):
        key: object = position
        if len(rule.bindings) > depth + 1:
            here, after = rule.bindings[depth], rule.bindings[depth + 1]
            key = (canonical_json(canonical_form(here.where)), clause_key(after))
        groups.setdefault(key, []).append(rule)
    return list(groups.values())


def having_key(call: ast.Call) -> tuple[str, tuple[str, ...]]:
    """The key of the index a checked `having(KIND, {"a": x, ...})` looks up in the
    context: the kind and the attribute names, as written (`runtime.having`)."""
    kind, keys = call.args[0], call.args[1]
    assert isinstance(kind, ast.Name) and isinstance(keys, ast.MapLiteral)
    return kind.id, tuple(name for name, _ in keys.entries)


def next_by_key(call: ast.Call) -> tuple[str, str]:
    """The key of the order a checked `next_by(KIND, "attr", node)` reads in the context:
    the kind and the attribute (`runtime.next_by`)."""
    kind, name = call.args[0], call.args[1]
    assert isinstance(kind, ast.Name) and isinstance(name, ast.String)
    return kind.id, name.value


class Compiler:
    """Generates and compiles Python for expressions, metrics and link rules."""

    def __init__(self, checked: CheckedRuleset, inline: bool = True) -> None:
        """`inline=False` compiles every condition as one expression, every `in` through
        `member`, every comparison through its runtime function and `ids` of a union of
        kinds by reading each node: the plain code the statements of `_truth_lines`, the
        inlined look-ups of `_membership`, the inlined comparisons and the kinds' id
        indexes are tested against."""
        self.checked = checked
        self.symbols = checked.symbols
        self.constants: dict[str, Any] = {}
        self._namespace: dict[str, Any] = {
            **_RUNTIME,
            "_FAILURES": runtime.FAILURES,
            "_ELEMENT": ELEMENT_MARK,
            "_NO_NODES": runtime.NO_NODES,
            "_ID_DIGITS": runtime.ID_DIGITS,
            "_line_count": line_count,
            "_missing": object(),  # not memoised yet: no value of the language is this object
        }
        self._counter = itertools.count()
        self._metrics: set[str] = set()
        self._node_locals: set[str] = set()  # generated variables that always hold a node
        # A rule binding's node variable -> the variable holding its attributes (looked up
        # once per binding, not once per attribute read).
        self._node_attrs: dict[str, str] = {}
        self._free: frozenset[str] = frozenset()  # names read from `env`, bound by a rule
        self._paced = False  # whether the rule being generated yields its kinds' nodes
        # Per function being generated (a stack: a metric is generated on its first use,
        # inside another function), its look-ups in the graph computed once at its start.
        self._hoisted: list[dict[str, tuple[str, bool]]] = []  # code -> (local, lazy)
        self._comprehensions = 0  # how deeply the code being generated is in comprehensions
        # Whether conditions become statements (`_truth_lines`); off for a function Python
        # refused as too deeply nested, compiled again.
        self._lowering = self._lowers = inline
        self._empty = Context(Graph({}, {}, {}, {}))

    # -- public ------------------------------------------------------------------------------

    def constant(self, name: str) -> Any:
        """The value of a constant (evaluated once)."""
        if name not in self.constants:
            decl = self.symbols.consts[name]
            self.constants[name] = self.expr(decl.value)(self._empty, {})
            self._namespace[f"C_{name}"] = self.constants[name]
        return self.constants[name]

    def evaluate(self, node: ast.Expr) -> Any:
        """The value of an expression that reads no graph (constants, metric calls)."""
        return self.expr(node)(self._empty, {})

    def expr(self, node: ast.Expr, bound: Collection[str] = ()) -> Compiled:
        """Compile one expression into `f(ctx, env)`; free variables are read from `env`.

        `bound` names the variables a rule's `for` clauses bind: a bound variable shadows a
        constant, kind or gate of the same name, as it does for the type checker."""
        self._free = frozenset(bound)
        try:
            return self._nested_or_not(lambda: self._expr_function(node))
        finally:
            self._free = frozenset()

    def _expr_function(self, node: ast.Expr) -> Compiled:
        with self._function_scope():
            if _is_condition(node):
                body = "\n".join([*self._truth_lines(node, {}, "t", "    "), "    return t"])
            else:
                body = f"    return {self._e(node, {})}"
            preamble = self._preamble(body)
        name = f"expr_{next(self._counter)}"
        function: Compiled = self._define(name, f"def {name}(ctx, env):\n    {preamble}\n{body}\n")
        return function

    def _nested_or_not(self, generate: Callable[[], _Made]) -> _Made:
        """`generate()`, or, when Python refuses the function as nested too deeply (a
        hostile rule's conditions lowered to statements), the same with every condition
        left an expression."""
        try:
            return generate()
        except SyntaxError:
            if not self._lowering:
                raise
            self._lowering = False
            try:
                return generate()
            finally:
                self._lowering = self._lowers

    def rule_function(
        self,
        name: str,
        bindings: tuple[ast.Binding, ...],
        bound: Collection[str] = (),
    ) -> RuleRun:
        """The one lowering of a rule's `for` clauses: nested loops, generated once.

        The function `f(ctx, env, sink, failed, errors)` binds every clause in order, starting
        from the free variables in `env`, calls `sink(binding_env)` at each binding and
        returns how many bindings it reached. A source or filter that cannot be evaluated
        appends `(partial_env, message)` to `errors` and evaluation goes on with the next
        binding: one bad record never hides the others. `bound` names the free variables
        `env` brings (an outer rule's bindings), as for `expr`.
        """
        function: RuleRun = self._rule_run(name, bindings, bound, paced=False)
        return function

    def paced_function(self, name: str, bindings: tuple[ast.Binding, ...]) -> PacedRun:
        """`rule_function` as a generator that yields each node of a kind a clause loops
        over (`for s in session`) as it binds it, before its filter, so that a caller may
        run several rules node by node (see `gates.run_tables`). A rule with no such
        clause is a plain function: it binds everything when called."""
        function: PacedRun = self._rule_run(name, bindings, (), paced=True)
        return function

    def _rule_run(
        self, name: str, bindings: tuple[ast.Binding, ...], bound: Collection[str], paced: bool
    ) -> Any:
        self._free = frozenset(bound)
        self._paced = paced
        lines = [f"def {name}(ctx, env, sink, failed, errors):", "    PREAMBLE", "    n = 0"]
        try:
            return self._generated_rule(
                name, lines, [_Rule(bindings, None)], "    return n", "return 0"
            )
        finally:
            self._free = frozenset()
            self._paced = False

    def link_group(self, decls: tuple[ast.LinkDecl, ...]) -> GroupRun:
        """Link rules, their requirements checked inline (the hot path). Rules whose first
        `for` clause binds the same variable to the same source (`for c in citation`) run
        in one loop over that source: a record is read once for all of them, and what they
        look up in the graph is looked up once. A rule alone is a group of one.

        `f(ctx, env, failed, errors)` appends `(K, binding_env)` to `failed` for each
        failing binding and `(K, binding_env, message)` to `errors` for each binding that
        cannot be evaluated, K the rule's index in `decls`, and returns each rule's count
        of bindings: each rule finds what it finds alone, in the same order.
        """
        count = len(decls)
        slots = [_Slots(f"n_{k}", f"{k}, ", f"_{k}") for k in range(count)]
        # named after its first rule, as profiles and tracebacks show it
        name = f"link_{decls[0].name.text}" + (f"_and_{count - 1}" if count > 1 else "")
        lines = [
            f"def {name}(ctx, env, failed, errors):",
            "    PREAMBLE",
            f"    {' = '.join(s.n for s in slots)} = 0",
        ]
        rules = [
            _Rule(decl.bindings, decl.require, slot)
            for decl, slot in zip(decls, slots, strict=True)
        ]
        done = f"    return ({''.join(s.n + ', ' for s in slots)})"
        function: GroupRun = self._generated_rule(
            name, lines, rules, done, f"return ({'0, ' * count})"
        )
        return function

    def _generated_rule(
        self, name: str, head: list[str], rules: list[_Rule], done: str, unbound: str
    ) -> Any:
        """The function of `rules` (one, or several sharing their first clause), defined.
        `unbound` is what it returns when its first clause binds nothing."""

        def generate() -> Any:
            with self._function_scope():
                lines = [*head, *self._rule_lines(rules), done]
                first = self._first_kind_local(rules)
                empty = None if first is None else (first, unbound)
                lines[1] = f"    {self._preamble(chr(10).join(lines), empty)}"
                return self._define(name, "\n".join(lines) + "\n")

        try:
            return self._nested_or_not(generate)
        finally:
            # binding variables are named by depth and so repeat from rule to rule: what
            # one rule's `v1_c` holds says nothing about another's
            self._node_locals.difference_update(self._node_attrs)
            self._node_attrs.clear()

    def _rule_lines(self, rules: list[_Rule]) -> list[str]:
        """The loops of `rules`: the first clause's, shared, and inside it each rule's
        filter of it, its other clauses and its requirement, one rule after the other;
        rules that go on with the same clause share its loop too (`_shared_lines`).

        No statement `continue`s a shared loop (one rule's filter or error must not skip
        the rules after it): a filter guards what follows it, and a source or requirement
        that cannot be evaluated records its error and binds nothing or fails nothing."""
        if not rules[0].bindings:  # a rule of no clauses (a budget's ledger): one binding
            return self._rule_body(rules[0], 0, {}, [], "    ")
        first = rules[0].bindings[0]
        lines, scope, entries = self._clause_lines(first, 0, rules, {}, [], "    ")
        return lines + self._shared_lines(rules, 0, scope, entries, "        ")

    def _shared_lines(
        self, rules: list[_Rule], depth: int, scope: dict[str, str], entries: list[str], indent: str
    ) -> list[str]:
        """Inside the loop of clause `depth`, which `rules` share: the rules whose filter of
        it and next clause are the same (`for t in c.supports` of a citation's two link
        rules) filter once and share that clause's loop, and so on down; each other rule
        goes on alone. Each rule binds what it binds alone, in the same order."""
        lines: list[str] = []
        for members in _sharing_next_clause(rules, depth):
            if len(members) == 1:
                lines += self._rule_body(members[0], depth, scope, entries, indent)
                continue
            slots = [member.slots for member in members]
            found, inner = self._filter_lines(
                members[0].bindings[depth], scope, entries, indent, *slots
            )
            more, inner_scope, inner_entries = self._clause_lines(
                members[0].bindings[depth + 1], depth + 1, members, scope, entries, inner
            )
            deeper = self._shared_lines(
                members, depth + 1, inner_scope, inner_entries, inner + "    "
            )
            lines += [*found, *more, *deeper]
        return lines

    def _rule_body(
        self, rule: _Rule, start: int, scope: dict[str, str], entries: list[str], indent: str
    ) -> list[str]:
        """One rule's lines inside the loop of its clause `start`: that clause's filter,
        its other clauses, its requirement (or the sink's call)."""
        slots = rule.slots
        lines: list[str] = []
        for depth in range(start, len(rule.bindings)):
            binding = rule.bindings[depth]
            if depth > start:
                more, scope, entries = self._clause_lines(
                    binding, depth, [rule], scope, entries, indent
                )
                lines += more
                indent += "    "
            found, indent = self._filter_lines(binding, scope, entries, indent, slots)
            lines += found
        lines.append(f"{indent}{slots.n} += 1")
        env = _env_code(entries)
        if rule.require is None:
            return [*lines, f"{indent}sink({env})"]
        return [
            *lines,
            f"{indent}try:",
            *self._truth_lines(rule.require, scope, "ok", indent + "    "),
            f"{indent}except _FAILURES as error:",
            f"{indent}    {slots.error(env)}; ok = True",
            f"{indent}if not ok: {slots.failed(env)}",
        ]

    def _clause_lines(
        self,
        binding: ast.Binding,
        depth: int,
        rules: list[_Rule],
        scope: dict[str, str],
        entries: list[str],
        indent: str,
    ) -> tuple[list[str], dict[str, str], list[str]]:
        """A `for` clause's source, evaluated once for `rules`, and the head of its loop;
        with the scope and environment entries inside the loop. A source that cannot be
        evaluated is an error of each rule, and binds nothing."""
        var = binding.var.text
        suffix = rules[0].slots.suffix if depth else ""
        local, source = f"v{depth}_{var}{suffix}", f"it{depth}{suffix}"
        partial = _env_code(entries)
        lines = [
            f"{indent}try:",
            *self._binding_source(binding, source, scope, indent + "    "),
            f"{indent}except _FAILURES as error:",
            *(f"{indent}    {rule.slots.error(partial)}" for rule in rules),
            f"{indent}    {source} = ()",
        ]
        owner = _list_owner(binding.source, scope)
        if owner is not None:
            assert isinstance(binding.source, ast.Attribute)
            position = f"i{depth}{suffix}"
            lines.append(f"{indent}for {position}, {local} in enumerate({source}):")
            element = f"({owner!r}, {binding.source.name!r}, {position})"
            entries = [*entries, f"_ELEMENT + {var!r}: {element}"]
        else:
            lines.append(f"{indent}for {local} in {source}:")
            if self._yields_nodes(binding.source, scope):
                self._node_locals.add(local)
                self._node_attrs[local] = f"r{depth}{suffix}"
                if self._paced and isinstance(binding.source, ast.Name):
                    lines.append(f"{indent}    yield {local}")
                lines.append(f"{indent}    r{depth}{suffix} = A[{local}]")
        return lines, {**scope, var: local}, [*entries, f"{var!r}: {local}"]

    def _filter_lines(
        self,
        binding: ast.Binding,
        scope: dict[str, str],
        entries: list[str],
        indent: str,
        *slots: _Slots,
    ) -> tuple[list[str], str]:
        """A clause's `where`, guarding the lines after it (and their indent); one that
        cannot be evaluated is an error of each rule it filters for, and filters the
        binding out."""
        if binding.where is None:
            return [], indent
        env = _env_code(entries)
        return [
            f"{indent}try:",
            *self._truth_lines(binding.where, scope, "w", indent + "    "),
            f"{indent}except _FAILURES as error:",
            *(f"{indent}    {each.error(env)}" for each in slots[:-1]),
            f"{indent}    {slots[-1].error(env)}; w = False",
            f"{indent}if w:",
        ], indent + "    "

    # -- conditions as statements ------------------------------------------------------------

    def _truth_lines(
        self, node: ast.Expr, scope: dict[str, str], target: str, indent: str, depth: int = 0
    ) -> list[str]:
        """Statements that set `target` to whether `node` holds, as the expression's code would
        compute it: `and` and `or` short-circuit in order, a quantifier loops over its
        source and stops at the first binding that decides it, raising what the expression
        raises. A quantifier as an expression is a generator, whose set-up cost several
        times its loop on the few records a rule's quantifier sees (an answer's links)."""
        if self._lowering and depth < _LOWERED_DEPTH:
            if isinstance(node, ast.BoolOp):
                return self._bool_op_lines(node, scope, target, indent, depth)
            if isinstance(node, ast.Quantifier):
                return self._quantifier_lines(node, scope, target, indent, depth)
        return [f"{indent}{target} = {self._holds(node, scope)}"]

    def _holds(self, node: ast.Expr, scope: dict[str, str]) -> str:
        """Code that is True where condition `node` holds and False where it does not or
        is null (an absent flag); any other value is an error (`runtime.condition`), never
        a silent false that would filter a binding out."""
        code = self._e(node, scope)
        return code if _yields_bool(node) else f"_condition({code})"

    def _bool_op_lines(
        self, node: ast.BoolOp, scope: dict[str, str], target: str, indent: str, depth: int
    ) -> list[str]:
        first, *rest = node.operands
        undecided = f"if {target}:" if node.op == "and" else f"if not {target}:"
        lines = self._truth_lines(first, scope, target, indent, depth + 1)
        for operand in rest:
            lines.append(f"{indent}{undecided}")
            lines += self._truth_lines(operand, scope, target, indent + "    ", depth + 1)
        return lines

    def _quantifier_lines(
        self, node: ast.Quantifier, scope: dict[str, str], target: str, indent: str, depth: int
    ) -> list[str]:
        local, inner = self._loop_variable(node.var, node.source, scope)
        attrs = None
        if local in self._node_locals:
            attrs = self._node_attrs[local] = f"a{local}"
        step = indent + "    "
        body: list[str] = []
        guard: list[str] = []
        source = node.source
        if (
            isinstance(source, ast.Call)
            and source.func == "of_kind"
            and source.func not in self.symbols.metrics
            and isinstance(source.args[0], ast.Navigate)
            and isinstance(source.args[1], ast.Name)
        ):  # `of_kind(x -> label, K)`: the nodes reached, those of kind K kept as they come
            guard = [f"{step}if {local}[0] != {source.args[1].id!r}: continue"]
            source = source.args[0]
        iterable = self._e(source, scope)
        if node.where is not None:
            body.append(f"{step}if not {self._holds(node.where, inner)}: continue")
        if node.body is None:
            body.append(f"{step}{target} = True")
        else:
            body += self._truth_lines(node.body, inner, target, step, depth + 1)
        seeking = node.op != "all"  # `exists` and `none` look for a true body, `all` a false one
        body.append(f"{step}if {'' if seeking else 'not '}{target}: break")
        if attrs is not None and re.search(rf"\b{attrs}\b", "\n".join(body)):
            body.insert(0, f"{step}{attrs} = A[{local}]")
        body[:0] = guard
        lines = [f"{indent}{target} = {not seeking}"]
        if not self._gives_collection(source, scope):  # a list is what `coll` gives back as is
            lines += [
                f"{indent}s{local} = {iterable}",
                f"{indent}if s{local}.__class__ is not list: s{local} = _coll(s{local})",
            ]
            iterable = f"s{local}"
        lines += [f"{indent}for {local} in {iterable}:", *body]
        if node.op == "none":
            lines.append(f"{indent}{target} = not {target}")
        return lines

    def _binding_source(
        self, binding: ast.Binding, local: str, scope: dict[str, str], indent: str
    ) -> list[str]:
        """Statements that set `local` to what a `for` clause iterates: a collection, never
        anything else.

        A list attribute of a bound node that is absent (null) binds nothing; any other
        value that is not a collection is an error of that binding. A list is what
        `items` and `coll` give back unchanged: only another value is handed to them.
        """
        what = repr(f"`for {binding.var.text}`")
        code = self._e(binding.source, scope)
        if _list_owner(binding.source, scope) is not None:
            checked = f"_items({local}, {what})"
        elif self._gives_collection(binding.source, scope):
            return [f"{indent}{local} = {code}"]
        else:
            checked = f"_coll({local}, {what})"
        return [
            f"{indent}{local} = {code}",
            f"{indent}if {local}.__class__ is not list: {local} = {checked}",
        ]

    # -- machinery ---------------------------------------------------------------------------

    def _define(self, name: str, source: str) -> Any:
        code = compiled(source, f"<rulecheck {name}>")
        exec(code, self._namespace)
        return self._namespace[name]

    def _is_node_local(self, code: str) -> bool:
        """Whether generated code is a variable that always holds a node."""
        return code in self._node_locals or code in self._node_attrs

    def _graph_constant(self, code: str) -> str:
        """`code`, a look-up in the graph that reads no variable and cannot fail (a kind's
        nodes, its ids, a label's edges), as a local computed once at the start of the
        function being generated rather than wherever a loop evaluates it."""
        if not self._hoisted:
            return code
        return self._hoist(code, lazy=False)

    def _hoist(self, code: str, lazy: bool) -> str:
        table = self._hoisted[-1]
        local = table.get(code, (None, lazy))[0]
        if local is None:
            local = f"H{len(table)}"
            table[code] = (local, lazy)
        return local

    def _graph_value(self, code: str) -> str:
        """`code`, a pure computation from the graph alone (a metric without parameters),
        computed where it was, at its first use in the function being generated, and read
        from a local at the next ones. Inside a comprehension, where Python cannot
        assign a local, it is computed each time."""
        if not self._hoisted or self._comprehensions:
            return code
        local = self._hoist(code, lazy=True)
        return f"({local} if {local} is not _missing else ({local} := {code}))"

    @contextmanager
    def _function_scope(self) -> Iterator[None]:
        """Generating one function: the look-ups hoisted out of its body (see
        `_graph_constant`) are its own, and forgotten after it; its body is in no
        comprehension, even when it is generated on its first use inside one (a metric
        called in a comprehension), so it may assign temporaries (`_assigns_temporaries`)."""
        depth, comprehensions = len(self._hoisted), self._comprehensions
        self._hoisted.append({})
        self._comprehensions = 0
        try:
            yield
        finally:
            del self._hoisted[depth:]
            self._comprehensions = comprehensions

    def _preamble(self, body: str, empty: tuple[str, str] | None = None) -> str:
        """The first line of a generated function: the graph's tables as locals, then the
        look-ups hoisted out of its `body` that it uses (code generated only to be
        compared, or replaced, is not computed). With `empty` (the local of the kind the
        first clause ranges over, and what to return when it has no node), that kind is
        read first and the other look-ups only when it has nodes: a rule over a kind an
        input lacks (an answer without a reconciliation) makes no edges or indexes."""
        table = self._hoisted[-1]
        used = set(re.findall(r"\bH[0-9]+\b", body))
        hoisted = {
            local: "_missing" if lazy else code
            for code, (local, lazy) in table.items()
            if local in used
        }
        if empty is None or empty[0] not in hoisted:
            return _PREAMBLE + "".join(f"; {local} = {code}" for local, code in hoisted.items())
        first, unbound = empty
        rest = "; ".join(f"{local} = {code}" for local, code in hoisted.items() if local != first)
        guard = f"{_PREAMBLE}; {first} = {hoisted[first]}\n    if not {first}:\n        {unbound}"
        return guard + (f"\n    {rest}" if rest else "")

    def _first_kind_local(self, rules: list[_Rule]) -> str | None:
        """The hoisted local of the whole kind the first clause of `rules` ranges over, if
        it does (see `_preamble`)."""
        bindings = rules[0].bindings
        if not bindings or not self._is_kind(bindings[0].source, {}):
            return None
        source = bindings[0].source
        assert isinstance(source, ast.Name)
        found = self._hoisted[-1].get(f"K.get({source.id!r}, _NO_NODES)")
        return None if found is None or found[1] else found[0]

    def _literal(self, value: Any) -> str:
        name = f"L{next(self._counter)}"
        self._namespace[name] = value
        return name

    def _metric(self, name: str) -> str:
        """The generated function name of a metric (generated on first use)."""
        function = f"M_{name}"
        if name in self._metrics:
            return function
        self._metrics.add(name)
        decl = self.symbols.metrics[name]
        params = [p.name.text for p in decl.params]
        scope = {p: f"p_{p}" for p in params}
        args = "".join(f", p_{p}" for p in params)
        free, self._free = self._free, frozenset()  # a metric reads only its parameters
        try:
            with self._function_scope():
                body = self._e(decl.body, scope)
                preamble = self._preamble(body)
        finally:
            self._free = free
        if not memoised(decl, self.symbols.metrics):
            source = f"def {function}(ctx{args}):\n    {preamble}\n    return {body}\n"
        elif params:  # a metric is a pure function of the input and its arguments: memoise
            # One table per metric, keyed by the argument itself when there is one: a key
            # tuple per call, the metric's name in each, was most of a large memo.
            key = f"({args[2:]},)" if len(params) > 1 else args[2:]
            # A miss is looked up with get(): raising KeyError on every first call of a
            # metric computed once per record costs more than the look-up itself.
            source = (
                f"def {function}(ctx{args}):\n    memo = ctx.memo.get({name!r})\n"
                f"    if memo is None:\n        memo = ctx.memo[{name!r}] = {{}}\n"
                f"    key = {key}\n"
                f"    try:\n        value = memo.get(key, _missing)\n"
                f"    except TypeError:\n        {preamble}\n        return {body}\n"
                f"    if value is not _missing:\n        return value\n"
                f"    {preamble}\n    value = {body}\n"
                f"    if value.__class__ is str:\n"
                f"        return _remember(memo, key, value)\n"
                f"    memo[key] = value\n    return value\n"
            )
        else:  # a metric without parameters is a pure function of the input: compute once
            source = (
                f"def {function}(ctx):\n    memo = ctx.memo\n"
                f"    if {name!r} not in memo:\n        {preamble}\n"
                f"        memo[{name!r}] = {body}\n    return memo[{name!r}]\n"
            )
        self._define(function, source)
        return function

    def _iterable(self, node: ast.Expr, scope: dict[str, str]) -> str:
        """Code for something to iterate over; `_coll` checks it unless it is known safe."""
        code = self._e(node, scope)
        return code if self._gives_collection(node, scope) else f"_coll({code})"

    def _gives_collection(self, node: ast.Expr, scope: dict[str, str]) -> bool:
        """Whether `node`'s code always gives a list to iterate (no `_coll` check needed):
        a navigation, a whole kind, a builtin that gives a list of nodes, or a metric whose
        body is one of these (whatever its arguments, its parameters shadowing kinds; the
        checker refuses cyclic metrics, so the walk ends)."""
        if isinstance(node, ast.Call) and node.func in self.symbols.metrics:
            metric = self.symbols.metrics[node.func]
            params = {param.name.text: param.name.text for param in metric.params}
            return self._gives_collection(metric.body, params)
        return (
            isinstance(node, ast.Navigate)
            or (
                isinstance(node, ast.Name)
                and node.id not in scope
                and node.id in self.symbols.kinds
            )
            or (
                isinstance(node, ast.Call)
                and node.func in ("union", "of_kind", "having", "next_by")
            )
        )

    def _is_kind(self, node: ast.Expr, scope: dict[str, str]) -> bool:
        """Whether `node` names a whole kind (not a variable that shadows it)."""
        return (
            isinstance(node, ast.Name)
            and node.id not in scope
            and node.id not in self._free
            and isinstance(self.symbols.declarations.get(node.id), ast.KindDecl)
        )

    def _yields_nodes(self, node: ast.Expr, scope: dict[str, str]) -> bool:
        """Whether iterating `node` can only give graph nodes (so attribute reads may be direct)."""
        match node:
            case ast.Name():
                free = node.id in scope or node.id in self._free
                return not free and node.id in self.symbols.kinds
            case ast.Navigate():
                return True
            case ast.Call(func="of_kind" | "having" | "next_by"):
                return True
            case ast.Call(func="union"):
                return all(self._yields_nodes(arg, scope) for arg in node.args)
        return False

    def _loop_variable(
        self, var: str, source: ast.Expr, scope: dict[str, str]
    ) -> tuple[str, dict[str, str]]:
        """The generated local of a quantifier's or an aggregate's variable `var` over
        `source` (known to hold a node when `source` gives only nodes), and the scope it
        is visible in."""
        local = f"q{next(self._counter)}_{var}"
        if self._yields_nodes(source, scope):
            self._node_locals.add(local)
        return local, {**scope, var: local}

    def _comprehension(
        self, var: str, source: ast.Expr, where: ast.Expr | None, scope: dict[str, str]
    ) -> tuple[str, dict[str, str]]:
        local, inner = self._loop_variable(var, source, scope)
        clause = f"for {local} in {self._iterable(source, scope)}"
        if where is not None:
            clause += f" if {self._holds(where, inner)}"
        return clause, inner

    def _e(self, node: ast.Expr, scope: dict[str, str]) -> str:
        match node:
            case ast.Number():
                value, _ = to_base(node.value, node.unit)
                return self._literal(_exact(value))
            case ast.String():
                return repr(node.value)
            case ast.Bool():
                return "True" if node.value else "False"
            case ast.Null():
                return "None"
            case ast.Name():
                return self._name(node, scope)
            case ast.Attribute() if node.name == "id":  # a node's id, in its key member
                target = self._e(node.target, scope)
                if self._is_node_local(target):
                    return f"G.id_of({target})"
                if target in scope.values():  # a plain local: `attr_id`'s node case inlined
                    return (
                        f"(G.id_of({target}) if {target}.__class__ is tuple "
                        f"else _attr_id(G, {target}))"
                    )
                return f"_attr_id(G, {target})"
            case ast.Attribute():
                target = self._e(node.target, scope)
                if target in self._node_attrs:
                    return f"{self._node_attrs[target]}.get({node.name!r})"
                if target in self._node_locals:
                    return f"A[{target}].get({node.name!r})"
                if target in scope.values():  # a plain local: `attr`'s node case inlined
                    return (
                        f"(A[{target}].get({node.name!r}) if {target}.__class__ is tuple "
                        f"else _attr(A, {target}, {node.name!r}))"
                    )
                return f"_attr(A, {target}, {node.name!r})"
            case ast.Navigate():
                label = repr(node.label)
                edges = self._graph_constant(
                    f"OUT[{label}]" if node.outgoing else f"G.incoming({label})"
                )
                target = self._e(node.target, scope)
                if self._is_node_local(target):  # `navigate`'s node case, inlined
                    return f"{edges}.get({target}, _NO_NODES)"
                return f"_navigate({edges}, {target})"
            case ast.Call():
                return self._call(node, scope)
            case ast.Quantifier() | ast.Aggregate() | ast.Count() | ast.Select():
                self._comprehensions += 1
                try:
                    return self._comprehension_code(node, scope)
                finally:
                    self._comprehensions -= 1
            case ast.SetLiteral():
                items = "".join(self._e(item, scope) + ", " for item in node.items)
                if all(isinstance(item, _LITERALS) for item in node.items):
                    return f"frozenset(({items}))"
                return f"_set_of({items})"  # an element may be a document's float
            case ast.MapLiteral():
                entries = ", ".join(f"{k!r}: {self._e(v, scope)}" for k, v in node.entries)
                return "{" + entries + "}"
            case ast.Unary():
                function = "_not_" if node.op == "not" else "_neg"
                return f"{function}({self._e(node.operand, scope)})"
            case ast.Binary():
                return self._binary(node, scope)
            case ast.Conditional() if (chosen := self._switch(node, scope)) is not None:
                return chosen
            case ast.Conditional():
                condition = self._e(node.condition, scope)
                if not _yields_bool(node.condition):
                    condition = f"_truth({condition})"
                then, otherwise = self._e(node.then, scope), self._e(node.otherwise, scope)
                return f"(({then}) if {condition} else ({otherwise}))"
            case ast.BoolOp():
                joiner = " and " if node.op == "and" else " or "
                return (
                    "(" + joiner.join(f"({self._holds(op, scope)})" for op in node.operands) + ")"
                )
        raise TypeError(f"unsupported expression {type(node).__name__}")  # pragma: no cover

    def _switch(self, node: ast.Conditional, scope: dict[str, str]) -> str | None:
        """`if x == "a" then A else if x == "b" then B ... else Z`, the same local `x`
        against distinct texts in at least `_SWITCH_ARMS` arms: the text's place in a
        table, then a balanced tree of integer tests (five for thirty-two arms), where the
        chain tests a text per arm before the one that holds. Anything but a text takes
        the last branch, as it fails every `==` of the chain. None when the chain is
        shorter or cannot hold its place in a local (inside a comprehension)."""
        if not self._assigns_temporaries():
            return None
        name, arms, rest = _switch_arms(node)
        if name is None or len(arms) < _SWITCH_ARMS:
            return None
        subject = self._e(name, scope)  # one name in one scope: every arm's code
        if not subject.isidentifier():  # a local or a constant, not a call
            return None
        branches = [self._e(then, scope) for then in arms.values()] + [self._e(rest, scope)]
        table = self._literal({text: place for place, text in enumerate(arms)})
        place, none = f"t{next(self._counter)}", len(arms)
        texts = f"{subject}.__class__ is str or isinstance({subject}, str)"  # `eq`'s texts
        found = f"{table}.get({subject}, {none}) if {texts} else {none}"
        first = f"({place} := ({found}))"
        return _balanced(branches, 0, len(branches), place, first)

    def _comprehension_code(
        self, node: ast.Quantifier | ast.Aggregate | ast.Count | ast.Select, scope: dict[str, str]
    ) -> str:
        match node:
            case ast.Quantifier():
                clause, inner = self._comprehension(node.var, node.source, node.where, scope)
                body = self._holds(node.body, inner) if node.body else "True"
                if node.op == "all":
                    return f"all({body} {clause})"
                found = f"any({body} {clause})"
                return found if node.op == "exists" else f"(not {found})"
            case ast.Aggregate():
                if node.op != "values" and node.where is None and _is_var(node.element, node.var):
                    # `median(v for v in xs)`: the reductions only read, so no copy of xs
                    return f"{_AGGREGATES[node.op]}({self._iterable(node.source, scope)})"
                clause, inner = self._comprehension(node.var, node.source, node.where, scope)
                element = self._e(node.element, inner)
                if node.op == "values":
                    return f"[{element} {clause}]"
                return f"{_AGGREGATES[node.op]}([{element} {clause}])"
            case ast.Count() if node.where is None:  # every element counts: no generator
                return f"len({self._iterable(node.source, scope)})"
            case ast.Count():
                clause, _ = self._comprehension(node.var, node.source, node.where, scope)
                return f"sum(1 {clause})"
        clause, inner = self._comprehension(node.var, node.source, node.where, scope)
        element = self._e(ast.Name(node.var, node.span), inner)
        return f"[{element} {clause}]"

    def _name(self, node: ast.Name, scope: dict[str, str]) -> str:
        if node.id in scope:
            return scope[node.id]
        if node.id in self._free:
            return f"_bound(env, {node.id!r})"
        decl = self.symbols.declarations.get(node.id)
        if isinstance(decl, ast.ConstDecl):
            self.constant(node.id)
            return f"C_{node.id}"
        if isinstance(decl, ast.KindDecl):
            return self._graph_constant(f"K.get({node.id!r}, _NO_NODES)")
        if isinstance(decl, ast.GateDecl):
            return f"_gate(ctx, {node.id!r})"
        return f"_bound(env, {node.id!r})"

    def _call(self, node: ast.Call, scope: dict[str, str]) -> str:
        if node.func == "passed" and node.func not in self.symbols.metrics:
            target = node.args[0]
            assert isinstance(target, ast.Name)
            return f"_gate(ctx, {target.id!r})"
        if node.func == "having" and node.func not in self.symbols.metrics:
            return self._having(node, scope)
        if node.func in REPLAY_ARITY and node.func not in self.symbols.metrics:
            return self._replay(node, scope)
        args = [self._e(arg, scope) for arg in node.args]
        if (
            node.func == "json_sha256"
            and node.func not in self.symbols.metrics
            and self._lowers
            and self._gives_data(node.args[0])
        ):
            return f"_data_sha256({args[0]})"
        if node.func in self.symbols.metrics:
            if not args:
                return self._graph_value(f"{self._metric(node.func)}(ctx)")
            return f"{self._metric(node.func)}(ctx{''.join(', ' + a for a in args)})"
        if node.func in _SIMPLE_BUILTINS:
            function = _SIMPLE_BUILTINS[node.func]
            if BY_NAME[node.func].context:
                return f"{function}({', '.join(['ctx', *args])})"
            if function in _COMMON_CASES and len(args) == 1 and self._assigns_temporaries():
                return self._common_case_inlined(function, args[0])
            return f"{function}({', '.join(args)})"
        first = node.args[0] if node.args else None
        if node.func == "passed":
            assert isinstance(first, ast.Name)
            return f"_gate(ctx, {first.id!r})"
        match node.func:
            case "ids" if self._is_kind_ids(node, scope):
                assert isinstance(first, ast.Name)
                return self._graph_constant(f"G.id_set({first.id!r})")
            case "ids" if self._lowers and (kinds := self._whole_kinds(first, scope)):
                return self._graph_constant(f"G.kinds_ids({kinds!r})")
            case "ids":
                return f"_node_ids(G, {args[0]})"
            case "union" if (kinds := self._whole_kinds(node, scope)) is not None:
                return self._graph_constant(f"G.kinds_union({kinds!r})")
            case "union":
                return f"_union({', '.join(args)})"
            case "of_kind":
                kind = node.args[1]
                assert isinstance(kind, ast.Name)
                return f"_of_kind({args[0]}, {kind.id!r})"
            case "id_count" if self._is_node_local(args[0]) and self._assigns_temporaries():
                # the count read where it was counted; the call only for a kind not yet
                counts, local = self._graph_constant("G.id_counts"), f"t{next(self._counter)}"
                got = f"({local} := {counts}.get({args[0]}))"
                return f"({local} if {got} is not None else G.id_count({args[0]}))"
            case "id_count" if self._is_node_local(args[0]):
                return f"G.id_count({args[0]})"
            case "id_count":
                return f"_id_count(G, {args[0]})"
            case "next_by":
                ordered, attr = next_by_key(node)
                return f"_next_by(ctx, {ordered!r}, {attr!r}, {args[2]})"
        raise TypeError(f"unknown built-in `{node.func}`")  # pragma: no cover

    def _replay(self, node: ast.Call, scope: dict[str, str]) -> str:
        """`replay_*(TABLE, ...)`: a call with the table's machine, built once per compile."""
        table, *rest = node.args
        assert isinstance(table, ast.Name)
        name = f"M_{table.id}"
        if name not in self._namespace:
            decl = self.symbols.declarations[table.id]
            assert isinstance(decl, ast.TransitionsDecl)
            assert decl.replay is not None
            kind = self.symbols.kinds.get(decl.replay.kind.text)
            self._namespace[name] = replay.machine(decl, kind)
        for func in REPLAY_ARITY:
            self._namespace.setdefault(f"_{func}", getattr(replay, func))
        args = "".join(f", {self._e(arg, scope)}" for arg in rest)
        return f"_{node.func}(ctx, {name}{args})"

    def _having(self, node: ast.Call, scope: dict[str, str]) -> str:
        """`having(KIND, {"a": x, ...})`: a lookup in the context's index of KIND by `a`, ..."""
        kind, names = having_key(node)
        keys = node.args[1]
        assert isinstance(keys, ast.MapLiteral)
        values = "".join(f"{self._e(value, scope)}, " for _, value in keys.entries)
        return f"_having(ctx, {kind!r}, {names!r}, ({values}))"

    def _binary(self, node: ast.Binary, scope: dict[str, str]) -> str:
        left, right = self._e(node.left, scope), self._e(node.right, scope)
        # Against a text literal, Python equality is already exact (no bool/int confusion).
        plain = isinstance(node.left, ast.String) or isinstance(node.right, ast.String)
        # Against null or a boolean literal, `eq` is identity: null, true and false are
        # singletons, and `eq` never lets another value equal them.
        if node.op in ("==", "!="):
            operator = "is" if node.op == "==" else "is not"
            if (constant := _singleton(node.right)) is not None:
                return f"({left} {operator} {constant})"
            if (constant := _singleton(node.left)) is not None:
                return f"({constant} {operator} {right})"
        match node.op:
            case "==":
                return f"({left} == {right})" if plain else self._same_class_inlined(left, right)
            case "!=":
                return (
                    f"({left} != {right})"
                    if plain
                    else f"(not {self._same_class_inlined(left, right)})"
                )
            case "in" | "not in":
                found = self._membership(node, scope, left, right)
                return found if node.op == "in" else f"(not {found})"
        if node.op in _ORDER:
            return self._integers_inlined(_ORDER[node.op], node.op, left, right)
        if node.op in ("+", "-"):
            return self._integers_inlined(_ARITHMETIC[node.op], node.op, left, right)
        return f"{_ARITHMETIC[node.op]}({left}, {right})"

    def _integers_inlined(self, function: str, operator: str, left: str, right: str) -> str:
        """`function(left, right)` (`_le`, `_add`, ...) with its first case, two integers,
        inlined: the operands' line numbers and counts are integers nearly always, and the
        call cost more than the operation. Each operand is computed once, in order, into a
        local; inside a comprehension, where Python cannot assign one, the call stays."""
        if not self._assigns_temporaries():
            return f"{function}({left}, {right})"
        first = f"t{next(self._counter)}"
        if self._is_integer_literal(right):  # `x.end - 1`, `len(x.ids) >= 1`: one test
            test = f"({first} := {left}).__class__ is int"
            return f"({first} {operator} {right} if {test} else {function}({first}, {right}))"
        second = f"t{next(self._counter)}"
        both = f"(({first} := {left}).__class__ is int) & (({second} := {right}).__class__ is int)"
        return f"({first} {operator} {second} if {both} else {function}({first}, {second}))"

    def _is_integer_literal(self, code: str) -> bool:
        """Whether `code` names a literal of the rules whose value is an integer."""
        return code.startswith("L") and self._namespace.get(code).__class__ is int

    def _assigns_temporaries(self) -> bool:
        """Whether the code being generated may hold an operand in a local `tN`: inside a
        generated function, outside comprehensions, when inlining is on."""
        return self._lowers and bool(self._hoisted) and not self._comprehensions

    def _common_case_inlined(self, function: str, argument: str) -> str:
        """`function(argument)` with its common case (`_COMMON_CASES`) inlined: the
        argument computed once into a local, the call kept for any other class."""
        classes, value = _COMMON_CASES[function]
        local = f"t{next(self._counter)}"
        tests = " or ".join(f"{local}.__class__ is {cls}" for cls in classes)
        test = tests.replace(local, f"({local} := {argument})", 1)
        return f"({value.format(local)} if {test} else {function}({local}))"

    def _same_class_inlined(self, left: str, right: str) -> str:
        """`_eq(left, right)` with its common case inlined: two values of one class (two
        texts, two integers), where `eq` is Python's `==` (a boolean equals only a
        boolean), but for two lists or two maps, which go to `eq` (it tells `true` from
        `1` inside them). Operands are computed once, in order, as in
        `_integers_inlined`."""
        if not self._assigns_temporaries():
            return f"_eq({left}, {right})"
        if self._is_integer_literal(right):  # `id_count(r) == 1`: one test
            first = f"t{next(self._counter)}"
            test = f"({first} := {left}).__class__ is int"
            return f"({first} == {right} if {test} else _eq({first}, {right}))"
        first, second = f"t{next(self._counter)}", f"t{next(self._counter)}"
        same = f"({first} := {left}).__class__ is ({second} := {right}).__class__"
        flat = f"{first}.__class__ is not list and {first}.__class__ is not dict"
        return f"({first} == {second} if {same} and {flat} else _eq({first}, {second}))"

    def _membership(self, node: ast.Binary, scope: dict[str, str], left: str, right: str) -> str:
        """Code for `left in right`. A text needle in a set, a list or a map is what
        `member` looks up as it is: that case is inlined where the needle's code can be read
        twice (a local, an attribute) or always gives a text, and the haystack is known to
        be a set (a kind's ids, a constant set) or is read as simply; anything else goes
        through `member`."""
        member = f"_member({left}, {right})"
        if not self._lowers:
            return member
        if self._gives_set(node.right, scope):
            if _gives_text(node.left, self.symbols):
                return f"({left} in {right})"
            if _SIMPLE.fullmatch(left):
                first, needle = self._read_once(left)
                return (
                    f"({needle} in {right} if {first}.__class__ is str"
                    f" else _member({needle}, {right}))"
                )
        elif _SIMPLE.fullmatch(left) and _SIMPLE.fullmatch(right):
            first, needle = self._read_once(left)
            return (
                f"({needle} in {right} if {first}.__class__ is str and {right}.__class__ is list"
                f" else _member({needle}, {right}))"
            )
        return member

    def _read_once(self, code: str) -> tuple[str, str]:
        """`code` (a simple read) as first evaluated and as read after: an attribute read
        (`r0.get('a')`) into a local where temporaries are allowed, a dict look-up
        less for each later use; anything else as it is, twice."""
        if ".get(" not in code or not self._assigns_temporaries():
            return code, code
        local = f"t{next(self._counter)}"
        return f"({local} := {code})", local

    def _gives_data(self, node: ast.Expr) -> bool:
        """Whether `node`'s value is always JSON data as a JSON file parses (or null): a
        text, boolean or null literal, a whole number, `json_at(...)`, a builtin that gives
        text, a map literal or a choice of such, or a metric whose body is one (whatever
        its arguments). `json_data` gives such a value back, or a copy with the same leaves.
        (The checker refuses cyclic metrics, so the walk ends.)"""
        match node:
            case ast.String() | ast.Bool() | ast.Null():
                return True
            case ast.Number():
                return _exact(to_base(node.value, node.unit)[0]).__class__ is int
            case ast.MapLiteral():
                return all(self._gives_data(value) for _, value in node.entries)
            case ast.Conditional():
                return self._gives_data(node.then) and self._gives_data(node.otherwise)
            case ast.Call() if node.func in self.symbols.metrics:
                return self._gives_data(self.symbols.metrics[node.func].body)
            case ast.Call():
                return node.func in _GIVES_DATA
        return False

    def _gives_set(self, node: ast.Expr, scope: dict[str, str]) -> bool:
        """Whether `node`'s code gives a set whenever it gives a value: `ids(...)` of the
        builtin, a constant (not a variable of the same name) whose value is a set, or a
        metric without parameters whose body gives one. (The checker refuses cyclic
        metrics, so the walk ends.)"""
        match node:
            case ast.Call(func="ids") if "ids" not in self.symbols.metrics:
                return True
            case ast.Call(args=()) if node.func in self.symbols.metrics:
                return self._gives_set(self.symbols.metrics[node.func].body, {})
            case ast.Name() if node.id not in scope and node.id not in self._free:
                declared = self.symbols.declarations.get(node.id)
                return isinstance(declared, ast.ConstDecl) and isinstance(
                    self.constant(node.id), frozenset
                )
        return False

    def _whole_kinds(self, node: ast.Expr | None, scope: dict[str, str]) -> tuple[str, ...] | None:
        """The kinds of `union(K1, K2, ...)` of whole kinds (the builtin), else None."""
        if (
            isinstance(node, ast.Call)
            and node.func == "union"
            and node.func not in self.symbols.metrics
            and node.args
            and all(self._is_kind(arg, scope) for arg in node.args)
        ):
            return tuple(arg.id for arg in node.args if isinstance(arg, ast.Name))
        return None

    def _is_kind_ids(self, node: ast.Expr, scope: dict[str, str]) -> bool:
        """Whether `node` is `ids(KIND)` of a whole kind (a frozenset of texts)."""
        return (
            _is_id_set(node, self.symbols)
            and isinstance(node, ast.Call)
            and self._is_kind(node.args[0], scope)
        )


def _gives_text(node: ast.Expr, symbols: Any) -> bool:
    """Whether `node`'s code gives a text whenever it gives a value: a text literal, or
    `prefix(...)` of the builtin (which raises on anything but a text)."""
    if isinstance(node, ast.String):
        return True
    return isinstance(node, ast.Call) and node.func == "prefix" and node.func not in symbols.metrics


def constant_values(compiler: Compiler) -> dict[str, Any]:
    """Every constant of the ruleset, evaluated."""
    return {name: compiler.constant(name) for name in compiler.symbols.consts}
