"""Link rules: structural requirements whose failures are typed rejections."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.evaluate.bindings import describe_binding
from engine.evaluate.compile import Compiler, Context, LinkRun
from engine.syntax import ast

EVALUATION_ERROR = "RULE_EVALUATION_ERROR"


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
    function: Callable[[Context], LinkRun]


def compile_link(compiler: Compiler, decl: ast.LinkDecl, rule_hash: str) -> CompiledLink:
    """Compile a link rule with its reject code's message."""
    code = compiler.symbols.codes[decl.code.text]
    return CompiledLink(
        decl.name.text, rule_hash, decl.code.text, code.message, compiler.link_function(decl)
    )


def run_link(
    link: CompiledLink, ctx: Context, subject_document: str | frozenset[str] | None = None
) -> list[Violation]:
    """Every violation of one link rule on one graph; evaluation errors are violations too.

    Violations are located in `subject_document` (the input under check) where possible.
    """
    failed, errors, fatal = link.function(ctx)
    violations = []
    for env in failed:
        ids, document, pointer = describe_binding(env, ctx, subject_document)
        violations.append(
            Violation(link.code, link.message, link.name, link.hash, ids, document, pointer)
        )
    for env, message in errors:
        ids, document, pointer = describe_binding(env, ctx, subject_document)
        violations.append(
            Violation(
                EVALUATION_ERROR,
                f"rule could not be evaluated: {message}",
                link.name,
                link.hash,
                ids,
                document,
                pointer,
            )
        )
    if fatal is not None:
        violations.append(
            Violation(
                EVALUATION_ERROR,
                f"rule could not be evaluated: {fatal}",
                link.name,
                link.hash,
                (),
                None,
                None,
            )
        )
    return violations
