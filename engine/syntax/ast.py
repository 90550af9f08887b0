"""Typed AST of the rule language.

Every node is a frozen, slotted dataclass. Spans record where the user wrote each node;
they are excluded from equality and hashing, so two rule files that differ only in layout
produce equal trees.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeAlias

from engine.fastinit import faster_init


@dataclass(frozen=True, slots=True)
class Span:
    """A region of a rule file, 1-based, end exclusive."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int


NO_SPAN = Span("<none>", 0, 0, 0, 0)


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(node_type: type) -> tuple[str, ...]:
    """The fields of an AST node type that may hold other nodes, in declaration order (no
    `span`, no `text`); none for a type that is not a node. Walkers use this rather than
    `dataclasses.fields`, which costs more than the rest of a walk's step."""
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        fields = ()
        if dataclasses.is_dataclass(node_type):
            names = (f.name for f in dataclasses.fields(node_type))
            fields = tuple(name for name in names if name not in ("span", "text"))
        _CHILD_FIELDS[node_type] = fields
    return fields


# Field types that never hold an expression: a walk looking for expressions skips them.
_WORDS_ONLY = frozenset(
    {"str", "str | None", "int", "bool", "Fraction", "Ident", "Ident | None"}
    | {"tuple[str, ...]", "tuple[Ident, ...]", "tuple[Comment, ...]"}
)


class _ExpressionFields(dict[type, tuple[str, ...]]):
    """`expression_fields` of each node type, made on the type's first look-up: walks over
    every node index it (`EXPRESSION_FIELDS[cls]`) instead of calling the function."""

    def __missing__(self, node_type: type) -> tuple[str, ...]:
        declared = {}
        if dataclasses.is_dataclass(node_type):
            declared = {f.name: f.type for f in dataclasses.fields(node_type)}
        fields = tuple(
            name for name in child_fields(node_type) if declared[name] not in _WORDS_ONLY
        )
        self[node_type] = fields
        return fields


EXPRESSION_FIELDS = _ExpressionFields()


def expression_fields(node_type: type) -> tuple[str, ...]:
    """The fields of `child_fields` whose declared type may hold an expression (directly or
    inside a declaration's parts): what a walk over expressions needs to visit."""
    return EXPRESSION_FIELDS[node_type]


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, hash=False, repr=False)


@dataclass(frozen=True, slots=True)
class Ident:
    """A name the user wrote in a declaration position (rule name, code, state, unit...)."""

    text: str
    span: Span = _span()


# ---- expressions -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Number:
    """A numeric literal. `value` is exact; `unit` is the unit as written (or None)."""

    value: Fraction
    unit: str | None
    text: str = field(default="", compare=False, hash=False)
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class String:
    value: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Bool:
    value: bool
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Null:
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Name:
    """A reference to a constant, metric, kind, gate or bound variable."""

    id: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Attribute:
    """`target.name`: an attribute of a node (or an entry of a map constant)."""

    target: Expr
    name: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Navigate:
    """`target -> label` (successors) or `target <- label` (predecessors) in the graph."""

    target: Expr
    label: str
    outgoing: bool
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Call:
    """A call of a metric or a built-in function."""

    func: str
    args: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Quantifier:
    """`all|exists|none(var in source where filter: body)`."""

    op: str
    var: str
    source: Expr
    where: Expr | None
    body: Expr | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Aggregate:
    """`median|mean|min|max|sum|values(element for var in source where filter)`.

    `values` is the list of the elements themselves, in the source's order; the others
    reduce them to one number."""

    op: str
    element: Expr
    var: str
    source: Expr
    where: Expr | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Select:
    """`select(var in source where filter)`: the elements that pass the filter, in order."""

    var: str
    source: Expr
    where: Expr | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Count:
    """`count(var in source where filter)`."""

    var: str
    source: Expr
    where: Expr | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class SetLiteral:
    items: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class MapLiteral:
    entries: tuple[tuple[str, Expr], ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Unary:
    """`not x` or `-x`."""

    op: str
    operand: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Binary:
    """Arithmetic (`+ - * /`), comparison (`== != < <= > >=`) and membership (`in`, `not in`)."""

    op: str
    left: Expr
    right: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Conditional:
    """`if condition then a else b`."""

    condition: Expr
    then: Expr
    otherwise: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class BoolOp:
    """`a and b and ...` or `a or b or ...`."""

    op: str
    operands: tuple[Expr, ...]
    span: Span = _span()


Expr: TypeAlias = (
    Number
    | String
    | Bool
    | Null
    | Name
    | Attribute
    | Navigate
    | Call
    | Quantifier
    | Aggregate
    | Count
    | Select
    | SetLiteral
    | MapLiteral
    | Unary
    | Binary
    | BoolOp
    | Conditional
)

COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">="})

# The literals: expressions with no expression inside.
LITERALS: tuple[type, ...] = (Number, String, Bool, Null)
# What a field may hold that holds no other node: plain values and literals.
ATOMS = frozenset({str, int, bool, Fraction, type(None), *LITERALS})

# ---- declarations ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Param:
    name: Ident
    type: Ident
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class AttrDecl:
    """`attr NAME: TYPE [as text]`: `as_text` says that the values of a unit or `number`
    attribute are written as decimal text (`"0.52"`) rather than as JSON numbers."""

    name: Ident
    type: Ident
    as_text: bool = False
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class EdgeDecl:
    """`edge LABEL -> KIND, ...`: the field LABEL holds the id(s) of nodes of those kinds.

    `within KIND` is the edge `within -> KIND` whose target is found by position, not by a
    field: the node of KIND whose record holds this node's record (a records pointer with
    `*` steps through the records of KIND)."""

    label: Ident
    targets: tuple[Ident, ...]
    span: Span = _span()
    within: bool = False


@dataclass(frozen=True, slots=True)
class Binding:
    """`for var in source where filter`: one level of quantification of a rule."""

    var: Ident
    source: Expr
    where: Expr | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Ledger:
    """`ledger var in source where filter order by key`: the entries a budget accumulates."""

    var: Ident
    source: Expr
    where: Expr | None
    order: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ConstDecl:
    name: Ident
    value: Expr
    note: str | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class MetricDecl:
    name: Ident
    params: tuple[Param, ...]
    body: Expr
    note: str | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Records:
    """`records DOCUMENT "/pointer", ... [optional]`: where a kind's nodes come from in the
    input. A pointer that finds nothing is an error unless the clause is `optional`."""

    document: Ident
    pointers: tuple[str, ...]
    optional: bool = False
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class KindDecl:
    """A kind of graph node: the graphs it belongs to, its input records, key attribute,
    attributes and edges."""

    name: Ident
    graphs: tuple[Ident, ...]
    records: tuple[Records, ...]
    key: Ident | None
    attrs: tuple[AttrDecl, ...]
    edges: tuple[EdgeDecl, ...]
    note: str | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class CodeDecl:
    name: Ident
    message: str
    note: str | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class LinkDecl:
    name: Ident
    note: str | None
    bindings: tuple[Binding, ...]
    require: Expr
    code: Ident
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class GateDecl:
    name: Ident
    note: str | None
    bindings: tuple[Binding, ...]
    require: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class BudgetDecl:
    name: Ident
    note: str | None
    bindings: tuple[Binding, ...]
    ledger: Ledger
    total: Expr
    reserve: Expr | None
    op: str
    ceiling: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Column:
    """`column NAME = EXPR` of a report table."""

    name: Ident
    expr: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class TableDecl:
    """A report table: one row per binding, one value per column (reporting only)."""

    name: Ident
    note: str | None
    bindings: tuple[Binding, ...]
    columns: tuple[Column, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class DecisionRow:
    """`when condition => VERDICT`; `condition` is None for `otherwise`."""

    condition: Expr | None
    verdict: Ident
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class DecisionDecl:
    name: Ident
    note: str | None
    rows: tuple[DecisionRow, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class EventDecl:
    name: Ident
    applies: tuple[Ident, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Move:
    source: Ident
    event: Ident
    target: Ident
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Outcome:
    state: Ident
    result: Ident
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class PolicyPath:
    """`policy OUTCOME from STATE via EVENT, ...`: the events a policy outcome records,
    in order, starting from STATE; each must be a legal move of the table."""

    outcome: Ident
    source: Ident
    events: tuple[Ident, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ReplayClause:
    """`replay KIND by ENTITY on EVENT order ORDER [where ATTR is "V"] [key K] [version V]`:
    the nodes of KIND (those whose ATTR is V), sorted by ORDER, drive the state of each
    entity (the value of ENTITY) through the table, the event named by EVENT at a time.
    KEY is the idempotency key of an event (`over A, B`: the attributes two events with
    one key must share to be one event delivered twice; by default every field but the
    id and the order), VERSION the entity version it expects. LEDGER is a number each
    applied event adds to the replay's running total."""

    kind: Ident
    entity: Ident
    event: Ident
    order: Ident
    where: Ident | None = None
    where_value: str | None = None
    key: Ident | None = None
    version: Ident | None = None
    span: Span = _span()
    over: tuple[Ident, ...] = ()
    ledger: Ident | None = None


@dataclass(frozen=True, slots=True)
class TransitionsDecl:
    name: Ident
    note: str | None
    initial: Ident
    terminal: tuple[Ident, ...]
    settlement: tuple[Ident, ...]
    events: tuple[EventDecl, ...]
    moves: tuple[Move, ...]
    outcomes: tuple[Outcome, ...]
    span: Span = _span()
    replay: ReplayClause | None = None
    policies: tuple[PolicyPath, ...] = ()


@dataclass(frozen=True, slots=True)
class DocumentClause:
    """`document NAME path "P" format F [schema "S" [else reject CODE]] [measured]
    [optional]`: one file of a bundle (or, with `*` in a segment of P, every file it
    matches, in path order), read as the input document NAME that `records NAME` clauses
    of kinds name. A schema violation is reported as CODE (a declared `code`), else as
    `DOCUMENT_SCHEMA`.

    `document NAME from table T` is a derived document: the rows of table T, evaluated on
    the documents read from files, become its records. `document NAME given` is a value
    the caller supplies: a protocol checked inside another (`check(...)`) is given it."""

    name: Ident
    path: str
    format: Ident
    schema: str | None = None
    measured: bool = False
    optional: bool = False
    span: Span = _span()
    table: Ident | None = None
    given: bool = False
    schema_code: Ident | None = None

    @property
    def from_file(self) -> bool:
        """True for a document read from the bundle's files."""
        return self.table is None and not self.given

    @property
    def derived(self) -> bool:
        """True for `document NAME from table T`."""
        return self.table is not None

    @property
    def glob(self) -> bool:
        """True when the path names many files (`notes/*.yaml`)."""
        return "*" in self.path


@dataclass(frozen=True, slots=True)
class Seal:
    """`seal TABLE into DOCUMENT`: `rulecheck seal BUNDLE` writes the rows of TABLE (each
    row an object of its columns) as the JSON file of DOCUMENT, once the run has ended;
    the rules then compare that file with the table as the bundle holds it now."""

    table: Ident
    document: Ident
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Freeze:
    """`freeze TABLE into DOCUMENT at "POINTER" before LATER`: `rulecheck freeze-inputs
    BUNDLE` writes the rows of TABLE at POINTER of DOCUMENT's file (the pre-registration's
    measured-input hashes) and prints the file's sha256, the value to publish; it refuses
    once LATER (the run's first records) holds anything."""

    table: Ident
    document: Ident
    pointer: str
    before: Ident
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Banner:
    """`banner "TEXT" when GATE`: a line every report of the bundle shows, first and last,
    when the gate holds (`SYNTHETIC CAMPAIGN: ...`)."""

    text: str
    gate: Ident
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ProtocolDecl:
    """A protocol: the graph a bundle is checked as, the bundle's documents, and the entry
    points `rulecheck check` reports (admission gate, verdict decision, report tables).

    Clauses are kept as written (each a tuple) so that the checker can say when one that
    must appear once is missing or repeated.
    """

    name: Ident
    note: str | None
    graph: tuple[Ident, ...]
    documents: tuple[DocumentClause, ...]
    admission: tuple[Ident, ...]
    verdict: tuple[Ident, ...]
    report: tuple[Ident, ...]
    span: Span = _span()
    banners: tuple[Banner, ...] = ()
    seals: tuple[Seal, ...] = ()
    freezes: tuple[Freeze, ...] = ()


Declaration: TypeAlias = (
    ConstDecl
    | MetricDecl
    | KindDecl
    | CodeDecl
    | LinkDecl
    | GateDecl
    | BudgetDecl
    | DecisionDecl
    | TransitionsDecl
    | TableDecl
    | ProtocolDecl
)

DECLARATION_KINDS: dict[type, str] = {
    ConstDecl: "const",
    MetricDecl: "metric",
    KindDecl: "kind",
    CodeDecl: "code",
    LinkDecl: "link",
    GateDecl: "gate",
    BudgetDecl: "budget",
    DecisionDecl: "decision",
    TransitionsDecl: "transitions",
    TableDecl: "table",
    ProtocolDecl: "protocol",
}


def declaration_kind(decl: Declaration) -> str:
    """The keyword that introduces `decl` (`const`, `gate`, ...)."""
    return DECLARATION_KINDS[type(decl)]


@dataclass(frozen=True, slots=True)
class Comment:
    """A `#` comment; `own_line` is False for a comment after code on the same line."""

    text: str
    line: int
    own_line: bool


@dataclass(frozen=True, slots=True)
class RuleFile:
    """One parsed rule file."""

    path: str
    name: Ident
    version: str
    declarations: tuple[Declaration, ...]
    comments: tuple[Comment, ...] = field(default=(), compare=False, hash=False)
    span: Span = _span()


# A parse builds hundreds of thousands of these: each gets the cheaper `__init__`.
for _node_type in list(globals().values()):
    if isinstance(_node_type, type) and _node_type.__module__ == __name__:
        faster_init(_node_type)
