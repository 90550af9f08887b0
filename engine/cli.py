"""The `rulecheck` command line: one thin function per command, no logic of its own."""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

import click

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError, unwritable
from engine.evaluate.alias import FilesAlias
from engine.gcpolicy import collector_paused
from engine.report.diagnostics import diagnostic_json, render_all_text
from engine.report.output import json_chunks, to_json
from engine.resources import shipped_rules_dir

if TYPE_CHECKING:
    from engine.evaluate.inputs import GraphResult
    from engine.evaluate.program import Program

P = ParamSpec("P")
R = TypeVar("R")

format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
report_format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="Output format (markdown for long reports).",
)
# The CI and review formats (engine/report/ci.py) of every command that judges something.
CI_FORMATS = ["junit", "sarif", "github"]
judged_format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", *CI_FORMATS]),
    default="text",
    show_default=True,
    help="Output format (junit, sarif or github for CI and code review).",
)
judged_report_format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "markdown", "html", *CI_FORMATS]),
    default="text",
    show_default=True,
    help="Output format (markdown or a self-contained html page for long reports; junit, "
    "sarif or github for CI).",
)
rules_option = click.option(
    "--rules",
    "rules",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Rule files or folders (default: the shipped rules).",
)

lock_option = click.option(
    "--lock",
    "lock",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A rules lock (`rulecheck freeze`): refuse the run (exit 1) when the rules "
    "loaded differ from it.",
)

strict_option = click.option(
    "--strict",
    is_flag=True,
    help=(
        "Fail (exit 1) on a warning: a link rule, gate or budget that binds nothing "
        "(VACUOUS), an attribute no record holds beside a near name (ATTR_ABSENT)."
    ),
)

protocol_option = click.option(
    "--protocol",
    "protocol_name",
    metavar="NAME",
    help="The protocol of the rules to check the bundle against (default: the one the "
    "bundle's rulecheck.yaml names).",
)

out_option = click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the report to this file instead of stdout (missing folders are created).",
)

verbose_option = click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Text and markdown: the long report after its first screen (what it adds is in the "
    "command's help).",
)
exact_option = click.option(
    "--exact", is_flag=True, help="Text and markdown: exact fractions beside rounded values."
)

quiet_option = click.option(
    "--quiet", "-q", is_flag=True, help="No progress bar on stderr (drawn only on a terminal)."
)


@dataclass(frozen=True)
class Reading:
    """How a report is read (`--verbose`, `--exact`) and whether a progress bar is drawn
    (`--quiet` never draws one)."""

    verbose: bool = False
    exact: bool = False
    quiet: bool = False


Decorator = Callable[[Callable[..., None]], Callable[..., None]]


@overload
def reading_options(func: Callable[..., None]) -> Callable[..., None]: ...


@overload
def reading_options(
    func: None = None, *, verbose: bool = True, exact: bool = True, quiet: bool = True
) -> Decorator: ...


def reading_options(
    func: Callable[..., None] | None = None,
    *,
    verbose: bool = True,
    exact: bool = True,
    quiet: bool = True,
) -> Callable[..., None] | Decorator:
    """`--verbose`, `--exact` and `--quiet`, the same on every command that writes a
    report, handed to the command as one `reading` argument. A command is given only the
    flags that change its report (`@reading_options(exact=False)` where it shows no
    rounded number): a flag that did nothing would be a silent pass."""
    flags = [
        (name, option)
        for name, option, wanted in (
            ("verbose", verbose_option, verbose),
            ("exact", exact_option, exact),
            ("quiet", quiet_option, quiet),
        )
        if wanted
    ]

    def decorate(command_func: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(command_func)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            given = {name: bool(kwargs.pop(name, False)) for name, _ in flags}
            command_func(*args, reading=Reading(**given), **kwargs)

        decorated: Callable[..., None] = wrapper
        for _, option in reversed(flags):
            decorated = option(decorated)
        return decorated

    return decorate(func) if func is not None else decorate


paths_argument = click.argument(
    "paths", nargs=-1, type=click.Path(path_type=Path, dir_okay=True, file_okay=True)
)


def _suite() -> str:
    """The command as a CI report names it: `rulecheck check BUNDLE`, say."""
    context = click.get_current_context(silent=True)
    if context is None:
        return "rulecheck"
    shown = []
    for param in context.command.params:
        if isinstance(param, click.Argument) and param.name:
            value = context.params.get(param.name)
            shown += [str(v) for v in (value if isinstance(value, tuple) else (value,))]
    return " ".join([context.command_path, *shown])


def _ci_text(output_format: str, report: Any) -> str:
    from engine.report.ci import render

    return render(output_format, report)


def _emit_failure(
    diagnostics: tuple[Diagnostic, ...], output_format: str, out: Path | None
) -> None:
    """Report a refused run; in a CI format to `--out` when given, so CI finds the report
    it was told to read even when the run never judged anything."""
    if output_format in CI_FORMATS:
        from engine.report.ci import failure_report

        text = _ci_text(output_format, failure_report(_suite(), diagnostics))
        if out is not None:
            try:
                _write_output(out, text)
                click.echo(render_all_text(diagnostics), err=True)
                return
            except RulecheckError:
                pass  # the report cannot go where asked: it still goes to stdout
        click.echo(text, nl=False)
    elif output_format == "json":
        click.echo(
            to_json({"ok": False, "diagnostics": [diagnostic_json(d) for d in diagnostics]}),
            nl=False,
        )
    else:
        click.echo(render_all_text(diagnostics), err=True)


def command(func: Callable[P, int]) -> Callable[P, None]:
    """Run a command body; turn RulecheckError and any crash into a located report + exit code."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        output_format = str(kwargs.get("output_format", "text"))
        out = kwargs.get("out")
        try:
            code = func(*args, **kwargs)
        except RulecheckError as error:
            _emit_failure(error.diagnostics, output_format, out if isinstance(out, Path) else None)
            sys.exit(int(error.exit_code))
        except (KeyboardInterrupt, click.exceptions.Exit, click.ClickException):
            raise
        except Exception as error:  # a bug: report it without a traceback
            diagnostic = Diagnostic(
                "INTERNAL_ERROR", f"rulecheck failed unexpectedly: {type(error).__name__}: {error}"
            )
            _emit_failure((diagnostic,), output_format, None)
            sys.exit(int(ExitCode.USAGE))
        sys.exit(code)

    return wrapper


def _default_paths(paths: tuple[Path, ...]) -> list[Path]:
    return list(paths) if paths else [shipped_rules_dir()]


def _new_file_mode() -> int:
    """The mode `open()` would give a new file: 0666 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _write_atomically(path: Path, text: str | Sequence[str]) -> None:
    """Write `text` (or its chunks, one after the other) to `path` so a crash never leaves
    a half-written file. Missing parent folders are created; a file rewritten keeps its
    mode, a new one gets the umask's."""
    directory = path.parent if str(path.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = _new_file_mode()
    import tempfile  # only a command writing a file needs it (and its shutil, random)

    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(handle, mode)  # mkstemp makes it 0600 whatever the umask
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.writelines([text] if isinstance(text, str) else text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _refuse_output_over_inputs(
    out: Path | None,
    rules: Sequence[Path],
    bundle: Path | None = None,
    files: Sequence[Path] = (),
    option: str = "--out",
) -> None:
    """Exit 2 before any work when `--out` names a rule file, a schema file the rules
    read, another file the run reads (its `files`: a `--lock` among them), or a path
    inside the bundle it checks: a report must never overwrite what it was made from."""
    if out is None:
        return
    from engine.limits import output_conflict

    conflict = output_conflict(
        out,
        inputs=[*_rule_inputs(rules), *files],
        folders=[bundle] if bundle is not None else [],
        option=option,
    )
    if conflict is not None:
        raise conflict


def _given(path: Path | None) -> list[Path]:
    """An optional input file (`--lock`) as a list of the inputs it adds."""
    return [] if path is None else [path]


def _rule_inputs(rules: Sequence[Path]) -> list[Path]:
    """The rule files `rules` name and the schema files their protocols' documents are
    checked against (a file that does not parse names none: the run refuses it)."""
    from engine.check.protocols import schema_path
    from engine.syntax import ast
    from engine.syntax.load import load_rule_files, rule_paths

    named = rule_paths(list(rules))
    parsed, _problems = load_rule_files(named)
    schemas = [
        path
        for rule_file in parsed
        for decl in rule_file.declarations
        if isinstance(decl, ast.ProtocolDecl)
        for clause in decl.documents
        if (path := schema_path(clause)) is not None
    ]
    return [*named, *schemas]


def _write_output(path: Path, text: str | Sequence[str]) -> None:
    """Write a report or lock the user asked for; a path that cannot be written exits 2."""
    try:
        _write_atomically(path, text)
    except OSError as error:
        raise unwritable(str(path), error.strerror or type(error).__name__) from None


def _echo(text: str, output_format: str, data: Any, out: Path | None = None) -> None:
    """The text, or the JSON data, to stdout (or to `--out` when given)."""
    _deliver(to_json(data) if output_format == "json" else text, out)


def _progress(label: str, quiet: bool) -> Any:
    """A progress bar on stderr for the block, when stderr is a terminal and not `quiet`."""
    from engine.progress import showing_progress

    return showing_progress(sys.stderr, label, quiet)


def _deliver(text: str | Sequence[str], out: Path | None) -> None:
    """A command's report (or its chunks, one after the other: see `json_chunks`): to
    `--out` when given, else to stdout."""
    if out is None:
        for chunk in [text] if isinstance(text, str) else text:
            click.echo(chunk, nl=False)
    else:
        _write_output(out, text)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="rulecheck")
def main() -> None:
    """Check frozen experiment rules and campaign bundles, offline and deterministically."""


@main.command()
@paths_argument
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too.")
@judged_format_option
@out_option
@reading_options(exact=False, quiet=False)
@command
def lint(
    paths: tuple[Path, ...], strict: bool, output_format: str, out: Path | None, reading: Reading
) -> int:
    """Parse and statically check rule files (default: the shipped rules). `--verbose`:
    each file checked, its ruleset name and how many declarations it holds, before the
    summary."""
    from engine.ruleset import lint_paths

    _refuse_output_over_inputs(out, _default_paths(paths))
    checked, diagnostics = lint_paths(_default_paths(paths))
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    summary = (
        f"{_count(len(checked.files), 'file')}, "
        f"{_count(len(checked.declarations()), 'declaration')}: "
        + (_count(errors, "error") if errors else "ok")
        + (f" ({_count(warnings, 'warning')})" if warnings else "")
    )
    if strict and warnings and not errors:
        errors = warnings
    if output_format in CI_FORMATS:
        from engine.report.ci import lint_report

        report = lint_report(_suite(), checked, diagnostics, strict)
        _deliver(_ci_text(output_format, report), out)
    elif output_format == "json":
        data = {"ok": not errors, "diagnostics": [diagnostic_json(d) for d in diagnostics]}
        _deliver(to_json(data), out)
    else:
        if diagnostics:
            click.echo(render_all_text(diagnostics) + "\n", err=True)
        listed = (
            "".join(
                f"{f.path}: ruleset {f.name.text}, {_count(len(f.declarations), 'declaration')}\n"
                for f in checked.files
            )
            if reading.verbose
            else ""
        )
        _deliver(listed + summary + "\n", out)
    return int(ExitCode.REFUSED if errors else ExitCode.OK)


@main.command("hash")
@paths_argument
@format_option
@out_option
@command
def hash_command(paths: tuple[Path, ...], output_format: str, out: Path | None) -> int:
    """Print `<sha256>  <kind>  <name>` per declaration and the ruleset hash."""
    from engine.report.rules_report import hash_json, hash_lines
    from engine.ruleset import load_ruleset

    _refuse_output_over_inputs(out, _default_paths(paths))
    hashed = load_ruleset(_default_paths(paths)).hashed
    _echo(hash_lines(hashed), output_format, hash_json(hashed), out)
    return 0


@main.command()
@paths_argument
@click.option("--out", "out", type=click.Path(path_type=Path, dir_okay=False), required=True)
@format_option
@command
def freeze(paths: tuple[Path, ...], out: Path, output_format: str) -> int:
    """Write the rules lock (YAML) for rule files."""
    from engine.freeze.lock import dump_lock
    from engine.ruleset import load_ruleset

    _refuse_output_over_inputs(out, _default_paths(paths))
    hashed = load_ruleset(_default_paths(paths)).hashed
    _write_output(out, dump_lock(hashed))
    count = len(hashed.declarations)
    text = f"wrote {out}: {count} declarations, ruleset {hashed.ruleset_hash}\n"
    _echo(
        text,
        output_format,
        {"lock": str(out), "ruleset_hash": hashed.ruleset_hash, "declarations": count},
    )
    return 0


@main.command()
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@format_option
@out_option
@command
def diff(old: Path, new: Path, output_format: str, out: Path | None) -> int:
    """Compare two rulesets (each a rule file, a folder or a lock); exit 0 only if identical."""
    from engine.freeze.diff import diff_sides, load_side
    from engine.report.rules_report import diff_json, diff_text

    _refuse_output_over_inputs(out, [], files=[old, new])
    result = diff_sides(load_side(old), load_side(new))
    _echo(diff_text(result), output_format, diff_json(result), out)
    return int(ExitCode.OK if result.identical else ExitCode.REFUSED)


@main.command()
@paths_argument
@click.option("--check", is_flag=True, help="Exit 1 when a file is not formatted; write nothing.")
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Print a unified diff of each change (with --check, what would change).",
)
@format_option
@command
def fmt(paths: tuple[Path, ...], check: bool, show_diff: bool, output_format: str) -> int:
    """Rewrite rule files in canonical form (idempotent)."""
    from engine.syntax.format import format_rule_file
    from engine.syntax.load import rule_paths
    from engine.syntax.parse import parse_file

    targets = rule_paths(_default_paths(paths))
    parsed = [(path, parse_file(path)) for path in targets]  # parse all before writing any
    changed: list[str] = []
    diffs: dict[str, str] = {}
    for path, rule_file in parsed:
        formatted = format_rule_file(rule_file)
        original = path.read_text(encoding="utf-8")
        if formatted != original:
            changed.append(str(path))
            diffs[str(path)] = _unified_diff(str(path), original, formatted)
            if not check:
                _write_atomically(path, formatted)
    verb = "would reformat" if check else "reformatted"
    text = "".join(f"{verb} {name}\n" + (diffs[name] if show_diff else "") for name in changed) + (
        f"{len(targets) - len(changed)} files already formatted\n"
    )
    data: dict[str, Any] = {"checked": len(targets), "changed": changed, "check": check}
    if show_diff:
        data["diffs"] = diffs
    _echo(text, output_format, data)
    return int(ExitCode.REFUSED if check and changed else ExitCode.OK)


def _unified_diff(name: str, before: str, after: str) -> str:
    """`diff -u` of a file's text before and after, the sides labelled as `git diff` does
    (`a/NAME`, `b/NAME`; an absolute path as it is)."""
    import difflib

    absolute = Path(name).is_absolute()
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=name if absolute else f"a/{name}",
        tofile=name if absolute else f"b/{name}",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


@main.command("test")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, dir_okay=True, file_okay=True))
@click.option(
    "--coverage",
    "with_coverage",
    is_flag=True,
    help="Report the rule outcomes and decision "
    "rows the cases reach, and every one no case reaches.",
)
@click.option(
    "--mutate",
    is_flag=True,
    help="Run every threshold mutant of the rules (in memory) and "
    "report each one no case catches; exit 1 when one survives.",
)
@lock_option
@judged_format_option
@out_option
@reading_options(exact=False)
@command
def test_command(
    paths: tuple[Path, ...],
    with_coverage: bool,
    mutate: bool,
    lock: Path | None,
    output_format: str,
    out: Path | None,
    reading: Reading,
) -> int:
    """Run the rule test cases of PATHS (`*.cases.yaml` files, or folders searched for
    them; default: the current folder): each case through `check` or `evaluate`, one line
    per case, a diff for each failure, `N passed, N failed` last (docs/testing.md).
    `--verbose`: under each case, what its run observed (verdict, decision rows, the
    rules by outcome)."""
    from engine.cases.files import case_paths, read_case_files
    from engine.cases.suite import coverage, load_groups, run_suite
    from engine.freeze.diff import refuse_unlocked
    from engine.report.cases_report import cases_json, cases_text, counts

    found = case_paths(list(paths) or [Path(".")])
    _refuse_output_over_inputs(out, [], files=[*found, *_given(lock)])
    files = read_case_files(found)
    refuse = None if lock is None else (lambda ruleset: refuse_unlocked(lock, ruleset.hashed))
    groups = load_groups(files, refuse)
    with _progress("cases run:", reading.quiet):
        mutations = run_suite(groups, mutate) if mutate else None
        if mutations is None:
            run_suite(groups)
    coverages = [coverage(group) for group in groups] if with_coverage else None
    data = cases_json(groups, coverages, mutations)
    if output_format in CI_FORMATS:
        from engine.report.ci import cases_report

        _deliver(_ci_text(output_format, cases_report(_suite(), data)), out)
    elif output_format == "json":
        _deliver(to_json(data), out)
    else:
        _deliver(cases_text(groups, coverages, mutations, reading.verbose), out)
    _passed, failed = counts([r for group in groups for r in group.results])
    survived = any(m.surviving for found in mutations or [] for m in found)
    return int(ExitCode.REFUSED if failed or survived else ExitCode.OK)


@main.command()
@click.argument(
    "table",
    required=False,
    type=click.Path(path_type=Path, dir_okay=False),
    default=Path("controls") / "evaluator" / "expected.yaml",
)
@report_format_option
@out_option
@reading_options(verbose=False, exact=False)
@command
def controls(table: Path, output_format: str, out: Path | None, reading: Reading) -> int:
    """Run an expected-result table of controls and mutations (default:
    controls/evaluator/expected.yaml): each control's and mutation's cases through the
    public path of `rulecheck test`, one row per control, the mutation-to-owning-control
    attribution, `N passed, N failed` last (docs/testing.md)."""
    from engine.cases.controls import control_rows, read_control_table, row_counts
    from engine.cases.suite import load_groups, run_suite
    from engine.report.controls_report import controls_json, controls_markdown, controls_text

    _refuse_output_over_inputs(out, [], files=[table])
    found = read_control_table(table)
    groups = load_groups(list(found.case_files))
    with _progress("cases run:", reading.quiet):
        run_suite(groups)
    rows = control_rows(found, groups)
    text = (controls_markdown if output_format == "markdown" else controls_text)(found, rows)
    _deliver(to_json(controls_json(found, rows)) if output_format == "json" else text, out)
    _passed, failed = row_counts(rows)
    return int(ExitCode.REFUSED if failed else ExitCode.OK)


@main.command()
@click.argument("name")
@rules_option
@format_option
@out_option
@command
def show(name: str, rules: tuple[Path, ...], output_format: str, out: Path | None) -> int:
    """Print one declaration, its hash and its source note."""
    from engine.check.symbols import did_you_mean
    from engine.report.rules_report import show_json, show_text
    from engine.ruleset import load_ruleset

    _refuse_output_over_inputs(out, _default_paths(rules))
    ruleset = load_ruleset(_default_paths(rules))
    declarations = ruleset.hashed.by_name()
    if name not in declarations:
        hint = did_you_mean(name, declarations)
        message = f"no declaration named `{name}`" + (f"; {hint}" if hint else "")
        raise RulecheckError([Diagnostic("UNKNOWN_NAME", message)], ExitCode.USAGE)
    uses = sorted(ruleset.checked.infos[name].references)
    item = declarations[name]
    _echo(show_text(item, uses), output_format, show_json(item, uses), out)
    return 0


@main.command()
@click.argument("name")
@rules_option
@format_option
@command
def render(name: str, rules: tuple[Path, ...], output_format: str) -> int:
    """Print a constant of the rules as a YAML block, in the order its entries are declared."""
    from engine.check.symbols import did_you_mean
    from engine.evaluate.program import compile_program
    from engine.report.render_const import render_constant

    ruleset = _ruleset(rules, None)
    constants = ruleset.checked.symbols.consts
    if name not in constants:
        hint = did_you_mean(name, constants)
        message = f"no constant named `{name}`" + (f"; {hint}" if hint else "")
        raise RulecheckError([Diagnostic("UNKNOWN_NAME", message)], ExitCode.USAGE)
    text = render_constant(name, compile_program(ruleset).compiler.constant(name))
    declaration = ruleset.hashed.by_name()[name]
    data = {"constant": name, "hash": declaration.hash, "yaml": text}
    click.echo(to_json(data) if output_format == "json" else text, nl=False)
    return 0


@main.command()
@rules_option
@format_option
@out_option
@command
def inventory(rules: tuple[Path, ...], output_format: str, out: Path | None) -> int:
    """Print the runtime, every dependency version and the hashes of grammar, rules and schemas."""
    from engine.inventory import collect_inventory, inventory_text

    _refuse_output_over_inputs(out, _default_paths(rules))
    data = collect_inventory(_default_paths(rules))
    _echo(inventory_text(data), output_format, data, out)
    return 0


# `rulecheck answer` and `answers`: the shipped answer protocol's short form. Each option
# names a document of `protocol answer_review` (rules/000_protocols.rules); what is checked
# is all in its rules.
ANSWER_ALIAS = FilesAlias(
    protocol="answer_review",
    subject="answer",
    files=("packet", "draft"),
    values={"role": ("review", "role")},
    folder=("source", "snapshot"),
    shown=("packet", "role"),
    schema_key="response_schema_sha256",
    passed_note=(
        "structural check passed: the answer satisfies the response contract's structure. "
        "This says nothing about whether it is correct, complete or ready; that is decided by "
        "semantic adjudication."
    ),
    failed_note="structural check failed",
)


@main.command()
@click.argument("answer_path", metavar="ANSWER", type=click.Path(path_type=Path))
@click.option("--packet", "packet", required=True, type=click.Path(path_type=Path))
@click.option("--role", "role", required=True, help="The session's role (the rules say which).")
@click.option("--draft", "draft", type=click.Path(path_type=Path), help="The common draft.")
@click.option("--source", "source", type=click.Path(path_type=Path), help="Source snapshot folder.")
@rules_option
@format_option
@out_option
@command
def answer(
    answer_path: Path,
    packet: Path,
    role: str,
    draft: Path | None,
    source: Path | None,
    rules: tuple[Path, ...],
    output_format: str,
    out: Path | None,
) -> int:
    """Check one answer against the response contract and its packet (structure only):
    protocol `answer_review` of the rules, over the files named."""
    from engine.evaluate.alias import FilesJob
    from engine.evaluate.batch import FilesRunner
    from engine.report.answer_report import answer_json, answer_text

    files = {"answer": answer_path, "packet": packet}
    if draft is not None:
        files["draft"] = draft
    _refuse_output_over_inputs(out, _default_paths(rules), source, list(files.values()))
    runner = FilesRunner(_program(rules), ANSWER_ALIAS)
    result = runner.run(FilesJob(files, {"role": role}, source))
    ruleset_hash = runner.program.ruleset.hashed.ruleset_hash
    data = answer_json(ANSWER_ALIAS, result, ruleset_hash, runner.schema_sha256())
    text = answer_text(ANSWER_ALIAS, result, ruleset_hash)
    _deliver(to_json(data) if output_format == "json" else text, out)
    return int(ExitCode.OK if result.outcome.passed else ExitCode.REFUSED)


@main.command()
@click.argument("index", type=click.Path(path_type=Path))
@click.option("--jobs", "jobs", default=1, show_default=True, type=click.IntRange(1, 64))
@rules_option
@format_option
@out_option
@reading_options(exact=False)
@command
def answers(
    index: Path,
    jobs: int,
    rules: tuple[Path, ...],
    output_format: str,
    out: Path | None,
    reading: Reading,
) -> int:
    """Check every answer of an index (JSON Lines of answer, packet, role[, draft, source]).
    The report lists each answer with findings; `--verbose`, every answer."""
    from engine.evaluate.batch import FilesRunner, read_index, run_jobs
    from engine.progress import advance
    from engine.report.answer_report import answer_json, answer_text

    rule_paths = _default_paths(rules)
    _refuse_output_over_inputs(out, rule_paths, files=[index])
    runner = FilesRunner(_program(rules), ANSWER_ALIAS)
    ruleset_hash = runner.program.ruleset.hashed.ruleset_hash
    schema_sha256 = runner.schema_sha256()
    total = passed = 0
    failed: list[dict[str, Any]] = []
    findings: list[str] = []  # kept for --out; streamed to stdout otherwise
    results = run_jobs(runner, read_index(index, ANSWER_ALIAS), rule_paths, jobs)
    with _progress("answers checked:", reading.quiet):
        for result in results:
            total += 1
            advance(total, None)
            if result.outcome.passed:
                passed += 1
            if result.outcome.passed and not reading.verbose:
                continue
            if output_format == "json":
                if not result.outcome.passed:  # the JSON report lists every answer's count
                    failed.append(answer_json(ANSWER_ALIAS, result, ruleset_hash, schema_sha256))
            elif out is not None:
                findings.append(answer_text(ANSWER_ALIAS, result, ruleset_hash))
            else:
                click.echo(answer_text(ANSWER_ALIAS, result, ruleset_hash), nl=False)
    summary = f"{total} answers: {passed} structurally valid, {total - passed} with findings\n"
    data = {"answers": total, "structural_ok": passed, "with_findings": failed}
    _deliver(to_json(data) if output_format == "json" else "".join(findings) + summary, out)
    return int(ExitCode.OK if passed == total else ExitCode.REFUSED)


def _program(rules: tuple[Path, ...], lock: Path | None = None) -> Any:
    from engine.evaluate.program import compile_program

    return compile_program(_ruleset(rules, lock))


def _ruleset(rules: tuple[Path, ...], lock: Path | None) -> Any:
    """The rules to run; with `--lock`, refused unless they are the locked ones."""
    from engine.ruleset import load_ruleset

    ruleset = load_ruleset(_default_paths(rules))
    if lock is not None:  # a lock is YAML: PyYAML is imported only to read one
        from engine.freeze.diff import refuse_unlocked

        refuse_unlocked(lock, ruleset.hashed)
    return ruleset


@main.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@rules_option
@strict_option
@format_option
@protocol_option
@out_option
@command
def admit(
    bundle: Path,
    rules: tuple[Path, ...],
    strict: bool,
    output_format: str,
    protocol_name: str | None,
    out: Path | None,
) -> int:
    """Check that a bundle may be evaluated: `check`'s report, whose exit code is the
    admission gate's (every failed prerequisite is listed with its rule and location)."""
    _refuse_output_over_inputs(out, _default_paths(rules), bundle)
    program = _program(rules)
    protocol = _bundle_protocol(program, bundle, protocol_name)
    text, code = _protocol_run(program, bundle, protocol, output_format, strict)
    _deliver(text, out)
    return code


def _bundle_protocol(program: Any, bundle: Path, protocol_name: str | None) -> Any:
    """The protocol a bundle is checked against; a usage error (exit 2) when none is known."""
    from engine.evaluate.protocol import bundle_protocol

    return bundle_protocol(program, bundle, protocol_name)


def _judged_text(output_format: str, data: dict[str, Any], program: Any) -> str:
    """The JSON data of a judged graph in a CI format."""
    from engine.report.ci import program_report

    return _ci_text(output_format, program_report(_suite(), data, program))


def _units(program: Any) -> dict[str, str]:
    from engine.report.summary import rule_units

    return rule_units(program.ruleset.checked.symbols.declarations)


def _protocol_run(
    program: Any,
    bundle: Path,
    protocol: Any,
    output_format: str,
    strict: bool,
    reading: Reading = Reading(),
) -> tuple[str | list[str], int]:
    """The report of a protocol bundle (the chunks of a JSON report) and its exit code."""
    from engine.evaluate.protocol import evaluate_protocol, reported_tables
    from engine.report.protocol_report import protocol_json, protocol_passed

    found = evaluate_protocol(program, bundle, protocol, reported_tables(protocol))
    code = int(ExitCode.OK if protocol_passed(found, strict) else ExitCode.REFUSED)
    if output_format == "json":
        # The report holds all it shows. The graph's own indexes go before its data is
        # made (it reads the documents and the results, never the graph), the documents
        # before it is written, and its long arrays are made as they are written: a large
        # campaign's peak is never two of these together.
        found = replace(found, graph=replace(found.graph, nodes=None))
        data = protocol_json(found, strict, streamed=True)
        del found
        return json_chunks(data), code
    data = protocol_json(found, strict)
    return _protocol_report(found, data, program, output_format, strict, reading), code


def _protocol_report(
    found: Any,
    data: dict[str, Any],
    program: Any,
    output_format: str,
    strict: bool,
    reading: Reading,
) -> str:
    """A protocol result in the format asked for; `data` is its JSON report."""
    from engine.report.protocol_report import protocol_text

    if output_format == "json":
        return to_json(data)
    if output_format in CI_FORMATS:
        return _judged_text(output_format, data, program)
    if output_format == "html":
        from engine.report.graph_report import outcome_line
        from engine.report.html_report import html_report

        title = f"{found.protocol.name.text}: {found.bundle.root}"
        return html_report(data, title, _units(program), outcome_line(found.graph, strict))
    return protocol_text(
        found,
        markdown=output_format == "markdown",
        strict=strict,
        verbose=reading.verbose,
        exact=reading.exact,
        units=_units(program) if program is not None else {},
    )


@main.command()
@click.argument("traces", nargs=-1, required=True, type=click.Path(path_type=Path))
@rules_option
@format_option
@protocol_option
@out_option
@reading_options(verbose=False, exact=False)
@command
def conformance(
    traces: tuple[Path, ...],
    rules: tuple[Path, ...],
    output_format: str,
    protocol_name: str | None,
    out: Path | None,
    reading: Reading,
) -> int:
    """Check controller traces against the rules' conformance protocol: exit 0 when each
    conforms, 1 naming, for each finding, the rule, its suite (the rule's source note) and
    the record (sequence number, entity) it is located at. A TRACE is a bundle folder, or
    a folder of fixture traces with an `expected.yaml`, each checked against its
    expectation, ending with `N passed, N failed`; a file stands for the folder holding
    it. The report carries its own sha256."""
    from engine.progress import advance
    from engine.report.conformance_report import (
        EXPECTED,
        check_fixtures,
        check_trace,
        fixtures_text,
        trace_text,
    )

    folders = [given.parent if given.is_file() else given for given in traces]
    _refuse_output_over_inputs(out, _default_paths(rules), files=list(traces))
    for folder in folders:
        _refuse_output_over_inputs(out, [], folder)
    program = _program(rules)
    reports: list[dict[str, Any]] = []
    texts: list[str] = []
    ok = True
    with _progress("traces checked:", reading.quiet):
        for done, path in enumerate(folders, start=1):  # a trace file: its bundle folder
            if (path / EXPECTED).is_file():
                report = check_fixtures(program, path, protocol_name)
                ok = ok and all(result["passed"] for result in report["report"]["results"])
                text = fixtures_text(report)
            else:
                report = check_trace(program, path, protocol_name)
                ok = ok and report["report"]["conforms"]
                text = trace_text(report)
            reports.append(report)
            if output_format == "text" and out is None:
                click.echo(text, nl=False)  # streamed: a long suite shows as it goes
            texts.append(text)
            advance(done, len(folders))
    if output_format == "json":
        _deliver(to_json({"reports": reports, "passed": ok}), out)
    elif out is not None:
        _deliver("".join(texts), out)
    return int(ExitCode.OK if ok else ExitCode.REFUSED)


@main.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@rules_option
@judged_report_format_option
@out_option
@strict_option
@protocol_option
@lock_option
@reading_options
@click.option(
    "--receipt",
    "receipt",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also write the evaluation receipt here (`rulecheck verify-receipt` checks it).",
)
@command
def check(
    bundle: Path,
    rules: tuple[Path, ...],
    output_format: str,
    out: Path | None,
    strict: bool,
    protocol_name: str | None,
    lock: Path | None,
    receipt: Path | None,
    reading: Reading,
) -> int:
    """Check a bundle against a protocol of the rules: its documents, every rule of its
    graph, the admission gate, the verdict and the report tables.

    The protocol is `--protocol`, else the one the bundle's `rulecheck.yaml` names, else
    the one protocol whose files the bundle holds. `--verbose`: every input, rule, report
    table and decision after the first screen.
    """
    read = _given(lock)
    _refuse_output_over_inputs(out, _default_paths(rules), bundle, read)
    _refuse_output_over_inputs(receipt, _default_paths(rules), bundle, read, option="--receipt")
    text: str | list[str]
    with _progress(f"checking {bundle}", reading.quiet):
        if receipt is not None:
            text, written, code = _receipt_run(
                bundle, rules, lock, protocol_name, strict, output_format, reading
            )
            _write_output(receipt, written)
        else:
            program = _program(rules, lock)
            protocol = _bundle_protocol(program, bundle, protocol_name)
            text, code = _protocol_run(program, bundle, protocol, output_format, strict, reading)
    _deliver(text, out)
    return code


def _receipt_run(
    bundle: Path,
    rules: tuple[Path, ...],
    lock: Path | None,
    protocol_name: str | None,
    strict: bool,
    output_format: str,
    reading: Reading = Reading(),
) -> tuple[str, str, int]:
    """`check --receipt`: the report, the receipt's text and the exit code."""
    from engine.report.protocol_report import protocol_passed
    from engine.report.receipt import Invocation, receipt_text, run_with_receipt

    paths = tuple(_default_paths(rules))
    run = run_with_receipt(Invocation(bundle, paths, lock, protocol_name, strict))
    # the CI formats and the html page read the compiled rules (their links, the units
    # of their bounds); the text report does without units rather than compile twice
    needs_program = output_format in (*CI_FORMATS, "html")
    program = _program(rules, lock) if needs_program else None
    text = _protocol_report(run.result, run.report, program, output_format, strict, reading)
    code = int(ExitCode.OK if protocol_passed(run.result, strict) else ExitCode.REFUSED)
    return text, receipt_text(run.receipt), code


@main.command("verify-receipt")
@click.argument("receipt", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("bundle", type=click.Path(path_type=Path))
@rules_option
@lock_option
@format_option
@command
def verify_receipt(
    receipt: Path, bundle: Path, rules: tuple[Path, ...], lock: Path | None, output_format: str
) -> int:
    """Re-run offline the check an evaluation receipt records (`check --receipt`) on
    BUNDLE and compare every field; exit 0 only if all match, else 1 with one located
    RECEIPT_MISMATCH per field that differs."""
    from engine.report.receipt import verify_receipt as verify

    mismatches = verify(receipt, bundle, _default_paths(rules), lock)
    if output_format == "json":
        data = {"ok": not mismatches, "diagnostics": [diagnostic_json(d) for d in mismatches]}
        click.echo(to_json(data), nl=False)
    elif mismatches:
        click.echo(render_all_text(tuple(mismatches)) + "\n", err=True)
        count = len(mismatches)
        verb = "does" if count == 1 else "do"
        click.echo(f"receipt {receipt}: {_count(count, 'field')} {verb} not match")
    else:
        click.echo(f"receipt {receipt}: every field matches")
    return int(ExitCode.REFUSED if mismatches else ExitCode.OK)


@main.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.argument("name", required=False)
@rules_option
@protocol_option
@format_option
@out_option
@reading_options
@command
def explain(
    bundle: Path,
    name: str | None,
    rules: tuple[Path, ...],
    protocol_name: str | None,
    output_format: str,
    out: Path | None,
    reading: Reading,
) -> int:
    """Why the verdict (or the decision, gate, budget or link rule NAME) came out: the
    decision row, the gates it read, each failing rule's failing (or closest) bindings, the
    values compared, the input records and their locations, and for each failing bound the
    smallest change of the counted data that would make it hold. `--verbose`: every
    failing binding and violation, and every binding of a rule that passes."""
    from engine.evaluate.protocol import evaluate_protocol
    from engine.report.explain import explain as explain_chain
    from engine.report.explain import explanation_json, explanation_text

    _refuse_output_over_inputs(out, _default_paths(rules), bundle)
    program = _program(rules)
    protocol = _bundle_protocol(program, bundle, protocol_name)
    with _progress(f"explaining {bundle}", reading.quiet):
        found = evaluate_protocol(program, bundle, protocol, frozenset())
        explained = explain_chain(program, found, name, every=reading.verbose)
    if output_format == "json":
        _deliver(to_json(explanation_json(explained, bundle)), out)
    else:
        _deliver(explanation_text(explained, reading.exact), out)
    return 0


@main.command()
@click.option(
    "--old", "old", required=True, type=click.Path(path_type=Path), help="RULES_OR_LOCK now."
)
@click.option(
    "--new", "new", required=True, type=click.Path(path_type=Path), help="RULES_OR_LOCK proposed."
)
@click.argument("bundles", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--jobs", "jobs", default=1, show_default=True, type=click.IntRange(1, 64))
@protocol_option
@format_option
@out_option
@reading_options(verbose=False, exact=False)
@command
def replay(
    old: Path,
    new: Path,
    bundles: tuple[Path, ...],
    jobs: int,
    protocol_name: str | None,
    output_format: str,
    out: Path | None,
    reading: Reading,
) -> int:
    """Check each BUNDLE under the OLD and the NEW rules (a rule file or folder, or a lock
    standing for the rule files it was frozen from) and print, bundle by bundle, the
    verdict under each, every rule outcome that changed and the changed declarations it
    reads; exit 1 when any verdict flips (2 when a bundle cannot be read)."""
    from engine.evaluate.rule_replay import Replayer, load_rule_side, replay_all
    from engine.progress import advance
    from engine.report.replay_report import ReplayPrinter

    _refuse_output_over_inputs(out, [old, new])
    for bundle in bundles:
        _refuse_output_over_inputs(out, [], bundle)
    replayer = Replayer.of(load_rule_side(old), load_rule_side(new), jobs)
    printer = ReplayPrinter(replayer, output_format)
    parts = [printer.head()]
    if out is None:
        click.echo(parts.pop(), nl=False)  # streamed bundle by bundle when not to a file
    with _progress("bundles replayed:", reading.quiet):
        for done, result in enumerate(replay_all(printer.replayer, bundles, protocol_name, jobs)):
            parts.append(printer.row(result))
            if out is None:
                click.echo(parts.pop(), nl=False)
            advance(done + 1, len(bundles))
    parts.append(printer.tail())
    _deliver("".join(parts), out)
    return printer.exit_code()


@main.command()
@click.argument("graph")
@click.option(
    "--input",
    "inputs",
    multiple=True,
    metavar="NAME=FILE",
    help="A document the graph reads, as a .json, .jsonl, .yaml or .yml file (repeat).",
)
@rules_option
@judged_report_format_option
@out_option
@strict_option
@lock_option
@reading_options
@command
def evaluate(
    graph: str,
    inputs: tuple[str, ...],
    rules: tuple[Path, ...],
    output_format: str,
    out: Path | None,
    strict: bool,
    lock: Path | None,
    reading: Reading,
) -> int:
    """Run every rule of GRAPH over the documents it reads; exit 1 unless all hold.

    GRAPH is a graph the rules' kinds belong to (`kind claim of GRAPH records NAME ...`);
    give each document NAME it reads with `--input NAME=FILE`. `--verbose`: every input,
    rule, report table and decision after the first screen.
    """
    from engine.bundle.documents import load_documents, parse_input_option
    from engine.evaluate.inputs import check_inputs, evaluate_documents
    from engine.report.graph_report import passed

    named = [parse_input_option(text) for text in inputs]
    read = [path for _, path in named] + _given(lock)
    _refuse_output_over_inputs(out, _default_paths(rules), files=read)
    program = _program(rules, lock)
    check_inputs(program, graph, [name for name, _ in named])
    # One graph's documents, evaluation and report live until the process ends: the
    # collector stays paused from the first record loaded to the last byte of the report
    # (engine/gcpolicy.py); a collection between the steps would walk all of them.
    with collector_paused():
        with _progress(f"evaluating {graph}", reading.quiet):
            result = evaluate_documents(program, graph, load_documents(named))
        text = _graph_report_text(result, program, graph, output_format, strict, reading)
    _deliver(text, out)
    return int(ExitCode.OK if passed(result, strict) else ExitCode.REFUSED)


def _graph_report_text(
    result: GraphResult,
    program: Program,
    graph: str,
    output_format: str,
    strict: bool,
    reading: Reading,
) -> str:
    """The report of one graph's evaluation in `output_format`."""
    from engine.report.graph_report import graph_json, graph_text

    if output_format == "json":
        text = to_json(graph_json(result, strict))
    elif output_format in CI_FORMATS:
        text = _judged_text(output_format, graph_json(result, strict), program)
    elif output_format == "html":
        from engine.report.graph_report import outcome_line
        from engine.report.html_report import html_report

        counts = outcome_line(result, strict)
        text = html_report(graph_json(result, strict), f"graph {graph}", _units(program), counts)
    else:
        text = graph_text(
            result,
            markdown=output_format == "markdown",
            strict=strict,
            verbose=reading.verbose,
            exact=reading.exact,
            units=_units(program),
        )
    return text


@main.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.argument("table")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path, file_okay=False))
@rules_option
@protocol_option
@format_option
@command
def export(
    bundle: Path,
    table: str,
    out: Path,
    rules: tuple[Path, ...],
    protocol_name: str | None,
    output_format: str,
) -> int:
    """Write one file per row of TABLE (its `file` and `content` columns) into a new folder
    OUT, with `index.json`: what a bundle's readers receive, such as the raters' blinded
    view of a campaign (`export BUNDLE blind_files --out DIR`)."""
    from engine.check.symbols import did_you_mean
    from engine.evaluate.protocol import evaluate_protocol
    from engine.report.export import export_files, write_files

    _refuse_output_over_inputs(out, _default_paths(rules), bundle)
    program = _program(rules)
    protocol = _bundle_protocol(program, bundle, protocol_name)
    found = evaluate_protocol(program, bundle, protocol)
    tables = {t.name: t for t in found.graph.evaluation.tables}
    if table not in tables:
        hint = did_you_mean(table, tables) or f"graph tables: {', '.join(sorted(tables))}"
        message = f"protocol `{protocol.name.text}` has no table `{table}` on its graph"
        raise RulecheckError([Diagnostic("UNKNOWN_NAME", message, hint=hint)], ExitCode.USAGE)
    files = export_files(tables[table], found.graph.nodes)
    write_files(out, files)
    names = [f.name for f in files[:-1]]
    _echo(
        f"wrote {_count(len(names), 'file')} and index.json to {out}\n",
        output_format,
        {"out": str(out), "table": table, "files": names},
    )
    return 0


@main.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Replace a seal the bundle already holds.")
@rules_option
@protocol_option
@format_option
@command
def seal(
    bundle: Path,
    force: bool,
    rules: tuple[Path, ...],
    protocol_name: str | None,
    output_format: str,
) -> int:
    """Seal a bundle's run records once the run has ended: write the rows of the protocol's
    `seal TABLE into DOCUMENT` (each file and its sha256) as DOCUMENT's file, and print its
    sha256, the value to publish with the result. `check` then refuses any record edited
    afterwards."""
    from engine.evaluate.protocol import protocol_seal

    program, protocol = _protocol_of(rules, bundle, protocol_name)
    sealed = protocol_seal(program, bundle, protocol, replace=force)
    _write_output(sealed.target, sealed.data.decode("utf-8"))
    digest = hashlib.sha256(sealed.data).hexdigest()
    _echo(
        f"sealed {bundle / sealed.path}: {_count(sealed.rows, 'row')} of table "
        f"{sealed.table}, sha256 {digest}\n",
        output_format,
        {"seal": str(bundle / sealed.path), "table": sealed.table, "sha256": digest},
    )
    return 0


@main.command("freeze-inputs")
@click.argument("bundle", type=click.Path(path_type=Path))
@rules_option
@protocol_option
@format_option
@command
def freeze_inputs(
    bundle: Path, rules: tuple[Path, ...], protocol_name: str | None, output_format: str
) -> int:
    """Freeze a bundle before its run: write the rows of the protocol's `freeze TABLE into
    DOCUMENT at POINTER before LATER` (each measured input and its sha256) into DOCUMENT's
    file, and print that file's sha256, the value a pre-registration publishes. Refused
    once LATER (the run's first records) holds anything."""
    from engine.bundle.protocol_bundle import bundle_has
    from engine.evaluate.protocol import FREEZE_CLAUSE, protocol_clause, protocol_freeze

    program, protocol = _protocol_of(rules, bundle, protocol_name)
    declared = protocol_clause(protocol, protocol.freezes, FREEZE_CLAUSE)
    later = next(d for d in protocol.documents if d.name.text == declared.before.text)
    if bundle_has(bundle, later.path) and _holds_bytes(bundle, later.path):
        where = Location(str(bundle / later.path))
        message = f"the run has started (`{later.path}` holds records): inputs are frozen before it"
        raise RulecheckError([Diagnostic("FREEZE_AFTER_RUN", message, where)], ExitCode.REFUSED)
    frozen = protocol_freeze(program, bundle, protocol)
    _write_output(frozen.target, frozen.data.decode("utf-8"))
    digest = hashlib.sha256(frozen.data).hexdigest()
    _echo(
        f"froze {_count(frozen.rows, 'input')} into {frozen.target} at {frozen.pointer}: "
        f"sha256 {digest}\n",
        output_format,
        {
            "document": str(frozen.target),
            "pointer": frozen.pointer,
            "inputs": frozen.rows,
            "sha256": digest,
        },
    )
    return 0


@main.group("import")
def import_group() -> None:
    """Convert another tool's records into rulecheck input documents."""


@import_group.command("inspect")
@click.argument("logs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(path_type=Path))
@click.option(
    "--arm",
    "arm_logs",
    multiple=True,
    metavar="ARM=LOG",
    help="Import LOG as the arm ARM of a comparison (repeat once per arm).",
)
@click.option(
    "--protocol",
    "protocol_name",
    default=None,
    metavar="NAME",
    help="The protocol the folder's rulecheck.yaml names, for `rulecheck check DIR` "
    "[default: inspect_eval, or inspect_paired with --arm].",
)
@format_option
@command
def import_inspect(
    logs: tuple[Path, ...],
    out: Path,
    arm_logs: tuple[str, ...],
    protocol_name: str | None,
    output_format: str,
) -> int:
    """Convert inspect_ai logs (`.eval` or `.json`) into a new folder OUT of rulecheck input
    documents (docs/inspect.md), with the sha256 of each log, for `rulecheck check OUT`.
    `--arm ARM=LOG` marks the log of each arm of a paired comparison."""
    from engine.inspect_import import DEFAULT_PROTOCOL, PAIRED_PROTOCOL, import_files, parse_arms
    from engine.limits import output_conflict
    from engine.report.export import write_files

    arms = parse_arms(arm_logs)
    paths = [*logs, *(path for path in arms if path not in logs)]
    if not paths:
        raise click.UsageError("give at least one LOG or --arm ARM=LOG")
    conflict = output_conflict(out, inputs=paths)
    if conflict is not None:
        raise conflict
    protocol = protocol_name or (PAIRED_PROTOCOL if arms else DEFAULT_PROTOCOL)
    files = import_files(paths, protocol, arms)
    write_files(out, files)
    names = [f.name for f in files]
    _echo(
        f"imported {_count(len(paths), 'log')} into {out}: {', '.join(names)}\n",
        output_format,
        {
            "out": str(out),
            "logs": [str(p) for p in paths],
            "arms": {str(p): arm for p, arm in arms.items()},
            "files": names,
        },
    )
    return 0


def _protocol_of(
    rules: tuple[Path, ...], bundle: Path, protocol_name: str | None
) -> tuple[Any, Any]:
    """The compiled rules and the protocol the bundle is for."""
    program = _program(rules)
    return program, _bundle_protocol(program, bundle, protocol_name)


def _holds_bytes(bundle: Path, pattern: str) -> bool:
    """Whether a file of the bundle that `pattern` names holds anything but blank lines."""
    from engine.bundle.protocol_bundle import matching_files
    from engine.limits import read_input

    names = matching_files(bundle, pattern) if "*" in pattern else [pattern]
    for name in names or []:
        try:
            if read_input(bundle / name).strip():
                return True
        except RulecheckError:
            return True  # unreadable (a FIFO, too large): not provably empty
    return False


@main.command()
@click.argument("seed")
@click.argument("items", nargs=-1, required=True)
@click.option("--label", "label", required=True, help="The order's label, as the rules name it.")
@format_option
@command
def order(seed: str, items: tuple[str, ...], label: str, output_format: str) -> int:
    """Re-derive a seeded order by hand: ITEMS sorted by the sha256 of SEED, LABEL and each
    item joined by U+001F (the `seeded_order` builtin; docs/language.md)."""
    from engine.bundle.ordering import seeded_order

    derived = seeded_order(seed, label, items)
    data = {"seed": seed, "label": label, "order": derived}
    _echo(" ".join(derived) + "\n", output_format, data)
    return 0


@main.command()
@rules_option
@report_format_option
@out_option
@command
def codes(rules: tuple[Path, ...], output_format: str, out: Path | None) -> int:
    """List every diagnostic code rulecheck reports, and the reject codes the rules declare."""
    from engine.catalog import CATALOG, catalog_markdown
    from engine.ruleset import load_ruleset

    _refuse_output_over_inputs(out, _default_paths(rules))
    ruleset = load_ruleset(_default_paths(rules))
    declared = sorted(
        (name, decl.message, Path(decl.name.span.file).name)
        for name, decl in ruleset.checked.symbols.codes.items()
    )
    if output_format == "markdown":
        _deliver(catalog_markdown(declared), out)
        return 0
    entries = [
        {"code": e.code, "severity": e.severity, "stage": e.stage, "meaning": e.meaning}
        for e in CATALOG
    ]
    data = {
        "engine": entries,
        "rules": [{"code": c, "message": m, "file": f} for c, m, f in declared],
    }
    text = "".join(f"{e.code:34} {e.severity:8} {e.stage:14} {e.meaning}\n" for e in CATALOG)
    text += "".join(f"{c:34} reject   {f:14} {m}\n" for c, m, f in declared)
    _echo(text, output_format, data, out)
    return 0


if __name__ == "__main__":  # `python -m engine.cli`, as `rulecheck`
    main(prog_name="rulecheck")
