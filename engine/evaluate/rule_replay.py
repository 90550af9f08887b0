"""`rulecheck replay --old RULES --new RULES BUNDLE...`: which archived bundles change
verdict under a proposed rule edit, before anyone freezes it.

Each side is a rule file or folder, or a lock. A lock stands for the rule files it was
frozen from (the `file` of each entry, as recorded, else relative to the lock's folder),
and only if they still match it: a lock holds declarations, not the schemas beside them,
so it cannot be evaluated alone. Each bundle is checked under both sides independently,
in this process or in `--jobs N` worker processes; only a small summary of each bundle
(verdicts, every rule outcome, the refusal codes) comes back, in bundle order, so memory
does not grow with the number of bundles.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.batch import pooled
from engine.evaluate.program import Program, compile_program
from engine.freeze.diff import DeclarationChange, DiffResult, diff_sides, ruleset_side
from engine.ruleset import Ruleset, load_ruleset
from engine.syntax import ast

_CHUNK = 4
_WINDOW = 256


@dataclass(frozen=True, slots=True)
class RuleSide:
    """One side of a replay: what was named, the rule files loaded, and their ruleset."""

    label: str
    rule_paths: tuple[Path, ...]
    ruleset: Ruleset


def load_rule_side(path: Path) -> RuleSide:
    """A rule file or folder, or a lock standing for the rule files it was frozen from.

    Raises:
        RulecheckError: exit 2 when a lock's rule files are missing or differ from it
            (give the rule folder instead), or a file cannot be read; exit 1 when the
            rules have errors.
    """
    from engine.freeze.diff import LOCK_SUFFIXES

    if not (path.is_file() and path.suffix in LOCK_SUFFIXES):
        return RuleSide(str(path), (path,), load_ruleset([path]))
    files = _locked_files(path)
    ruleset = load_ruleset(list(files))
    _require_locked(path, ruleset)
    return RuleSide(str(path), files, ruleset)


def _locked_files(lock: Path) -> tuple[Path, ...]:
    """The rule files a lock's entries were frozen from, in their order."""
    from engine.bundle.yamldoc import load_yaml_document

    entries = load_yaml_document(lock, "rules_lock", "LOCK")["declarations"]
    recorded = list(dict.fromkeys(str(entry["file"]) for entry in entries))
    found: list[Path] = []
    for name in recorded:
        candidates = [Path(name), lock.parent / name]
        path = next((c for c in candidates if c.is_file()), None)
        if path is None:
            message = f"the lock `{lock}` was frozen from `{name}`, which is not here"
            hint = (
                "replay with the rule folder itself (`--old rules/`), or from where it was frozen"
            )
            where = Location(str(lock), pointer="/declarations")
            diagnostic = Diagnostic("REPLAY_LOCK_RULES", message, where, hint=hint)
            raise RulecheckError([diagnostic], ExitCode.USAGE)
        found.append(path)
    return tuple(found)


def _require_locked(lock: Path, ruleset: Ruleset) -> None:
    from engine.freeze.diff import refuse_unlocked

    try:
        refuse_unlocked(lock, ruleset.hashed)
    except RulecheckError as error:
        if error.exit_code == ExitCode.USAGE:
            raise
        message = f"the rule files the lock `{lock}` was frozen from no longer match it"
        hint = "replay with the rule folder itself: a lock stands for its rule files only unchanged"
        where = Location(str(lock))
        head = Diagnostic("REPLAY_LOCK_RULES", message, where, hint=hint)
        raise RulecheckError([head, *error.diagnostics], ExitCode.USAGE) from None


@dataclass(frozen=True, slots=True)
class SideOutcome:
    """What one rule set concluded about a bundle: the verdict (None when the protocol
    declares none or the bundle was refused before one), the admission, every rule
    outcome, and the codes of a refusal before any verdict."""

    verdict: str | None
    admitted: bool | None
    passed: bool
    outcomes: tuple[tuple[str, bool], ...]
    refused: tuple[str, ...] = ()
    unreadable: bool = False  # refused with exit 2: not a bundle, or a file unreadable

    def shown(self) -> str:
        """The verdict as a table cell."""
        if self.refused:
            return "refused (" + ", ".join(dict.fromkeys(self.refused)) + ")"
        if self.verdict is not None:
            return self.verdict
        return "passed" if self.passed else "failed"


@dataclass(frozen=True, slots=True)
class BundleReplay:
    """A bundle under both rule sets, and each rule whose outcome changed (old, new; None
    where the rule did not run)."""

    bundle: str
    old: SideOutcome
    new: SideOutcome
    changed: tuple[tuple[str, bool | None, bool | None], ...]

    @property
    def flipped(self) -> bool:
        """Whether the verdict (or the admission, or a refusal) differs."""
        old, new = self.old, self.new
        return (old.verdict, old.admitted, old.passed, bool(old.refused)) != (
            new.verdict,
            new.admitted,
            new.passed,
            bool(new.refused),
        )


def side_outcome(program: Program, bundle: Path, protocol_name: str | None) -> SideOutcome:
    """Check one bundle as `check` does (no report tables but those derived documents
    need); a refusal before any verdict is an outcome too (its codes).

    A bundle that cannot be read or names no protocol is refused too, marked unreadable
    (the replay goes on with the next bundle, and exits 2 at the end).
    """
    from engine.evaluate.protocol import bundle_protocol, evaluate_protocol

    try:
        protocol = bundle_protocol(program, bundle, protocol_name)
        found = evaluate_protocol(program, bundle, protocol, frozenset())
    except RulecheckError as error:
        codes = tuple(sorted(d.code for d in error.diagnostics))
        return SideOutcome(None, None, False, (), codes, error.exit_code == ExitCode.USAGE)
    verdict = found.verdict
    outcomes = tuple(sorted(found.graph.evaluation.outcomes.items()))
    return SideOutcome(
        verdict.verdict if verdict is not None else None, found.admitted, found.passed, outcomes
    )


def replay_bundle(
    old: Program, new: Program, bundle: Path, protocol_name: str | None
) -> BundleReplay:
    """One bundle under both rule sets."""
    before = side_outcome(old, bundle, protocol_name)
    after = side_outcome(new, bundle, protocol_name)
    first, second = dict(before.outcomes), dict(after.outcomes)
    changed = tuple(
        (name, first.get(name), second.get(name))
        for name in sorted(first.keys() | second.keys())
        if first.get(name) != second.get(name)
    )
    return BundleReplay(str(bundle), before, after, changed)


@dataclass(frozen=True, slots=True)
class Replayer:
    """Both rule sets, the diff between them, and both compiled once (None when worker
    processes compile them, each its own)."""

    old: RuleSide
    new: RuleSide
    diff: DiffResult
    programs: tuple[Program, Program] | None

    @classmethod
    def of(cls, old: RuleSide, new: RuleSide, workers: int = 1) -> Replayer:
        """Diff both sides, and compile them when this process replays (`workers` 1)."""
        diff = diff_sides(
            ruleset_side(old.label, old.ruleset.hashed), ruleset_side(new.label, new.ruleset.hashed)
        )
        programs = None
        if workers <= 1:
            programs = (compile_program(old.ruleset), compile_program(new.ruleset))
        return cls(old, new, diff, programs)

    def causes(self, replay: BundleReplay) -> tuple[DeclarationChange, ...]:
        """The changed declarations that a rule whose outcome changed reads, directly or
        through others (a rule that is itself changed counts), and, when the verdict
        flipped, each decision that changed."""
        changes = {c.name: c for c in self.diff.changes}
        names = {name for name, _, _ in replay.changed}
        reached = _closure(self.new.ruleset, names) | _closure(self.old.ruleset, names)
        if replay.flipped:  # a decision that changed itself, not all it reads
            reached |= set(self.new.ruleset.checked.symbols.of_type(ast.DecisionDecl))
        return tuple(changes[name] for name in sorted(reached) if name in changes)


def _closure(ruleset: Ruleset, names: set[str]) -> set[str]:
    """`names` and every declaration they reference, transitively."""
    infos = ruleset.checked.infos
    seen: set[str] = set()
    stack = [name for name in names if name in infos]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack += [ref for ref in infos[name].references if ref in infos and ref not in seen]
    return seen | names


_worker: tuple[Program, Program] | None = None


def _init_worker(old: Sequence[str], new: Sequence[str]) -> None:
    global _worker
    _worker = (
        compile_program(load_ruleset([Path(p) for p in old])),
        compile_program(load_ruleset([Path(p) for p in new])),
    )


def _run_in_worker(job: tuple[str, str | None]) -> BundleReplay | RulecheckError:
    assert _worker is not None
    try:
        return replay_bundle(*_worker, Path(job[0]), job[1])
    except RulecheckError as error:
        return error


def replay_all(
    replayer: Replayer, bundles: Iterable[Path], protocol_name: str | None, workers: int
) -> Iterator[BundleReplay]:
    """Each bundle's replay, in bundle order, computed in `workers` processes (1 = this
    process); the bundles are handed to the pool a window at a time."""
    if workers <= 1:
        old, new = replayer.programs or (
            compile_program(replayer.old.ruleset),
            compile_program(replayer.new.ruleset),
        )
        for bundle in bundles:
            yield replay_bundle(old, new, bundle, protocol_name)
        return
    arguments = (
        [str(p) for p in replayer.old.rule_paths],
        [str(p) for p in replayer.new.rule_paths],
    )
    jobs = ((str(bundle), protocol_name) for bundle in bundles)
    yield from pooled(_init_worker, arguments, _run_in_worker, jobs, workers, (_WINDOW, _CHUNK))
