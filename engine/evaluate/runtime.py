"""Run-time semantics of the rule language, called by compiled rule code.

Every operator that could silently do the wrong thing on bad data (ordering `null`,
adding text, an empty median) raises EvaluationError instead.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Any

from engine.bundle.documents import RecordLines
from engine.errors import Diagnostic, RulecheckError
from engine.evaluate.facts import Facts
from engine.graph.build import Graph
from engine.resources import rulecheck_version as rulecheck_version  # a builtin's runtime
from engine.textlines import line_count
from engine.valuekey import exact_number, value_key

NUMBER_TYPES = (int, Fraction)
_CONTAINER_CLASSES = frozenset({list, dict})  # the language's lists and maps, as parsed
# Classes tested with `isinstance` on the hot paths, as tuples: a union `A | B` written in
# the call is made anew by every call.
_SEQUENCES = (list, tuple)
_SETS = (frozenset, set)
_LOOKUPS = (frozenset, set, dict)
_NUMBERS = (int, float, Fraction, Decimal)
_SIZED = (str, list, tuple, frozenset, set, dict)
_OWN_KEYS = (str, int, Fraction)  # values that are their own `having` keys
EMPTY: tuple[Any, ...] = ()  # nothing to iterate
# What a navigation from a node without such edges reaches: a list, as every other
# navigation gives (the empty `()` would make `eq` call two empty navigations different);
# shared, since no reader changes a navigation's list (the graph's edges share theirs).
NO_NODES: list[Any] = []


class EvaluationError(Exception):
    """A rule could not be evaluated on this input (null arithmetic, empty median, ...)."""


# What evaluating a rule on hostile data may raise. Each is reported at the binding that
# raised it, never as Python's own text (see `failure`).
FAILURES = (
    EvaluationError,
    TypeError,
    KeyError,
    AttributeError,
    ValueError,
    IndexError,
    ArithmeticError,
    RecursionError,
)


def failure(error: BaseException) -> str:
    """The message a user sees for an evaluation that failed at one binding."""
    if isinstance(error, EvaluationError):
        return str(error)
    if isinstance(error, RecursionError):
        return "a value is nested too deeply to evaluate"
    if isinstance(error, ArithmeticError):
        return "a number is too large to compute with"
    return "a value has a type this rule cannot use here"


@dataclass(slots=True)
class Context:
    """What one evaluation reads: a graph, the facts of the files it came from, the gate
    outcomes known so far, a metric memo, the keyed indexes built so far."""

    graph: Graph
    facts: Facts = field(default_factory=Facts)
    gates: dict[str, bool] = field(default_factory=dict)
    # The gates and budgets whose outcome rests on an evaluation error, with the error: they
    # are neither true nor false, so reading one is an error too (see `gate`).
    errors: dict[str, str] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)
    # The keyed indexes `having` builds, by kind and key attributes (see `KeyIndex`).
    indexes: dict[tuple[str, tuple[str, ...]], KeyIndex] = field(default_factory=dict)
    # The orders `next_by` builds, by kind and attribute (see `SortOrder`).
    orders: dict[tuple[str, str], SortOrder] = field(default_factory=dict)
    # What the input says of the rules before any runs (`ATTR_ABSENT`): reported with
    # the evaluation's warnings.
    warnings: tuple[Diagnostic, ...] = ()


_NAMES = {str: "text", bool: "bool", type(None): "null", list: "list", dict: "map"}
_NAMES.update({tuple: "node", frozenset: "set", set: "set"})


def _is_number(value: Any) -> bool:
    """Whether `value` is a number of the language (of any class; never a boolean)."""
    return value.__class__ is not bool and isinstance(value, _NUMBERS)


def _shown(value: Any) -> str:
    """What a value is, as the language names it (not Python's int, float or str)."""
    if _is_number(value):
        return "number"
    return _NAMES.get(value.__class__, type(value).__name__)


def number(value: Any, op: str) -> Any:
    """`value` as an exact number (a float a document holds as the decimal it was written
    as: `exact_number`); an EvaluationError for anything else, a boolean included."""
    if value.__class__ in NUMBER_TYPES:
        return value
    if isinstance(value, float) and math.isfinite(value):
        return exact_number(value)
    raise EvaluationError(f"`{op}` needs numbers, found {_shown(value)}")


def _ordered(items: Iterable[Any]) -> list[Any]:
    """Set elements in a fixed order: string hashing is randomised per process, so iterating a
    set directly would make rule outcomes come out in a different order on every run.
    Numbers come in numeric order, whatever their class (`2` before `5/2`)."""
    try:
        return sorted(items, key=_order_key)
    except TypeError:
        return sorted(items, key=repr)


def _order_key(item: Any) -> tuple[str, Any]:
    if _is_number(item):
        return ("number", item)
    return (type(item).__name__, item)


# A metric's value longer than this many characters is held only until the metric is
# computed for other arguments: a text per record (a rendered prompt) would otherwise be
# held for the whole evaluation, while the rules ask for it again only right away.
LONG_TEXT = 4096


_LONG = object()  # a metric table's entry naming its long text's key: never an argument


def remember(memo: dict[Any, Any], key: Any, value: Any) -> Any:
    """Memoise `value` in a metric's table as its value for `key`, a long text only until
    the next long text of the same metric; returns `value`."""
    if value.__class__ is str and len(value) > LONG_TEXT:
        previous = memo.get(_LONG, _LONG)
        if previous is not _LONG:
            memo.pop(previous, None)
        memo[_LONG] = key
    memo[key] = value
    return value


def coll(value: Any, what: str = "iteration") -> Iterable[Any]:
    """A collection to iterate; maps iterate over their keys; null is an error."""
    if value.__class__ is list or isinstance(value, _SEQUENCES):
        return value
    if isinstance(value, _SETS):
        return _ordered(value)
    if isinstance(value, dict):
        return list(value)
    raise EvaluationError(f"{what} needs a set or list, found {_shown(value)}")


def items(value: Any, what: str) -> Iterable[Any]:
    """A list attribute to iterate: absent (null) binds nothing; a non-collection is an error."""
    if value.__class__ is list:
        return value
    if value is None:
        return EMPTY
    return coll(value, what)


def attr(attrs: dict[Any, dict[str, Any]], value: Any, name: str) -> Any:
    """`value.name` for a node (an attribute) or a map (an entry); null stays null. A
    node's `id` is read by `attr_id`."""
    if value.__class__ is tuple:
        return attrs[value].get(name)
    if isinstance(value, dict):
        return value.get(name)
    if value is None:
        return None
    raise EvaluationError(f"`.{name}` needs a node or a map, found {_shown(value)}")


def attr_id(graph: Graph, value: Any) -> Any:
    """`value.id`: a node's id (`Graph.id_of`), or a map's entry `id`; null stays null."""
    if value.__class__ is tuple:
        return graph.id_of(value)
    return attr(graph.attrs, value, "id")


def attribute_reader(graph: Graph, name: str) -> Callable[[Any], Any]:
    """A node's attribute `name` (its id for `id`), for readers given the name."""
    if name == "id":
        return graph.id_of
    attrs = graph.attrs
    return lambda node: attrs[node].get(name)


def navigate(edges: dict[Any, Any], target: Any) -> Any:
    """The nodes one label's `edges` reach from a node, or from every node of a collection."""
    if target.__class__ is tuple or target is None:
        return edges.get(target, NO_NODES)
    reached: dict[Any, None] = {}
    for node in coll(target, "navigation"):
        for found in edges.get(node, EMPTY):
            reached[found] = None
    return list(reached)


def eq(a: Any, b: Any) -> bool:
    """Equality where `true` never equals `1`, at any depth of a list or a map."""
    if a.__class__ is str:  # the common case: a text equals only the same text
        return bool(a == b)
    if a.__class__ is bool or b.__class__ is bool:
        return a.__class__ is b.__class__ and a == b
    if a.__class__ in _CONTAINER_CLASSES and b.__class__ in _CONTAINER_CLASSES:
        # Python's `==` is `true == 1`, and a float's binary value is not its decimal
        return bool(value_key(a) == value_key(b))
    if a.__class__ is not b.__class__ and (isinstance(a, float) or isinstance(b, float)):
        return bool(value_key(a) == value_key(b))  # `0.1` read is the `0.1` written
    return bool(a == b)


def member(needle: Any, haystack: Any) -> bool:
    """`needle in haystack` for sets, lists and map keys, by `eq`."""
    if needle.__class__ is str:  # the common case: an ID or a code, hashable as it is
        kind = haystack.__class__
        if kind is frozenset or kind is list or kind is set or kind is dict:
            return needle in haystack
        if isinstance(haystack, _LOOKUPS):
            return needle in haystack
    if isinstance(haystack, _LOOKUPS):
        if needle.__class__ is bool or _may_be_bool(needle):
            # hashed alike, `true` and `1` meet in a set: the element itself decides
            return any(eq(needle, item) for item in haystack)
        return value_key(needle) in haystack  # a list or a map is never a set's element
    key = value_key(needle)
    return any(value_key(item) == key for item in coll(haystack, "`in`"))


def set_of(*elements: Any) -> frozenset[Any]:
    """A set written in a rule (`{x.a, x.b}`): its elements once each, a document's float
    as its exact number, so that `0.1 in {x.a}` finds the `0.1` a document holds."""
    return frozenset(exact_number(e) if isinstance(e, float) else e for e in elements)


def _may_be_bool(value: Any) -> bool:
    """Whether Python would find `value` equal to a boolean: a number that is 0 or 1."""
    return isinstance(value, _NUMBERS) and (value == 0 or value == 1)


def lt(a: Any, b: Any) -> bool:
    """Ordered comparison `<` on numbers only."""
    if a.__class__ is int and b.__class__ is int:  # the common case: no check to make
        return a < b
    return bool(number(a, "<") < number(b, "<"))


def le(a: Any, b: Any) -> bool:
    """Ordered comparison `<=` on numbers only."""
    if a.__class__ is int and b.__class__ is int:  # the common case: no check to make
        return a <= b
    return bool(number(a, "<=") <= number(b, "<="))


def gt(a: Any, b: Any) -> bool:
    """Ordered comparison `>` on numbers only."""
    if a.__class__ is int and b.__class__ is int:  # the common case: no check to make
        return a > b
    return bool(number(a, ">") > number(b, ">"))


def ge(a: Any, b: Any) -> bool:
    """Ordered comparison `>=` on numbers only."""
    if a.__class__ is int and b.__class__ is int:  # the common case: no check to make
        return a >= b
    return bool(number(a, ">=") >= number(b, ">="))


def add(a: Any, b: Any) -> Any:
    """Exact `+`."""
    if a.__class__ is int and b.__class__ is int:
        return a + b
    return number(a, "+") + number(b, "+")


def sub(a: Any, b: Any) -> Any:
    """Exact `-`."""
    if a.__class__ is int and b.__class__ is int:
        return a - b
    return number(a, "-") - number(b, "-")


def mul(a: Any, b: Any) -> Any:
    """Exact `*`."""
    return number(a, "*") * number(b, "*")


def div(a: Any, b: Any) -> Any:
    """Exact `/`; a zero divisor is an error."""
    top, bottom = number(a, "/"), number(b, "/")
    if bottom == 0:
        raise EvaluationError("division by zero")
    if bottom.__class__ is int:  # the common cases: a unit's `/ 1 USD`, whole quotients
        if bottom == 1:
            return top.numerator if top.denominator == 1 else top
        if top.__class__ is int and top % bottom == 0:
            return top // bottom
    result = Fraction(top) / bottom
    return result.numerator if result.denominator == 1 else result


def neg(a: Any) -> Any:
    """Exact unary minus."""
    return -number(a, "-")


def truth(condition: Any) -> bool:
    """A condition's value; anything but true or false is an error."""
    if condition.__class__ is not bool:
        raise EvaluationError(f"`if` needs a condition, found {_shown(condition)}")
    return bool(condition)


def condition(value: Any) -> bool:
    """Whether a condition holds: true or false as it is, null false (an absent flag);
    anything else (a number, a text, a list) is an error, never a silent false."""
    if value is True or value is False:
        return value
    if value is None:
        return False
    raise EvaluationError(f"a condition must be true or false, found {_shown(value)}")


def not_(a: Any) -> bool:
    """Boolean negation of a condition."""
    if a.__class__ is not bool:
        raise EvaluationError(f"`not` needs a condition, found {_shown(a)}")
    return not a


def ratio(a: Any, b: Any) -> Any:
    """`a / b` where a zero denominator is an error."""
    if number(b, "ratio") == 0:
        raise EvaluationError("ratio with a zero denominator")
    return div(a, b)


# The last list `_sorted_numbers` sorted, and its order: the median and the quartiles of
# one list (a memoised metric's value; rule code never changes a list) sort it once.
_LAST_SORTED: list[list[Any]] = [[], []]


def _sorted_numbers(values: list[Any], op: str) -> list[Any]:
    """The exact numbers `values` in ascending order, as `sorted` gives them (equal values
    in their order): sorted by their nearest floats first, since comparing two Fractions
    in Python costs a microsecond. Rounding to the nearest float never reverses an order,
    so only neighbours of one float can be out of exact order; if any are, or a value is
    beyond the floats, they are sorted exactly."""
    last, ordered = _LAST_SORTED
    if last is values:
        return ordered
    classes = set(map(type, values))
    numbers = values if classes.issubset(NUMBER_TYPES) else [number(v, op) for v in values]
    ordered = sorted(numbers) if classes == _INT_CLASS else _float_sorted(numbers)
    _LAST_SORTED[:] = values, ordered
    return ordered


_INT_CLASS = {int}


def _float_sorted(numbers: list[Any]) -> list[Any]:
    try:
        keyed = sorted(zip(map(float, numbers), itertools.count(), numbers, strict=False))
    except OverflowError:
        return sorted(numbers)
    for (low, _, a), (high, _, b) in itertools.pairwise(keyed):
        if low == high and b < a:
            return sorted(numbers)
    return [v for _, _, v in keyed]


def median(values: list[Any]) -> Any:
    """Exact median; the mean of the two middle values for an even count."""
    if not values:
        raise EvaluationError("`median` of no values")
    ordered = _sorted_numbers(values, "median")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return div(ordered[middle - 1] + ordered[middle], 2)


def _whole(value: Any) -> Any:
    """An exact number as an int when it is whole (as `div` gives it)."""
    if isinstance(value, Fraction) and value.denominator == 1:
        return value.numerator
    return value


@dataclass(frozen=True, slots=True)
class Unavailable:
    """A figure the records cannot support: the fields whose absence prevents it.

    It is a value of reports, never a number: arithmetic or ordering on it is an
    evaluation error, and it equals only an `Unavailable` naming the same fields."""

    missing: tuple[str, ...]


def unavailable(fields: Any) -> Unavailable:
    """`unavailable(fields)`: a report value saying the figure needs `fields` (one text, or
    a nonempty list or set of texts), which the records lack."""
    if isinstance(fields, str):
        names: list[Any] = [fields]
    elif isinstance(fields, _SETS):
        names = _ordered(fields)
    elif isinstance(fields, _SEQUENCES):
        names = list(dict.fromkeys(fields))
    else:
        raise EvaluationError(f"`unavailable` needs a field name or a list, found {_shown(fields)}")
    if not names or not all(isinstance(name, str) for name in names):
        raise EvaluationError("`unavailable` needs one or more field names (texts)")
    return Unavailable(tuple(names))


def quantile(values: list[Any], p: Fraction, op: str) -> Any:
    """Exact quantile `p` by linear interpolation between order statistics (Hyndman and
    Fan's definition 7): with the values sorted as x[0] <= ... <= x[n-1] and h = (n - 1) p,
    it is x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]). At p = 1/2 it is the
    median; at 0 and 1 the minimum and the maximum."""
    if not values:
        raise EvaluationError(f"`{op}` of no values")
    ordered = _sorted_numbers(values, op)
    h = (len(ordered) - 1) * p
    low = h.numerator // h.denominator
    if low == len(ordered) - 1:
        return ordered[low]
    return ordered[low] + (h - low) * (ordered[low + 1] - ordered[low])


def lower_quartile(values: list[Any]) -> Any:
    """The first quartile: `quantile` at 1/4."""
    return _whole(quantile(values, Fraction(1, 4), "lower_quartile"))


def upper_quartile(values: list[Any]) -> Any:
    """The third quartile: `quantile` at 3/4."""
    return _whole(quantile(values, Fraction(3, 4), "upper_quartile"))


def mean(values: list[Any]) -> Any:
    """Exact arithmetic mean."""
    if not values:
        raise EvaluationError("`mean` of no values")
    return div(sum(number(v, "mean") for v in values), len(values))


def minimum(values: list[Any]) -> Any:
    """Smallest value (the first of equal smallest ones)."""
    if not values:
        raise EvaluationError("`min` of no values")
    if _LAST_SORTED[0] is values:  # a distribution's median was just taken: no comparison
        return _LAST_SORTED[1][0]
    return min(number(v, "min") for v in values)


def maximum(values: list[Any]) -> Any:
    """Largest value (the first of equal largest ones)."""
    if not values:
        raise EvaluationError("`max` of no values")
    if _LAST_SORTED[0] is values:  # as `minimum`; `sorted` kept equal values in their order
        ordered = _LAST_SORTED[1]
        first = len(ordered) - 1
        while first and ordered[first - 1] == ordered[-1]:
            first -= 1
        return ordered[first]
    return max(number(v, "max") for v in values)


def total(values: list[Any]) -> Any:
    """Exact sum (0 for no values)."""
    return sum(number(v, "sum") for v in values)


def length(value: Any) -> int:
    """Length of a text or a collection."""
    if value.__class__ is list or value.__class__ is str:  # the common cases, tested first
        return len(value)
    if isinstance(value, _SIZED):
        return len(value)  # what `coll` would give has this many elements: no copy, no sort
    return len(list(coll(value, "len")))


# The characters of an ID's number (`prefix`, `id_number`).
ID_DIGITS = "0123456789"


def prefix(value: Any) -> str:
    """The letters before an ID's number: `E` for `E12`."""
    if not isinstance(value, str):
        raise EvaluationError(f"`prefix` needs text, found {_shown(value)}")
    return value.rstrip(ID_DIGITS)


def id_number(value: Any) -> int:
    """The number after an ID's letters: 12 for `E12`."""
    if not isinstance(value, str):
        raise EvaluationError(f"`id_number` needs text, found {_shown(value)}")
    digits = value[len(value.rstrip(ID_DIGITS)) :]
    if not digits or (digits.startswith("0") and digits != "0"):
        raise EvaluationError(f"`id_number` needs an ID ending in a number, found {_shown(value)}")
    return int(digits)


def lines(value: Any) -> int:
    """Physical lines of a text."""
    if not isinstance(value, str):
        raise EvaluationError(f"`line_count` needs text, found {_shown(value)}")
    return line_count(value)


def unique(value: Any) -> bool:
    """No element repeats."""
    items = [value_key(item) for item in coll(value, "unique")]
    return len(items) == len(set(items))


def sorted_unique(value: Any) -> list[Any]:
    """The elements once each, in a fixed sorted order."""
    kept: dict[Any, Any] = {}
    for item in coll(value, "sorted_unique"):
        kept.setdefault(value_key(item), item)
    by_key = {key: item for key, item in kept.items()}
    return [by_key[key] for key in _ordered(by_key)]


def pluck(ctx: Context, value: Any, name: Any) -> list[Any]:
    """The attribute or entry `name` of each element, in order."""
    key = _text(name, "pluck")
    graph = ctx.graph
    attrs, items = graph.attrs, coll(value, "pluck")
    if key == "id":
        return [attr_id(graph, item) for item in items]
    # read inline, not through `attribute_reader`: a call less per element of a kind
    return [
        attrs[item].get(key) if item.__class__ is tuple else attr(attrs, item, key)
        for item in items
    ]


def absolute(value: Any) -> Any:
    """Absolute value of a number."""
    return abs(number(value, "abs"))


def kind_of(value: Any) -> str:
    """The kind of a node."""
    if value.__class__ is not tuple:
        raise EvaluationError(f"`kind` needs a node, found {_shown(value)}")
    return str(value[0])


def node_ids(graph: Graph, nodes: Any) -> frozenset[Any]:
    """The ids of a set of nodes."""
    id_of = graph.id_of
    return frozenset(i for n in coll(nodes, "ids") if isinstance(i := id_of(n), str))


def union(*collections: Any) -> list[Any]:
    """Elements of every collection, in order, each once."""
    merged: dict[Any, Any] = {}
    for collection in collections:
        for item in coll(collection, "union"):
            merged.setdefault(value_key(item), item)
    return list(merged.values())


def of_kind(nodes: Any, kind: str) -> list[Any]:
    """The nodes of one kind."""
    return [n for n in coll(nodes, "of_kind") if n[0] == kind]


# ---- keyed lookups (`having`) -------------------------------------------------------------

_UNKEYED = object()  # a value without an index key: compared with `eq` record by record
_NOTHING = object()  # a value `eq` finds equal to nothing, itself included (NaN)


def _key(value: Any) -> Any:
    """The dict key of a value: two values have equal keys exactly when `eq` calls them equal.

    Texts, numbers and null are their own keys: Python hashes `1`, `1.0` and `Fraction(1)`
    alike and compares them as `eq` does. A boolean is tagged, since `eq` never lets `true`
    equal `1`. NaN equals nothing (a dict would match it by identity). Any other value (a
    list, a map, ...) has no key and is compared with `eq`.
    """
    if value.__class__ is bool:
        return (bool, value)
    if value is None or isinstance(value, _OWN_KEYS):
        return value
    if isinstance(value, float):
        return exact_number(value) if value == value else _NOTHING
    return _UNKEYED


@dataclass(frozen=True, slots=True)
class KeyIndex:
    """The nodes of one kind by the keys of some of their attributes, built in one pass.

    `buckets` maps a tuple of keys to the nodes that have them, in graph order: the whole
    answer of a lookup by those keys. `unkeyed` holds the positions in `nodes` of the
    nodes with an attribute that has no key, which every lookup compares with `eq`; a node
    with a NaN attribute is in neither, since no lookup can find it.
    """

    nodes: tuple[Any, ...]
    buckets: dict[tuple[Any, ...], list[Any]]
    unkeyed: tuple[int, ...]


def key_index(graph: Graph, kind: str, names: tuple[str, ...]) -> KeyIndex:
    """Index the nodes of `kind` by the attributes `names`."""
    nodes = tuple(graph.by_kind.get(kind, ()))
    readers = tuple(attribute_reader(graph, name) for name in names)
    buckets: dict[tuple[Any, ...], list[Any]] = {}
    unkeyed = []
    for position, node in enumerate(nodes):
        key = tuple(_key(read(node)) for read in readers)
        if _NOTHING in key:
            continue
        if _UNKEYED in key:
            unkeyed.append(position)
        else:
            buckets.setdefault(key, []).append(node)
    return KeyIndex(nodes, buckets, tuple(unkeyed))


def having(ctx: Context, kind: str, names: tuple[str, ...], values: tuple[Any, ...]) -> list[Any]:
    """The nodes of `kind` whose attribute `names[i]` equals `values[i]` for every i, by `eq`,
    in graph order: what `u in kind where u.a == x and ...` binds, through an index built
    on the first lookup of these attributes in this context. The list may be the index's
    own: callers only read it (rule code never changes a list)."""
    index = ctx.indexes.get((kind, names))
    if index is None:
        index = ctx.indexes[kind, names] = key_index(ctx.graph, kind, names)
    for value in values:
        if value.__class__ is not str and value.__class__ is not int and value is not None:
            break
    else:  # the common case, texts, integers and nulls (IDs, roles, runs): each its own key
        if not index.unkeyed:
            return index.buckets.get(values, NO_NODES)
    key = tuple(value if value.__class__ is str else _key(value) for value in values)
    if _UNKEYED in key:  # a value with no key: every node is compared with `eq`
        matches = _matcher(ctx, names, values)
        return [node for node in index.nodes if matches(node)]
    found = [] if _NOTHING in key else index.buckets.get(key, [])
    if not index.unkeyed:  # the common case: the index's answer is the whole answer
        return found
    matches = _matcher(ctx, names, values)
    extra = [position for position in index.unkeyed if matches(index.nodes[position])]
    if not extra:
        return found
    by_position = {node: position for position, node in enumerate(index.nodes)}
    merged = sorted([*(by_position[node] for node in found), *extra])
    return [index.nodes[position] for position in merged]


def _matcher(
    ctx: Context, names: tuple[str, ...], values: tuple[Any, ...]
) -> Callable[[Any], bool]:
    """Whether a node's attributes `names` equal `values`, by `eq` (for the nodes and
    values the index cannot key)."""
    graph = ctx.graph
    pairs = tuple(
        (attribute_reader(graph, name), value) for name, value in zip(names, values, strict=True)
    )

    def matches(node: Any) -> bool:
        return all(eq(read(node), value) for read, value in pairs)

    return matches


def id_count(graph: Graph, node: Any) -> int:
    """How many nodes of `node`'s kind share its id."""
    if node.__class__ is not tuple:
        raise EvaluationError(f"`id_count` needs a node, found {_shown(node)}")
    return graph.id_count(node)


_UTC = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z")


def utc(value: Any) -> Any:
    """Seconds since 1970-01-01T00:00:00Z of an ISO-8601 UTC time (`...Z`), exactly."""
    if not isinstance(value, str):
        raise EvaluationError(f"`utc` needs a time like 2026-10-01T09:00:00Z, found {value!r}")
    return _utc_seconds(value)


# Rules compare the same few times many times over (every rating with one reveal time), and
# a time's seconds are a pure function of its text; an invalid text raises and is not kept.
@functools.lru_cache(maxsize=4096)
def _utc_seconds(text: str) -> Any:
    match = _UTC.fullmatch(text)
    if match is None:
        raise EvaluationError(f"`utc` needs a time like 2026-10-01T09:00:00Z, found {text!r}")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError as error:
        raise EvaluationError(f"`utc`: {text!r} is not a valid time ({error})") from None
    whole = int(moment.timestamp())
    fraction = Fraction(match.group(7)) if match.group(7) else 0
    return whole + fraction


def starts_with(text: Any, prefix: Any) -> bool:
    """Whether a text begins with a prefix."""
    if not isinstance(text, str) or not isinstance(prefix, str):
        raise EvaluationError("`starts_with` needs two texts")
    return text.startswith(prefix)


# ---- sorted neighbours (`next_by`) --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SortOrder:
    """The nodes of one kind sorted by one attribute (ties in graph order), and each node's
    place in that order; `problem` says why the kind cannot be sorted by it, if it cannot."""

    nodes: tuple[Any, ...]
    place: dict[Any, int]
    problem: str | None


def order_family(value: Any) -> str | None:
    """What a value can be sorted with (`next_by`, a replay's order): numbers with
    numbers, texts with texts; None for anything else."""
    if value.__class__ in NUMBER_TYPES or (isinstance(value, float) and math.isfinite(value)):
        return "number"
    return "text" if isinstance(value, str) else None


def sort_order(graph: Graph, kind: str, name: str) -> SortOrder:
    """Sort the nodes of `kind` by their attribute `name`: all numbers, or all texts."""
    nodes = tuple(graph.by_kind.get(kind, ()))
    read = attribute_reader(graph, name)
    values = [read(node) for node in nodes]
    families = [order_family(value) for value in values]
    for node, value, family in zip(nodes, values, families, strict=True):
        if family is None or family != families[0]:
            problem = (
                f"`next_by` sorts the {kind} nodes by `{name}`, which must be all numbers or "
                f"all texts: {kind} `{graph.id_of(node)}` has {_shown(value)}"
            )
            return SortOrder((), {}, problem)
    ordered = tuple(
        node for _, _, node in sorted(zip(values, range(len(nodes)), nodes, strict=True))
    )
    return SortOrder(ordered, {node: place for place, node in enumerate(ordered)}, None)


def next_by(ctx: Context, kind: str, name: str, node: Any) -> list[Any]:
    """The node of `kind` right after `node` when the kind is sorted by attribute `name`
    (ties in graph order): a list of that one node, empty for the last one."""
    order = ctx.orders.get((kind, name))
    if order is None:
        order = ctx.orders[kind, name] = sort_order(ctx.graph, kind, name)
    if order.problem is not None:
        raise EvaluationError(order.problem)
    place = order.place.get(node) if node.__class__ is tuple else None
    if place is None:
        raise EvaluationError(
            f"`next_by` needs a node of kind `{kind}` third, found {_shown(node)}"
        )
    return list(order.nodes[place + 1 : place + 2])


def one(collection: Any) -> Any:
    """The single element of a collection; none or several is an error."""
    items = list(coll(collection, "one"))
    if len(items) != 1:
        raise EvaluationError(f"`one` needs exactly one element, found {len(items)}")
    return items[0]


def entry(mapping: Any, key: Any) -> Any:
    """The value of `key` in a map; a missing key is an error."""
    if not isinstance(mapping, dict):
        raise EvaluationError(f"`entry` needs a map, found {_shown(mapping)}")
    if key not in mapping:
        raise EvaluationError(f"the map has no entry `{key}`")
    return mapping[key]


def gate(ctx: Context, name: str) -> bool:
    """The outcome of a gate, link rule or budget evaluated earlier."""
    if name not in ctx.gates:
        raise EvaluationError(f"`{name}` has not been evaluated")
    if name in ctx.errors:
        # An error read as `false` would become `true` under `not`: a verdict taken on it
        # would rest on nothing.
        raise EvaluationError(f"`{name}` could not be evaluated ({ctx.errors[name]})")
    return ctx.gates[name]


def bound(env: dict[str, Any], name: str) -> Any:
    """A variable bound by a rule's `for` clauses."""
    try:
        return env[name]
    except KeyError:
        raise EvaluationError(f"`{name}` is not bound") from None


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise EvaluationError(f"`{what}` needs text, found {_shown(value)}")
    return value


def ruleset_hash(ctx: Context) -> str:
    """The hash of the ruleset this evaluation runs with."""
    return ctx.facts.ruleset_hash


def schema_sha256(name: Any) -> str:
    """The sha256 of a shipped JSON Schema, by name (`manifests/schemas/NAME.schema.json`)."""
    from engine.bundle.jsonschemas import schema_digest

    try:
        return schema_digest(_text(name, "schema_sha256"))
    except OSError:
        raise EvaluationError(f"no shipped schema `{name}`") from None


def file_sha256(ctx: Context, relative: Any) -> str | None:
    """The sha256 of a bundle file; null when it is absent or would leave the bundle."""
    if ctx.facts.root is None:
        raise EvaluationError("`file_sha256` reads files of a bundle: check it as a bundle")
    return ctx.facts.file_sha256(_text(relative, "file_sha256"))


def file_size(ctx: Context, relative: Any) -> int | None:
    """The byte count of a bundle file; null when it is absent or would leave the bundle."""
    if ctx.facts.root is None:
        raise EvaluationError("`file_size` reads files of a bundle: check it as a bundle")
    return ctx.facts.file_size(_text(relative, "file_size"))


def contains(value: Any, part: Any) -> bool:
    """Whether a text holds another."""
    return _text(part, "contains") in _text(value, "contains")


def file_text(ctx: Context, relative: Any) -> str | None:
    """The text of a bundle's UTF-8 file; null when it is absent or not UTF-8."""
    if ctx.facts.root is None:
        raise EvaluationError("`file_text` reads files of a bundle: check it as a bundle")
    raw = ctx.facts.file_bytes(_text(relative, "file_text"))
    try:
        return raw.decode("utf-8") if raw is not None else None
    except UnicodeDecodeError:
        return None


def file_lines(ctx: Context, relative: Any, start: Any, end: Any) -> str | None:
    """Lines `start`..`end` of a bundle's UTF-8 file; null when there are not that many."""
    from engine.textlines import physical_lines

    if ctx.facts.root is None:
        raise EvaluationError("`file_lines` reads files of a bundle: check it as a bundle")
    for bound in (start, end):
        if bound.__class__ is not int or bound < 1:
            raise EvaluationError(f"`file_lines` needs line numbers from 1, found {_shown(bound)}")
    raw = ctx.facts.file_bytes(_text(relative, "file_lines"))
    try:
        lines = physical_lines(raw.decode("utf-8")) if raw is not None else []
    except UnicodeDecodeError:
        return None
    if start > end or end > len(lines):
        return None
    return "".join(lines[start - 1 : end])


def lock_ruleset_hash(ctx: Context, relative: Any) -> str | None:
    """The ruleset hash a bundle's rules lock records, once the lock verifies; null when
    the file is absent, is no lock, or its recorded hashes do not match its own text."""
    from engine.freeze.lock import verified_ruleset_hash

    if ctx.facts.root is None:
        raise EvaluationError("`lock_ruleset_hash` reads files of a bundle: check it as a bundle")
    path = ctx.facts.file_path(_text(relative, "lock_ruleset_hash"))
    if path is None:
        return None
    try:
        return verified_ruleset_hash(path)
    except RulecheckError:
        return None


def _record(ctx: Context, node: Any, what: str) -> tuple[RecordLines, int]:
    if node.__class__ is not tuple:
        raise EvaluationError(f"`{what}` needs a node, found {_shown(node)}")
    entry = ctx.graph.entry(node)
    found = None if entry is None else ctx.facts.record(*entry)
    if found is None:
        raise EvaluationError(f"`{what}`: the node was not read from a JSON Lines record")
    return found


def record_sha256(ctx: Context, node: Any) -> str:
    """The sha256 of the bytes of the JSON Lines record a node was read from (no line end)."""
    lines, index = _record(ctx, node, "record_sha256")
    return lines.sha256(index)


def member_sha256(ctx: Context, node: Any) -> str:
    """The sha256 of the file of a many-file document that a node was read from."""
    if node.__class__ is not tuple:
        raise EvaluationError(f"`member_sha256` needs a node, found {_shown(node)}")
    entry = ctx.graph.entry(node)
    found = None if entry is None else ctx.facts.member(*entry)
    if found is None:
        raise EvaluationError(
            "`member_sha256`: the node was not read from a document of many files"
        )
    return found


def record_line(ctx: Context, node: Any) -> int:
    """The physical line of the JSON Lines record a node was read from."""
    lines, index = _record(ctx, node, "record_line")
    return lines.line(index)


def seeded_order(seed: Any, label: Any, items: Any) -> list[str]:
    """The items in the order the seed and label fix (sha256 of seed, label and item)."""
    from engine.bundle.ordering import seeded_order as order

    texts = [_text(item, "seeded_order") for item in coll(items, "seeded_order")]
    return order(_text(seed, "seeded_order"), _text(label, "seeded_order"), texts)


def concat(*parts: Any) -> str:
    """The texts joined in order."""
    return "".join(_text(part, "concat") for part in parts)


def head(value: Any, count: Any) -> str:
    """The first `count` characters of a text."""
    text = _text(value, "head")
    if count.__class__ is not int or count < 0:
        raise EvaluationError(f"`head` needs a whole number of characters, found {_shown(count)}")
    return text[:count]


def seeded_key(seed: Any, label: Any, item: Any) -> str:
    """The sha256 of seed, label and item joined by U+001F (the key of `seeded_order`)."""
    from engine.bundle.ordering import seeded_key as key

    return key(_text(seed, "seeded_key"), _text(label, "seeded_key"), _text(item, "seeded_key"))


def json_at(ctx: Context, relative: Any, pointer: Any) -> Any:
    """The value at `pointer` of a bundle's JSON file; null when there is none."""
    if ctx.facts.root is None:
        raise EvaluationError("`json_at` reads files of a bundle: check it as a bundle")
    document = ctx.facts.json_document(_text(relative, "json_at"))
    from engine.graph.build import resolve_pointer

    return None if document is None else resolve_pointer(document, _text(pointer, "json_at"))


def json_sha256(value: Any) -> str:
    """The sha256 of a value's canonical JSON followed by a newline."""
    from engine.freeze.canonical import canonical_json

    try:
        data = json_data(value)
    except (TypeError, ValueError) as error:
        raise EvaluationError(f"`json_sha256` needs a JSON value: {error}") from None
    # `json_data` keeps a plain float (a YAML document's number) as it is: only
    # `canonical_json` writes it in Python's digits
    return _written_sha256(canonical_json, data)


def data_sha256(value: Any) -> str:
    """`json_sha256` of a value the compiler knows to be JSON data as parsed (a part of a
    JSON file, a text, a whole number, a map of such): `json_data` would give it back, or
    a copy with the same leaves, so it is encoded as it is, without the walk that says
    so, and by `canonical_data_json` (a campaign's blinded view hashes each answer's
    final object)."""
    from engine.freeze.canonical import canonical_data_json

    return _written_sha256(canonical_data_json, value)


def _written_sha256(write: Callable[[Any], bytes], value: Any) -> str:
    try:
        raw = write(value)
    except (TypeError, ValueError) as error:
        raise EvaluationError(f"`json_sha256` needs a JSON value: {error}") from None
    return hashlib.sha256(raw + b"\n").hexdigest()


@functools.cache
def grammar_sha256() -> str:
    """The sha256 of the rule grammar's text."""
    from engine.syntax.parse import grammar_text

    return hashlib.sha256(grammar_text().encode("utf-8")).hexdigest()


def json_text(value: Any) -> str:
    """A value's canonical JSON, as text."""
    from engine.freeze.canonical import canonical_json

    try:
        return canonical_json(json_data(value)).decode("utf-8")
    except (TypeError, ValueError) as error:
        raise EvaluationError(f"`json_text` needs a JSON value: {error}") from None


def _utf8(value: Any, what: str) -> bytes:
    try:
        return _text(value, what).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate has no UTF-8 form
        raise EvaluationError(f"`{what}` needs text that has a UTF-8 form") from None


def text_sha256(value: Any) -> str:
    """The sha256 of a text's UTF-8 bytes."""
    return hashlib.sha256(_utf8(value, "text_sha256")).hexdigest()


def text_bytes(value: Any) -> int:
    """The UTF-8 byte count of a text."""
    return len(_utf8(value, "text_bytes"))


def text_diff(old: Any, new: Any, old_label: Any, new_label: Any) -> str:
    """The unified diff (3 lines of context) from text `old` to text `new`, headed by the
    two labels: `diff -u`'s body, empty when the texts are equal."""
    import difflib

    lines = difflib.unified_diff(
        _text(old, "text_diff").splitlines(keepends=True),
        _text(new, "text_diff").splitlines(keepends=True),
        fromfile=_text(old_label, "text_diff"),
        tofile=_text(new_label, "text_diff"),
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


_JSON_SCALARS = frozenset({str, int, bool, float, type(None), Decimal})


def json_data(value: Any, nodes: Graph | None = None) -> Any:
    """A rule value as JSON data: an exact number as an integer, or as a decimal when it
    has a finite decimal form (else ValueError); a set as a sorted list; with the graph
    `nodes`, one of its nodes as its id (else a node is a ValueError)."""
    if value.__class__ in _JSON_SCALARS:
        return value
    if _plain(value):  # parsed JSON (an answer's part): nothing to convert, nothing to copy
        return value
    if value.__class__ is dict and nodes is None:
        return {str(key): json_data(item) for key, item in value.items()}
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return value.numerator
        decimal = Decimal(value.numerator) / Decimal(value.denominator)
        if Fraction(decimal) != value:
            raise ValueError(f"{value} has no finite decimal form")
        return decimal
    if value.__class__ is tuple and nodes is not None and value in nodes.attrs:
        return nodes.id_of(value)
    if value.__class__ is tuple and len(value) == 2 and isinstance(value[0], str):
        raise ValueError("a node is not a JSON value")
    if isinstance(value, _SEQUENCES):
        return [json_data(item, nodes) for item in value]
    if isinstance(value, _SETS):
        return [json_data(item, nodes) for item in _ordered(value)]
    if isinstance(value, dict):
        return {str(key): json_data(item, nodes) for key, item in value.items()}
    if isinstance(value, Unavailable):
        return {"unavailable": list(value.missing)}
    return value


def _plain(value: Any) -> bool:
    """True when `value` is JSON data as parsed: objects with text keys, arrays (lists,
    not tuples: a pair may be a node), texts, numbers, booleans and null."""
    cls = value.__class__
    if cls is dict:
        for key, item in value.items():
            if key.__class__ is not str:
                return False
            kind = item.__class__
            if kind not in _JSON_SCALARS and not ((kind is dict or kind is list) and _plain(item)):
                return False
        return True
    if cls is list:
        for item in value:
            kind = item.__class__
            if kind not in _JSON_SCALARS and not ((kind is dict or kind is list) and _plain(item)):
                return False
        return True
    return cls in _JSON_SCALARS


def nested_check(ctx: Context, protocol: Any, files: Any, given: Any) -> Any:
    """`check(PROTOCOL, files, given)`: the result of a protocol checked inside this bundle."""
    checker = ctx.facts.nested
    if checker is None:
        raise EvaluationError("`check` runs a protocol inside a bundle: check it as a bundle")
    if not isinstance(files, dict) or not isinstance(given, dict):
        raise EvaluationError("`check` needs maps of the files and the given documents")
    try:
        return checker(_text(protocol, "check"), json_data(files), json_data(given))
    except ValueError as error:
        raise EvaluationError(f"`check`: {error}") from None
