"""Link rules: structural requirements whose failures are typed rejections."""

from __future__ import annotations

from dataclasses import dataclass

from engine.evaluate.bindings import describe_binding
from engine.evaluate.compile import Compiler, Context, Env, Failures, RuleRun
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


@dataclass(frozen=True, slots=True)
class CompiledLink:
    """A link rule ready to run on any graph of its kind."""

    name: str
    hash: str
    code: str
    message: str
    function: RuleRun


def compile_link(compiler: Compiler, decl: ast.LinkDecl, rule_hash: str) -> CompiledLink:
    """Compile a link rule with its reject code's message."""
    code = compiler.symbols.codes[decl.code.text]
    return CompiledLink(
        decl.name.text, rule_hash, decl.code.text, code.message, compiler.link_function(decl)
    )


def run_link(
    link: CompiledLink, ctx: Context, subject_document: str | frozenset[str] | None = None
) -> tuple[list[Violation], int]:
    """Every violation of one link rule on one graph, and how many bindings it checked.

    A binding that cannot be evaluated is a violation of its own, located like the others,
    and the rule goes on with the next binding. Violations are located in
    `subject_document` (the input under check) where possible.
    """
    failed: list[Env] = []
    errors: Failures = []
    bound = link.function(ctx, _NO_ENV, None, failed, errors)
    if not failed and not errors:  # the common case, on the per-answer hot path
        return [], bound
    violations = [_violation(link, env, ctx, subject_document) for env in failed]
    violations += [
        _violation(link, env, ctx, subject_document, f"rule could not be evaluated: {message}")
        for env, message in errors
    ]
    return violations, bound


def _violation(
    link: CompiledLink,
    env: Env,
    ctx: Context,
    subject_document: str | frozenset[str] | None,
    error: str | None = None,
) -> Violation:
    ids, document, pointer = describe_binding(env, ctx, subject_document)
    code, message = (link.code, link.message) if error is None else (EVALUATION_ERROR, error)
    return Violation(code, message, link.name, link.hash, ids, document, pointer)
