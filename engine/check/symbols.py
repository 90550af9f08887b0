"""The symbol table of a set of rule files: every declaration by name, duplicates reported."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from engine.errors import Diagnostic, Location
from engine.syntax import ast

T = TypeVar("T")


def location(span: ast.Span) -> Location:
    """A diagnostic location for a span of a rule file."""
    return Location(span.file, span.line, span.column, span.end_line, span.end_column)


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A hint naming the closest candidate to a misspelt `name`, if any is close.

    A candidate that differs only in letter case comes first (`r` -> `R`): difflib's ratio
    sees nothing in common between one-letter names of different case.
    """
    import difflib  # only a misspelt name needs it: not imported by every command

    names = sorted(set(candidates))
    same_letters = [c for c in names if c != name and c.casefold() == name.casefold()]
    matches = same_letters or difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f"did you mean `{matches[0]}`?" if matches else None


def near_name(name: str, candidates: Iterable[str]) -> str | None:
    """The first candidate (in sorted order) one edit away from `name` (two for a name of
    six characters or more), letter case aside: what a misspelling looks like, closer than
    `did_you_mean`'s likeness, which finds `model_calls` for `model`."""
    folded = name.casefold()
    allowed = 1 if len(name) < 6 else 2
    for candidate in sorted(set(candidates)):
        if candidate != name and _edits(folded, candidate.casefold(), allowed) <= allowed:
            return candidate
    return None


def _edits(a: str, b: str, limit: int) -> int:
    """The edits (insert, delete, substitute, swap two neighbours) from `a` to `b`, or
    `limit + 1` once they are surely more than `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            cost = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                cost = min(cost, before[j - 2] + 1)
            current.append(cost)
        before, row = row, current
        if min(row) > limit:
            return limit + 1
    return row[-1]


@dataclass(frozen=True, slots=True)
class SymbolTable:
    """Declarations of all loaded files, by name and by declaration kind."""

    declarations: dict[str, ast.Declaration]
    # Per AST type, built on first use: the checker asks for `kinds`, `metrics`... at every
    # attribute, navigation and call, and rebuilding them each time made checking quadratic.
    _by_type: dict[type, dict[str, Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def of_type(self, decl_type: type[T]) -> dict[str, T]:
        """The declarations of one AST type, by name (shared: do not modify it)."""
        found = self._by_type.get(decl_type)
        if found is None:
            found = {
                name: decl
                for name, decl in self.declarations.items()
                if isinstance(decl, decl_type)
            }
            self._by_type[decl_type] = found
        return found

    @property
    def consts(self) -> dict[str, ast.ConstDecl]:
        return self.of_type(ast.ConstDecl)

    @property
    def metrics(self) -> dict[str, ast.MetricDecl]:
        return self.of_type(ast.MetricDecl)

    @property
    def kinds(self) -> dict[str, ast.KindDecl]:
        return self.of_type(ast.KindDecl)

    @property
    def codes(self) -> dict[str, ast.CodeDecl]:
        return self.of_type(ast.CodeDecl)

    @property
    def gates(self) -> dict[str, ast.GateDecl]:
        return self.of_type(ast.GateDecl)


def build_symbols(files: Iterable[ast.RuleFile]) -> tuple[SymbolTable, list[Diagnostic]]:
    """Index every declaration by name; a name declared twice is an error at the second,
    and a metric named like a builtin is an error (a call would silently mean the metric)."""
    from engine.builtins import BY_NAME

    table: dict[str, ast.Declaration] = {}
    diagnostics: list[Diagnostic] = []
    for rule_file in files:
        for decl in rule_file.declarations:
            name = decl.name.text
            if isinstance(decl, ast.MetricDecl) and name in BY_NAME:
                diagnostics.append(
                    Diagnostic(
                        "SHADOWS_BUILTIN",
                        f"metric `{name}` has the name of the builtin `{BY_NAME[name].signature}`",
                        location(decl.name.span),
                        hint="give the metric another name: a call must mean one thing",
                        rule=name,
                    )
                )
            first = table.get(name)
            if first is None:
                table[name] = decl
                continue
            where = first.name.span
            diagnostics.append(
                Diagnostic(
                    "DUPLICATE_NAME",
                    f"`{name}` is already declared as a {ast.declaration_kind(first)} "
                    f"at {where.file}:{where.line}:{where.column}",
                    location(decl.name.span),
                    rule=name,
                )
            )
    return SymbolTable(table), diagnostics


def names_in(node: object, *, calls: bool = False) -> Iterator[str]:
    """Every name in an AST (bound variables included), and with `calls` every function
    it calls."""
    stack = [node]
    while stack:
        item = stack.pop()
        cls = item.__class__
        if cls is ast.Name:
            yield item.id  # type: ignore[attr-defined]
        elif cls is tuple:
            stack.extend(item)  # type: ignore[arg-type]
        elif cls not in ast.ATOMS:  # an atom holds no name: not worth a turn
            if calls and cls is ast.Call:
                yield item.func  # type: ignore[attr-defined]
            for name in ast.EXPRESSION_FIELDS[cls]:
                stack.append(getattr(item, name))
