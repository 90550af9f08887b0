"""Link rules: structural requirements whose failures are typed rejections."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from engine.evaluate.bindings import describe_binding
from engine.evaluate.compile import Compiler, Context, Env, GroupRun, clause_key
from engine.limits import MAX_FINDINGS
from engine.syntax import ast

EVALUATION_ERROR = "RULE_EVALUATION_ERROR"
_NO_ENV: Env = {}  # a link rule binds every variable itself: nothing free, never written


@dataclass(frozen=True, slots=True)
class Violation:
    """One failed binding of a link rule: what failed, which rule decided, where in the data."""

    code: str
    message: str
    rule: str
    rule_hash: str
    ids: tuple[str, ...]
    document: str | None
    pointer: str | None
    # A rule lists at most `MAX_FINDINGS` violations; then one more, never located, stands
    # for the `more` it does not list. 0 for a violation listed.
    more: int = 0


def violation_total(violations: Sequence[Violation]) -> int:
    """How many violations these are, those not listed included."""
    return sum(v.more or 1 for v in violations)


@dataclass(frozen=True, slots=True)
class CompiledLink:
    """A link rule ready to run on any graph of its kind."""

    name: str
    hash: str
    code: str
    message: str
    decl: ast.LinkDecl = field(repr=False, compare=False)
    compiler: Compiler = field(repr=False, compare=False)
    _alone: list[GroupRun] = field(default_factory=list, init=False, repr=False, compare=False)

    @property
    def function(self) -> GroupRun:
        """The rule as a group of one (`Compiler.link_group`), compiled when first asked
        for: a rule that shares its loop runs in its group's function, never in this one."""
        if not self._alone:
            self._alone.append(self.compiler.link_group((self.decl,)))
        return self._alone[0]


def compile_link(compiler: Compiler, decl: ast.LinkDecl, rule_hash: str) -> CompiledLink:
    """A link rule with its reject code's message, ready to be compiled alone or in a
    group (`group_links`)."""
    code = compiler.symbols.codes[decl.code.text]
    return CompiledLink(decl.name.text, rule_hash, decl.code.text, code.message, decl, compiler)


Subject = str | frozenset[str] | None
Found = tuple[list[Violation], int]  # a link rule's violations, and how many bindings it checked


@dataclass(frozen=True, slots=True)
class LinkGroup:
    """Link rules run by one function: those whose first `for` clause binds the same
    variable to the same source, in one loop (`Compiler.link_group`), or a rule alone.
    `positions` are the rules' places in the sequence they were grouped from."""

    links: tuple[CompiledLink, ...]
    positions: tuple[int, ...]
    function: GroupRun


def group_links(
    compiler: Compiler, links: Sequence[CompiledLink], together: Callable[[str], bool]
) -> tuple[LinkGroup, ...]:
    """`links` in groups that share their first clause, each group where its first rule
    is. Only rules for which `together(name)` holds are grouped (a rule that reads another
    rule's result must run in its place)."""
    members: dict[object, list[int]] = {}
    for position, link in enumerate(links):
        first = link.decl.bindings[0]
        key: object = position
        if together(link.name):
            key = clause_key(first)
        members.setdefault(key, []).append(position)
    groups = []
    for positions in members.values():
        grouped = tuple(links[p] for p in positions)
        if len(grouped) > 1:
            function = compiler.link_group(tuple(link.decl for link in grouped))
        else:
            function = grouped[0].function
        groups.append(LinkGroup(grouped, tuple(positions), function))
    return tuple(groups)


def run_group(group: LinkGroup, ctx: Context, subject: Subject) -> list[Found]:
    """What each rule of a group finds on one graph, in the group's order: for each, what
    `run_link` finds."""
    failed: list[tuple[int, Env]] = []
    errors: list[tuple[int, Env, str]] = []
    counts = group.function(ctx, _NO_ENV, failed, errors)
    found: list[Found] = [([], count) for count in counts]
    for k, violation in _group_violations(group, failed, errors, ctx, subject):
        found[k][0].append(violation)
    return found


def link_violations(groups: Sequence[LinkGroup], ctx: Context, subject: Subject) -> list[Violation]:
    """Every violation of the grouped link rules on one graph, rule by rule in the order
    they were grouped from, each rule's as `run_link` finds them (the per-answer path:
    one pair of lists for every group, most of which find nothing)."""
    failed: list[tuple[int, Env]] = []
    errors: list[tuple[int, Env, str]] = []
    found: list[tuple[int, Violation]] = []
    for group in groups:
        group.function(ctx, _NO_ENV, failed, errors)
        if failed or errors:
            violations = _group_violations(group, failed, errors, ctx, subject)
            found += [(group.positions[k], violation) for k, violation in violations]
            failed.clear()
            errors.clear()
    found.sort(key=lambda entry: entry[0])  # stable: each rule's in the order found
    return [violation for _position, violation in found]


def _group_violations(
    group: LinkGroup,
    failed: list[tuple[int, Env]],
    errors: list[tuple[int, Env, str]],
    ctx: Context,
    subject: Subject,
) -> list[tuple[int, Violation]]:
    """The violations of a group's rules, each with its rule's index in the group: all the
    failed bindings, then all the bindings that could not be evaluated, each in the order
    found (the callers take them rule by rule, so each rule's failures come before its
    errors)."""
    links = group.links
    seen = [0] * len(links)
    found = []
    failures = ((k, env, None) for k, env in failed)
    for k, env, message in itertools.chain(failures, errors):
        seen[k] += 1
        if seen[k] <= MAX_FINDINGS:
            why = None if message is None else f"rule could not be evaluated: {message}"
            found.append((k, _violation(links[k], env, ctx, subject, why)))
    for k, count in enumerate(seen):
        if count > MAX_FINDINGS:  # a million failed bindings would be a million findings
            link, more = links[k], count - MAX_FINDINGS
            message = f"{more:,} more violations of this rule are not listed ({count:,} in all)"
            found.append(
                (k, Violation(link.code, message, link.name, link.hash, (), None, None, more))
            )
    return found


def run_link(link: CompiledLink, ctx: Context, subject_document: Subject = None) -> Found:
    """Every violation of one link rule on one graph, and how many bindings it checked.

    A binding that cannot be evaluated is a violation of its own, located like the others,
    and the rule goes on with the next binding. Violations are located in
    `subject_document` (the input under check) where possible.
    """
    return run_group(LinkGroup((link,), (0,), link.function), ctx, subject_document)[0]


def _violation(
    link: CompiledLink,
    env: Env,
    ctx: Context,
    subject_document: Subject,
    error: str | None = None,
) -> Violation:
    ids, document, pointer = describe_binding(env, ctx, subject_document)
    code, message = (link.code, link.message) if error is None else (EVALUATION_ERROR, error)
    return Violation(code, message, link.name, link.hash, ids, document, pointer)
