"""Transition tables: reachability, event coverage, terminal exits and outcomes."""

from __future__ import annotations

from collections import defaultdict

from engine.check.symbols import did_you_mean, location
from engine.errors import Diagnostic
from engine.order import reachable
from engine.syntax import ast


def transition_graph(decl: ast.TransitionsDecl) -> dict[str, list[str]]:
    """Each state and the states its legal moves lead to."""
    graph: dict[str, list[str]] = {state: [] for state in states(decl)}
    for move in decl.moves:
        graph[move.source.text].append(move.target.text)
    return graph


def states(decl: ast.TransitionsDecl) -> list[str]:
    """Every state the table names, in first-mention order."""
    names = [
        decl.initial.text,
        *(s.text for s in decl.terminal),
        *(s.text for s in decl.settlement),
    ]
    for move in decl.moves:
        names += [move.source.text, move.target.text]
    for event in decl.events:
        names += [s.text for s in event.applies]
    names += [outcome.state.text for outcome in decl.outcomes]
    return list(dict.fromkeys(names))


def check_transitions(decl: ast.TransitionsDecl) -> list[Diagnostic]:
    """Every structural problem of one transition table."""
    name = decl.name.text

    def error(code: str, message: str, span: ast.Span, hint: str | None = None) -> Diagnostic:
        return Diagnostic(code, message, location(span), hint=hint, rule=name)

    errors: list[Diagnostic] = []
    events = {event.name.text: event for event in decl.events}
    terminal = {s.text for s in decl.terminal}
    settlement = {s.text for s in decl.settlement}
    targets: dict[tuple[str, str], list[ast.Move]] = defaultdict(list)
    for move in decl.moves:
        targets[(move.source.text, move.event.text)].append(move)
        if move.event.text not in events:
            errors.append(
                error(
                    "UNKNOWN_EVENT",
                    f"event `{move.event.text}` is not declared in `{name}`",
                    move.event.span,
                    did_you_mean(move.event.text, events),
                )
            )
        elif move.source.text not in {s.text for s in events[move.event.text].applies}:
            errors.append(
                error(
                    "TRANSITION_EVENT_NOT_APPLICABLE",
                    f"event `{move.event.text}` is not documented as applying to "
                    f"`{move.source.text}`",
                    move.span,
                    f"add `{move.source.text}` to `event {move.event.text} applies ...`",
                )
            )
        if move.source.text in terminal and move.target.text not in settlement:
            errors.append(
                error(
                    "TRANSITION_TERMINAL_EXIT",
                    f"terminal state `{move.source.text}` may only move to a settlement "
                    f"state, not `{move.target.text}`",
                    move.span,
                )
            )
    for (source, event), moves in targets.items():
        if len({m.target.text for m in moves}) > 1:
            errors.append(
                error(
                    "TRANSITION_NONDETERMINISTIC",
                    f"`{source}` on `{event}` has {len(moves)} targets: "
                    + ", ".join(f"`{m.target.text}`" for m in moves),
                    moves[1].span,
                )
            )
    for declared in decl.events:
        for state in declared.applies:
            if (state.text, declared.name.text) not in targets:
                errors.append(
                    error(
                        "TRANSITION_EVENT_UNHANDLED",
                        f"event `{declared.name.text}` applies to `{state.text}` but no move "
                        f"handles it there",
                        state.span,
                    )
                )
    errors += _graph_errors(decl, terminal | settlement)
    errors += _outcome_errors(decl, terminal - settlement)
    errors += _reopen_errors(decl, terminal, settlement)
    errors += _policy_errors(decl, {key: moves[0].target.text for key, moves in targets.items()})
    return errors


def _reopen_errors(
    decl: ast.TransitionsDecl, terminal: set[str], settlement: set[str]
) -> list[Diagnostic]:
    """A settlement state is the only exit of a terminal state; moving on from it to a
    working state would reopen the terminal state through the back door."""
    return [
        Diagnostic(
            "TRANSITION_REOPENED",
            f"settlement state `{move.source.text}` moves to `{move.target.text}`, which is "
            "neither terminal nor settlement: a terminal state would reopen",
            location(move.span),
            rule=decl.name.text,
        )
        for move in decl.moves
        if move.source.text in settlement
        and move.source.text not in terminal
        and move.target.text not in terminal | settlement
    ]


def _policy_errors(
    decl: ast.TransitionsDecl, moves: dict[tuple[str, str], str]
) -> list[Diagnostic]:
    """Each `policy OUTCOME from STATE via E1, E2, ...` must be a walk of legal moves."""
    errors: list[Diagnostic] = []
    known = set(states(decl))
    for policy in decl.policies:
        state = policy.source.text
        if state not in known:
            errors.append(
                Diagnostic(
                    "TRANSITION_POLICY_PATH",
                    f"policy `{policy.outcome.text}` starts from `{state}`, which is no state "
                    f"of `{decl.name.text}`",
                    location(policy.source.span),
                    hint=did_you_mean(state, known),
                    rule=decl.name.text,
                )
            )
            continue
        for event in policy.events:
            target = moves.get((state, event.text))
            if target is None:
                errors.append(
                    Diagnostic(
                        "TRANSITION_POLICY_PATH",
                        f"policy `{policy.outcome.text}` has no legal event path: `{state}` "
                        f"has no move on `{event.text}`",
                        location(event.span),
                        rule=decl.name.text,
                    )
                )
                break
            state = target
    return errors


def _first_span(decl: ast.TransitionsDecl, state: str) -> ast.Span:
    mentions = [decl.initial, *decl.terminal, *decl.settlement]
    mentions += [ident for move in decl.moves for ident in (move.source, move.target)]
    mentions += [ident for event in decl.events for ident in event.applies]
    return next((ident.span for ident in mentions if ident.text == state), decl.name.span)


def _graph_errors(decl: ast.TransitionsDecl, final: set[str]) -> list[Diagnostic]:
    graph = transition_graph(decl)
    reached = reachable(graph, decl.initial.text)
    errors: list[Diagnostic] = []
    for state in states(decl):
        if state not in reached:
            errors.append(
                Diagnostic(
                    "TRANSITION_UNREACHABLE_STATE",
                    f"state `{state}` cannot be reached from `{decl.initial.text}`",
                    location(_first_span(decl, state)),
                    hint=did_you_mean(state, reached),
                    rule=decl.name.text,
                )
            )
        elif state not in final and not graph[state]:
            errors.append(
                Diagnostic(
                    "TRANSITION_DEAD_END",
                    f"state `{state}` is not terminal but has no move out",
                    location(_first_span(decl, state)),
                    hint=did_you_mean(state, [s for s in states(decl) if s != state])
                    or "declare it terminal or add a move",
                    rule=decl.name.text,
                )
            )
    return errors


def _outcome_errors(decl: ast.TransitionsDecl, terminal: set[str]) -> list[Diagnostic]:
    if not decl.outcomes:
        return []
    errors: list[Diagnostic] = []
    mapped: dict[str, list[ast.Outcome]] = defaultdict(list)
    for outcome in decl.outcomes:
        mapped[outcome.state.text].append(outcome)
        if outcome.state.text not in terminal:
            errors.append(
                Diagnostic(
                    "TRANSITION_OUTCOME_NOT_TERMINAL",
                    f"only terminal states map to an outcome; `{outcome.state.text}` is not",
                    location(outcome.state.span),
                    rule=decl.name.text,
                )
            )
    for state in sorted(terminal):
        if len(mapped[state]) != 1:
            errors.append(
                Diagnostic(
                    "TRANSITION_OUTCOME",
                    f"terminal state `{state}` must map to exactly one outcome, "
                    f"found {len(mapped[state])}",
                    location(mapped[state][1].span if mapped[state] else decl.name.span),
                    rule=decl.name.text,
                )
            )
    return errors
