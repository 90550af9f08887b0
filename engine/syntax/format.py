"""Canonical printer for rule files: the text `rulecheck fmt` writes.

The printer works from the typed AST alone, so its output depends only on what a file
means, on the notes and spellings the AST keeps (`source` notes, number spellings) and on
its comments. Parsing the output gives back equal declarations, and formatting the output
again changes nothing.

Layout:

- The first line is `ruleset NAME version "V"`, then one blank line, then the declarations
  separated by exactly one blank line. The text ends with exactly one newline. A file with
  no declarations is its header line (plus any comments, see below).
- A declaration's head is on its first line: `const NAME = EXPR`,
  `metric NAME(p: T, q: T) = EXPR` (`metric NAME() = EXPR` without parameters),
  `kind NAME of GRAPH`, `code NAME "message"`, `link NAME`, `gate NAME`, `budget NAME`,
  `decision NAME`, `transitions NAME`.
- Every further clause is on a line of its own, indented by two spaces, in this order:
  `source "..."`; `records DOC "/ptr", ... [optional]` lines, `key FIELD`,
  `attr NAME: TYPE [as text]` lines then `edge LABEL -> KIND, ...` lines; the
  `for VAR in EXPR where EXPR` bindings; `ledger VAR in EXPR where EXPR order by EXPR`;
  `total EXPR OP EXPR`; `require EXPR`; `else reject CODE`; `when EXPR => VERDICT` rows and
  `otherwise => VERDICT` (in the author's order); and for transitions `initial S`,
  `terminal A, B`, `settlement S`, `event e applies A, B` lines, `from A on e to B` lines,
  `outcome S => R` lines. Several `terminal` (or `settlement`) clauses are merged into one
  line. Within one kind of clause the author's order is kept.
- An expression is always printed on one line, however long.

Expressions:

- Single spaces around binary operators, `and`, `or`, `in`, `not in` and comparisons;
  `not x`, `-x` (`- -x` when the operand itself starts with a minus), `a.b`, `a -> b`,
  `a <- b`, `f(x, y)`, `all(v in S where F: B)`, `median(E for v in S where F)`,
  `count(v in S where F)`, `{"a", "b"}`, `{}` (the empty set), `{"k": v}`.
- Parentheses only where precedence needs them. From loosest to tightest: `or`, `and`,
  `not`, comparisons and `in`/`not in` (which do not chain), `+ -`, `* /`, unary minus,
  postfix (`.`, `->`, `<-`) and atoms. `+ - * /` are left-associative, so `(a - b) - c`
  prints as `a - b - c` and `a - (b - c)` keeps its parentheses. A negative number literal
  binds like a unary minus: `(-1).x`, but `2 * -1`.
- Numbers are printed as the author spelled them (`90_000`, `0.80`, `8e-1`), followed by
  ` UNIT` when they carry a unit (`90_000 tokens`, `15 %`). The parser folds the minus
  signs written before a literal into its spelling; they print as `-3`, `- -3`. A number
  built without a spelling (`Number.text == ""`) prints as a plain decimal.
- Strings are re-escaped: `\\"`, `\\\\`, `\\n`, `\\t`; every other character is written as is.

Comments:

- Every comment of the input appears exactly once in the output, with its text unchanged.
- A comment is attached to one printed line. Each declaration is cut into pieces whose
  start positions are known from the AST spans: its head, its `source` note, and each
  clause (bindings, ledger, `total`, `require`, `else reject`, attributes, edges, decision
  rows, `initial`, each state named by `terminal`/`settlement`, events, moves, outcomes).
  The `ruleset` header is a piece too.
- A trailing comment (after code on its line) belongs to the last piece that started on or
  before its line; it stays at the end of that piece's printed line, two spaces after the
  code. A comment on its own line inside a piece that spans several lines (a multi-line
  expression, say) belongs to that piece; any other own-line comment belongs to the next
  piece. An own-line comment is printed on its own line just before its piece's printed
  line, with that line's indentation. Own-line comments before the header stay before it;
  own-line comments after the last piece form a block at the end of the file, after one
  blank line.
- When several comments belong to one printed line, they keep their order; only the last
  one can stay trailing (and only if it was trailing), the others are printed on their
  own lines before the line. This keeps two trailing comments from merging into one.
- Comments keep their relative order, except that a comment travels with its clause when
  the formatter reorders the clauses of a `kind` (attributes before edges) or of a
  `transitions` declaration (the clause order above).
- Blank lines between comments are not kept.
- The AST keeps no position for a `source` note. A note that ends its declaration (in a
  `const`, `metric`, `code`, or a `kind` without members) is on the declaration's last
  line. Otherwise its line is inferred: the line of a trailing comment between the head
  and the first clause, else the first line in between that holds no comment, else the
  head's last line. Likewise the `require` and `total` clauses are placed at the line of
  their expression, `else reject` at the line of its code, `initial`, `terminal` and
  `settlement` at the lines of the states they name. Text the formatter wrote itself
  always gets its comments back in the same places, so formatting is idempotent.

`format_declaration` gives the same lines as `format_rule_file` for one declaration, with
no comments and no final newline.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from engine.syntax import ast

__all__ = ["format_declaration", "format_expr", "format_rule_file"]

_INDENT = "  "
_TRAILING_GAP = "  "

# Precedence levels, loosest to tightest.
_CONDITIONAL = 0
_OR = 1
_AND = 2
_NOT = 3
_COMPARE = 4
_ADD = 5
_MUL = 6
_NEG = 7
_POSTFIX = 8

_ADDITIVE = frozenset({"+", "-"})
_MULTIPLICATIVE = frozenset({"*", "/"})
_MEMBERSHIP = frozenset({"in", "not in"})
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}


# ---- public API ----------------------------------------------------------------------------


def format_rule_file(rule_file: ast.RuleFile) -> str:
    """Canonical text of a parsed rule file, comments preserved.

    Args:
        rule_file: A rule file as `parse_text` returns it (spans are used to place comments).

    Returns:
        The canonical text, ending with exactly one newline.

    Raises:
        ValueError: If the AST holds something no rule text can express (see `format_expr`).
    """
    comments = rule_file.comments
    blocks = [_header_block(rule_file)]
    blocks += [_declaration_block(decl, comments) for decl in rule_file.declarations]

    # Number the printed lines of all blocks and collect the pieces in source order.
    line_texts: list[str] = []
    line_blocks: list[int] = []
    pieces: list[_Piece] = []
    for block_index, block in enumerate(blocks):
        offset = len(line_texts)
        line_texts += block.lines
        line_blocks += [block_index] * len(block.lines)
        pieces += [piece.moved(offset, len(pieces)) for piece in block.pieces]
    pieces.sort(key=lambda piece: (piece.line, piece.column, piece.order))

    attached = _attach(comments, pieces)
    eof = len(pieces)
    per_line: dict[int, list[ast.Comment]] = {}
    at_end: list[ast.Comment] = []
    for comment, piece_index in zip(comments, attached, strict=True):
        if piece_index == eof:
            at_end.append(comment)
        else:
            per_line.setdefault(pieces[piece_index].target, []).append(comment)

    rendered: list[list[str]] = [[] for _ in blocks]
    for index, text in enumerate(line_texts):
        rendered[line_blocks[index]] += _with_comments(text, per_line.get(index, []))
    if at_end:
        rendered.append([comment.text for comment in at_end])
    return "\n\n".join("\n".join(lines) for lines in rendered) + "\n"


def format_declaration(decl: ast.Declaration) -> str:
    """Canonical text of one declaration, without comments (used in locks and `rulecheck show`).

    Args:
        decl: Any declaration.

    Returns:
        The declaration's lines joined by newlines, with no final newline.

    Raises:
        ValueError: If the AST holds something no rule text can express (see `format_expr`).
    """
    return "\n".join(_declaration_block(decl, ()).lines)


def format_expr(expr: ast.Expr) -> str:
    """Canonical one-line text of an expression with minimal parentheses.

    Args:
        expr: Any expression.

    Returns:
        The expression on one line.

    Raises:
        ValueError: For a `BoolOp` without operands, an unknown operator, or a number without
            a spelling whose value has no finite decimal form. (A `BoolOp` with one operand
            prints as that operand, and a unary minus of a number literal prints as the
            negative literal, which is how the parser reads such text back.)
    """
    return _expr(expr)[0]


# ---- expressions -----------------------------------------------------------------------


def _expr(expr: ast.Expr) -> tuple[str, int]:
    """The text of `expr` and the precedence level of its outermost operator."""
    if isinstance(expr, ast.Number):
        return _number(expr)
    if isinstance(expr, ast.String):
        return _quote(expr.value), _POSTFIX
    if isinstance(expr, ast.Bool):
        return ("true" if expr.value else "false"), _POSTFIX
    if isinstance(expr, ast.Null):
        return "null", _POSTFIX
    if isinstance(expr, ast.Name):
        return expr.id, _POSTFIX
    if isinstance(expr, ast.Attribute):
        return f"{_operand(expr.target, _POSTFIX)}.{expr.name}", _POSTFIX
    if isinstance(expr, ast.Navigate):
        arrow = "->" if expr.outgoing else "<-"
        return f"{_operand(expr.target, _POSTFIX)} {arrow} {expr.label}", _POSTFIX
    if isinstance(expr, ast.Call):
        return f"{expr.func}({_items(expr.args)})", _POSTFIX
    if isinstance(expr, ast.Quantifier):
        body = "" if expr.body is None else f": {format_expr(expr.body)}"
        head = _range(expr.var, expr.source, expr.where)
        return f"{expr.op}({head}{body})", _POSTFIX
    if isinstance(expr, ast.Aggregate):
        head = _range(expr.var, expr.source, expr.where)
        return f"{expr.op}({format_expr(expr.element)} for {head})", _POSTFIX
    if isinstance(expr, ast.Count):
        return f"count({_range(expr.var, expr.source, expr.where)})", _POSTFIX
    if isinstance(expr, ast.Select):
        return f"select({_range(expr.var, expr.source, expr.where)})", _POSTFIX
    if isinstance(expr, ast.SetLiteral):
        return "{" + _items(expr.items) + "}", _POSTFIX
    if isinstance(expr, ast.MapLiteral):
        entries = ", ".join(f"{_quote(key)}: {format_expr(value)}" for key, value in expr.entries)
        return "{" + entries + "}", _POSTFIX
    if isinstance(expr, ast.Unary):
        return _unary(expr)
    if isinstance(expr, ast.Binary):
        return _binary(expr)
    if isinstance(expr, ast.Conditional):
        then = format_expr(expr.then)
        if isinstance(expr.then, ast.Conditional):  # `then if .. else ..` reads ambiguously
            then = f"({then})"
        parts = (format_expr(expr.condition), then, format_expr(expr.otherwise))
        return "if {} then {} else {}".format(*parts), _CONDITIONAL
    return _bool_op(expr)


def _operand(expr: ast.Expr, level: int) -> str:
    """`expr` as an operand that must bind at least as tightly as `level`."""
    text, own = _expr(expr)
    return f"({text})" if own < level else text


def _items(items: Sequence[ast.Expr]) -> str:
    return ", ".join(format_expr(item) for item in items)


def _range(var: str, source: ast.Expr, where: ast.Expr | None) -> str:
    """`var in source where filter`, shared by quantifiers, aggregates and `count`."""
    text = f"{var} in {format_expr(source)}"
    return text if where is None else f"{text} where {format_expr(where)}"


def _unary(expr: ast.Unary) -> tuple[str, int]:
    if expr.op == "not":
        return f"not {_operand(expr.operand, _NOT)}", _NOT
    if expr.op == "-":
        operand = _operand(expr.operand, _NEG)
        gap = " " if operand.startswith("-") else ""
        return f"-{gap}{operand}", _NEG
    raise ValueError(f"unknown unary operator {expr.op!r}")


def _binary(expr: ast.Binary) -> tuple[str, int]:
    if expr.op in ast.COMPARISONS or expr.op in _MEMBERSHIP:
        level, left_level, right_level = _COMPARE, _ADD, _ADD
    elif expr.op in _ADDITIVE:
        level, left_level, right_level = _ADD, _ADD, _MUL
    elif expr.op in _MULTIPLICATIVE:
        level, left_level, right_level = _MUL, _MUL, _NEG
    else:
        raise ValueError(f"unknown binary operator {expr.op!r}")
    left = _operand(expr.left, left_level)
    right = _operand(expr.right, right_level)
    return f"{left} {expr.op} {right}", level


def _bool_op(expr: ast.BoolOp) -> tuple[str, int]:
    if expr.op == "or":
        level = _OR
    elif expr.op == "and":
        level = _AND
    else:
        raise ValueError(f"unknown boolean operator {expr.op!r}")
    if not expr.operands:
        raise ValueError(f"`{expr.op}` without operands")
    if len(expr.operands) == 1:
        return _expr(expr.operands[0])
    # Operands of `or` are `and` expressions, operands of `and` are `not` expressions.
    return f" {expr.op} ".join(_operand(item, level + 1) for item in expr.operands), level


def _number(number: ast.Number) -> tuple[str, int]:
    text = number.text or decimal_spelling(number.value)
    signs = len(text) - len(text.lstrip("-"))
    if signs > 1:  # `- -3` is kept as one literal spelled "--3"; print it as `- -3`
        text = "- " * (signs - 1) + text[signs - 1 :]
    if number.unit is not None:
        text = f"{text} {number.unit}"
    return text, (_NEG if text.startswith("-") else _POSTFIX)


def decimal_spelling(value: Fraction) -> str:
    """The plain decimal spelling of `value`, exact (for numbers built without a spelling).

    Raises:
        ValueError: `value` has no finite decimal spelling (such as 1/3).
    """
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    if magnitude.denominator == 1:
        return f"{sign}{magnitude.numerator}"
    rest, twos, fives = magnitude.denominator, 0, 0
    while rest % 2 == 0:
        rest, twos = rest // 2, twos + 1
    while rest % 5 == 0:
        rest, fives = rest // 5, fives + 1
    if rest != 1:
        raise ValueError(f"{value} has no finite decimal spelling")
    places = max(twos, fives)
    scaled = (magnitude * 10**places).numerator
    digits = str(scaled).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def _quote(value: str) -> str:
    return '"' + "".join(_ESCAPES.get(char, char) for char in value) + '"'


# ---- declarations ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Piece:
    """A part of the source (a head, a note, a clause) and the printed line that shows it.

    `line`/`column` are where the part starts in the source; `end_line` is its last line
    (as far as the AST tells); `target` indexes the printed lines; `order` breaks ties
    between parts that start at the same position.
    """

    line: int
    column: int
    end_line: int
    target: int
    order: int

    def moved(self, offset: int, first: int) -> _Piece:
        """This piece with its printed line shifted by `offset` and its order by `first`."""
        target, order = self.target + offset, self.order + first
        return _Piece(self.line, self.column, self.end_line, target, order)


@dataclass(slots=True)
class _Block:
    """The printed lines of a header or declaration, and the source pieces they show."""

    lines: list[str]
    pieces: list[_Piece]

    def add(self, text: str, indent: bool = True) -> int:
        """Append a printed line (indented as a clause unless `indent` is False)."""
        self.lines.append((_INDENT if indent else "") + text)
        return len(self.lines) - 1

    def piece(self, target: int, span: ast.Span, end_line: int | None = None) -> None:
        """Record that the part of the source starting at `span` prints on line `target`."""
        end = span.end_line if end_line is None else end_line
        self.pieces.append(_Piece(span.line, span.column, end, target, len(self.pieces)))


def _header_block(rule_file: ast.RuleFile) -> _Block:
    block = _Block([], [])
    line = block.add(f"ruleset {rule_file.name.text} version {_quote(rule_file.version)}", False)
    start = rule_file.span if rule_file.span.line > 0 else rule_file.name.span
    block.piece(line, start, rule_file.name.span.end_line)
    return block


def _head(decl: ast.Declaration) -> tuple[str, ast.Span]:
    """The head line of `decl` and the span of the last token the AST locates in it."""
    name = decl.name.text
    if isinstance(decl, ast.ConstDecl):
        return f"const {name} = {format_expr(decl.value)}", decl.value.span
    if isinstance(decl, ast.MetricDecl):
        params = ", ".join(f"{param.name.text}: {param.type.text}" for param in decl.params)
        return f"metric {name}({params}) = {format_expr(decl.body)}", decl.body.span
    if isinstance(decl, ast.KindDecl):
        graphs = ", ".join(graph.text for graph in decl.graphs)
        return f"kind {name} of {graphs}", decl.graphs[-1].span
    if isinstance(decl, ast.CodeDecl):
        return f"code {name} {_quote(decl.message)}", decl.name.span
    return f"{ast.declaration_kind(decl)} {name}", decl.name.span


def _declaration_block(decl: ast.Declaration, comments: Sequence[ast.Comment]) -> _Block:
    """The printed lines of `decl` and its pieces (`comments` help place its note)."""
    block = _Block([], [])
    head_text, head_end = _head(decl)
    head = block.add(head_text, False)
    block.piece(head, decl.span, head_end.end_line)
    note = None if decl.note is None else block.add(f"source {_quote(decl.note)}")
    _clauses(decl, block)
    if note is not None:
        clauses = block.pieces[1:]
        if clauses:
            first = min(piece.line for piece in clauses)
            line = _note_line(head_end.end_line, first, comments)
            column = head_end.end_column if line == head_end.end_line else 0
        else:  # the note is the last thing in the declaration
            line, column = decl.span.end_line, max(decl.span.end_column - 1, 0)
        block.pieces.append(_Piece(line, column, line, note, len(block.pieces)))
    return block


def _note_line(head_end: int, first_clause: int, comments: Sequence[ast.Comment]) -> int:
    """The inferred line of a `source` note written between a head and its first clause."""
    between = [c for c in comments if head_end < c.line < first_clause]
    for comment in between:
        if not comment.own_line:
            return comment.line
    taken = {comment.line for comment in between}
    for line in range(head_end + 1, first_clause):
        if line not in taken:
            return line
    return head_end


def _clauses(decl: ast.Declaration, block: _Block) -> None:
    """Append the clause lines of `decl` after its head and note."""
    if isinstance(decl, ast.KindDecl):
        for records in decl.records:
            pointers = ", ".join(_quote(pointer) for pointer in records.pointers)
            optional = " optional" if records.optional else ""
            line = block.add(f"records {records.document.text} {pointers}{optional}")
            block.piece(line, records.span)
        if decl.key is not None:
            block.piece(block.add(f"key {decl.key.text}"), decl.key.span)
        for attr in decl.attrs:
            as_text = " as text" if attr.as_text else ""
            line = block.add(f"attr {attr.name.text}: {attr.type.text}{as_text}")
            block.piece(line, attr.span)
        for edge in decl.edges:
            text = f"edge {edge.label.text} -> {_names(edge.targets)}"
            line = block.add(f"within {_names(edge.targets)}" if edge.within else text)
            block.piece(line, edge.span)
    elif isinstance(decl, ast.LinkDecl | ast.GateDecl | ast.BudgetDecl):
        for binding in decl.bindings:
            text = f"for {binding.var.text} in {format_expr(binding.source)}"
            if binding.where is not None:
                text += f" where {format_expr(binding.where)}"
            block.piece(block.add(text), binding.span)
        if isinstance(decl, ast.BudgetDecl):
            _budget_clauses(decl, block)
        else:
            block.piece(block.add(f"require {format_expr(decl.require)}"), decl.require.span)
        if isinstance(decl, ast.LinkDecl):
            block.piece(block.add(f"else reject {decl.code.text}"), decl.code.span)
    elif isinstance(decl, ast.TableDecl):
        for binding in decl.bindings:
            text = f"for {binding.var.text} in {format_expr(binding.source)}"
            if binding.where is not None:
                text += f" where {format_expr(binding.where)}"
            block.piece(block.add(text), binding.span)
        for column in decl.columns:
            line = block.add(f"column {column.name.text} = {format_expr(column.expr)}")
            block.piece(line, column.span)
    elif isinstance(decl, ast.DecisionDecl):
        for row in decl.rows:
            if row.condition is None:
                text = f"otherwise => {row.verdict.text}"
            else:
                text = f"when {format_expr(row.condition)} => {row.verdict.text}"
            block.piece(block.add(text), row.span)
    elif isinstance(decl, ast.TransitionsDecl):
        _transition_clauses(decl, block)
    elif isinstance(decl, ast.ProtocolDecl):
        _protocol_clauses(decl, block)


def _budget_clauses(decl: ast.BudgetDecl, block: _Block) -> None:
    ledger = decl.ledger
    text = f"ledger {ledger.var.text} in {format_expr(ledger.source)}"
    if ledger.where is not None:
        text += f" where {format_expr(ledger.where)}"
    text += f" order by {format_expr(ledger.order)}"
    block.piece(block.add(text), ledger.span)
    total = _operand(decl.total, _ADD)
    ceiling = _operand(decl.ceiling, _ADD)
    reserve = "" if decl.reserve is None else f" reserving {_operand(decl.reserve, _ADD)}"
    line = block.add(f"total {total}{reserve} {decl.op} {ceiling}")
    block.piece(line, decl.total.span, decl.ceiling.span.end_line)


def _transition_clauses(decl: ast.TransitionsDecl, block: _Block) -> None:
    block.piece(block.add(f"initial {decl.initial.text}"), decl.initial.span)
    for keyword, states in (("terminal", decl.terminal), ("settlement", decl.settlement)):
        if states:
            line = block.add(f"{keyword} {_names(states)}")
            for state in states:
                block.piece(line, state.span)
    for event in decl.events:
        line = block.add(f"event {event.name.text} applies {_names(event.applies)}")
        block.piece(line, event.span)
    for move in decl.moves:
        text = f"from {move.source.text} on {move.event.text} to {move.target.text}"
        block.piece(block.add(text), move.span)
    for outcome in decl.outcomes:
        text = f"outcome {outcome.state.text} => {outcome.result.text}"
        block.piece(block.add(text), outcome.span)
    for policy in decl.policies:
        text = f"policy {policy.outcome.text} from {policy.source.text} via {_names(policy.events)}"
        block.piece(block.add(text), policy.span)
    replay = decl.replay
    if replay is not None:
        text = (
            f"replay {replay.kind.text} by {replay.entity.text} on {replay.event.text} "
            f"order {replay.order.text}"
        )
        if replay.where is not None and replay.where_value is not None:
            text += f" where {replay.where.text} is {_quote(replay.where_value)}"
        text += f" key {replay.key.text}" if replay.key else ""
        text += f" over {_names(replay.over)}" if replay.over else ""
        text += f" version {replay.version.text}" if replay.version else ""
        text += f" ledger {replay.ledger.text}" if replay.ledger else ""
        block.piece(block.add(text), replay.span)


def _protocol_clauses(decl: ast.ProtocolDecl, block: _Block) -> None:
    for graph in decl.graph:
        block.piece(block.add(f"graph {graph.text}"), graph.span)
    for document in decl.documents:
        if document.table is not None:
            text = f"document {document.name.text} from table {document.table.text}"
            block.piece(block.add(text), document.span)
            continue
        if document.given:
            text = f"document {document.name.text} given" + " optional" * document.optional
            block.piece(block.add(text), document.span)
            continue
        text = (
            f"document {document.name.text} path {_quote(document.path)} "
            f"format {document.format.text}"
        )
        if document.schema is not None:
            text += f" schema {_quote(document.schema)}"
            if document.schema_code is not None:
                text += f" else reject {document.schema_code.text}"
        text += " measured" * document.measured + " optional" * document.optional
        block.piece(block.add(text), document.span)
    for keyword, idents in (("admission", decl.admission), ("verdict", decl.verdict)):
        for ident in idents:
            block.piece(block.add(f"{keyword} {ident.text}"), ident.span)
    for banner in decl.banners:
        text = f"banner {_quote(banner.text)} when {banner.gate.text}"
        block.piece(block.add(text), banner.span)
    for seal in decl.seals:
        text = f"seal {seal.table.text} into {seal.document.text}"
        block.piece(block.add(text), seal.span)
    for freeze in decl.freezes:
        text = (
            f"freeze {freeze.table.text} into {freeze.document.text} at "
            f"{_quote(freeze.pointer)} before {freeze.before.text}"
        )
        block.piece(block.add(text), freeze.span)
    if decl.report:
        line = block.add(f"report {_names(decl.report)}")
        for ident in decl.report:
            block.piece(line, ident.span)


def _names(idents: Sequence[ast.Ident]) -> str:
    return ", ".join(ident.text for ident in idents)


# ---- comments --------------------------------------------------------------------------


def _attach(comments: Sequence[ast.Comment], pieces: Sequence[_Piece]) -> list[int]:
    """For each comment, the index of the piece it belongs to (`len(pieces)`: end of file).

    `pieces` must be sorted by source position.
    """
    starts = [piece.line for piece in pieces]
    eof = len(pieces)
    attached: list[int] = []
    for comment in comments:
        if comment.own_line:
            before = bisect.bisect_left(starts, comment.line)  # pieces starting above it
            index = before  # by default, the next piece
            for candidate in range(before - 1, -1, -1):
                if pieces[candidate].end_line > comment.line:
                    index = candidate  # it sits inside a multi-line piece
                    break
        else:
            index = max(bisect.bisect_right(starts, comment.line) - 1, 0)
        attached.append(min(index, eof))
    # Keep the comments in order even where the spans tell an inconsistent story.
    for position in range(len(attached) - 2, -1, -1):
        attached[position] = min(attached[position], attached[position + 1])
    return attached


def _with_comments(line: str, comments: Sequence[ast.Comment]) -> list[str]:
    """`line` with the comments attached to it: own-line ones above, a trailing one after."""
    indent = line[: len(line) - len(line.lstrip(" "))]
    above = list(comments)
    trailing = ""
    if above and not above[-1].own_line:
        trailing = _TRAILING_GAP + above.pop().text
    return [indent + comment.text for comment in above] + [line + trailing]
