"""`--format html`: one self-contained page (no network, no script) from the same data the
JSON report holds: the decision and the scorecards first, then the plots (every gate and
budget with several bindings against its bound, beside the sibling columns of the report
table it reads when there is one; the single comparisons as observed over bound; each
budget's ledger against its ceiling; tables of summary statistics as box plots; tables
grouped by their first column per group), then violations, every rule and the inputs.

The page is a Jinja2 template (engine/report/templates/); the plots are SVG drawn by
matplotlib (engine/report/html_plots.py) and inlined. Both are optional dependencies:
`pip install rulecheck[html]`.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from importlib import resources
from typing import Any

from engine.errors import Diagnostic, ExitCode, Location, RulecheckError
from engine.evaluate.runtime import Unavailable
from engine.report import html_plots as plots
from engine.report.evaluation_report import rounded
from engine.resources import rulecheck_version
from engine.units import UNITS

# A plot shows at most this many bindings; the rest are in the tables of the page.
MAX_BINDINGS = 120
# A table's rows are plotted by group when its first column has 2..MAX_GROUPS values.
MAX_GROUPS = 12
MAX_DISTRIBUTIONS = 6


def _libraries() -> tuple[Any, Any]:
    """jinja2 and matplotlib's Figure, or exit 2 saying how to install them."""
    try:
        import jinja2
        from matplotlib.figure import Figure
    except ImportError:
        message = "`--format html` needs the optional packages `jinja2` and `matplotlib`"
        raise RulecheckError(
            [
                Diagnostic(
                    "HTML_NOT_INSTALLED",
                    message,
                    Location("jinja2"),
                    hint="install them with `pip install rulecheck[html]`",
                )
            ],
            ExitCode.USAGE,
        ) from None
    return jinja2, Figure


_number = plots.number
_in_unit = plots.in_unit
_svg = plots.svg


def _shown(value: Fraction, unit: str | None) -> str:
    scaled = value / UNITS[unit].scale if unit in UNITS else value
    return rounded(scaled) + (f" {unit}" if unit else "")


def _measured(rule: Mapping[str, Any]) -> list[tuple[str, Fraction, Fraction, bool]]:
    """The compared bindings of a gate or budget: ids, observed, bound, whether it held."""
    found = []
    for observation in rule["observations"]:
        observed = _number(observation.get("observed"))
        bound = _number(observation.get("bound"))
        if observed is not None and bound is not None:
            ids = ", ".join(observation["ids"]) or "all"
            found.append((ids, observed, bound, bool(observation["passed"])))
    return found


def _plot(figure_class: Any, rule: Mapping[str, Any], unit: str | None) -> str:
    """A dot per binding (green holds, red fails) against its bound (a line): SVG text."""
    import matplotlib

    bindings = _measured(rule)[:MAX_BINDINGS]
    height = 2.6 if len(bindings) <= 40 else 3.2
    with matplotlib.rc_context(plots.RC):
        figure = figure_class(figsize=(9, height), layout="constrained")
        axes = figure.subplots()
        xs = list(range(len(bindings)))
        observed = [_in_unit(b[1], unit) for b in bindings]
        bounds = [_in_unit(b[2], unit) for b in bindings]
        colours = ["#196c2e" if b[3] else "#b3261e" for b in bindings]
        axes.step(xs, bounds, where="mid", color="#555555", linewidth=1.2, label="bound")
        axes.scatter(xs, observed, c=colours, s=18, zorder=3, label="observed")
        axes.set_ylabel(unit or "value")
        if len(bindings) <= 40:
            axes.set_xticks(xs, [b[0] for b in bindings], rotation=60, fontsize=7, ha="right")
        else:
            axes.set_xticks([])
            axes.set_xlabel(f"{len(bindings)} bindings")
        axes.set_title(f"{rule['kind']} {rule['name']}", fontsize=10)
        axes.legend(loc="best", fontsize=7)
        axes.grid(axis="y", linewidth=0.3)
        return _svg(figure)


def _distributions(figure_class: Any, table: Mapping[str, Any]) -> list[dict[str, Any]]:
    """For a report table whose first column groups its rows (a few text values, each on
    several rows: the arms of a comparison, say), each numeric column's values per group,
    as dots with the group's median: SVG text, at most MAX_DISTRIBUTIONS per table."""
    import matplotlib

    rows, columns = table["rows"], table["columns"]
    keys = [row["values"][0] for row in rows] if rows else []
    if len(columns) < 2 or not keys or not all(isinstance(k, str) for k in keys):
        return []
    groups = sorted(set(keys))
    if not 2 <= len(groups) <= MAX_GROUPS or len(groups) == len(rows):
        return []
    found = []
    for index, column in enumerate(columns[1:], start=1):
        cells = [row["values"][index] for row in rows]
        values = [_number(cell) for cell in cells]
        # a null cell (an indeterminate trial, say) is left out; any other non-number
        # (text, a flag, an error) makes the column no distribution
        if any(v is None and c is not None for v, c in zip(values, cells, strict=True)):
            continue
        if all(v is None for v in values):
            continue
        by_group = {
            g: [float(v) for k, v in zip(keys, values, strict=True) if k == g and v is not None]
            for g in groups
        }
        with matplotlib.rc_context(plots.RC):
            figure = figure_class(figsize=(6, 2.6), layout="constrained")
            axes = figure.subplots()
            for x, group in enumerate(groups):
                points = by_group[group]
                spread = [
                    x + 0.25 * (i / max(len(points) - 1, 1) - 0.5) for i in range(len(points))
                ]
                axes.scatter(spread, points, s=16, color="#1f5fa8", zorder=3)
                if points:
                    middle = (
                        sorted(points)[len(points) // 2]
                        if len(points) % 2
                        else (sum(sorted(points)[len(points) // 2 - 1 : len(points) // 2 + 1]) / 2)
                    )
                    axes.hlines(middle, x - 0.3, x + 0.3, color="#555555", linewidth=1.5)
            axes.set_xticks(range(len(groups)), groups, fontsize=8)
            axes.set_ylabel(column, fontsize=8)
            axes.set_title(f"{table['name']}: {column} by {columns[0]}", fontsize=10)
            axes.grid(axis="y", linewidth=0.3)
            found.append(
                {
                    "name": f"{table['name']}-{column}",
                    "table": table["name"],
                    "column": column,
                    "by": columns[0],
                    "svg": _svg(figure),
                }
            )
        if len(found) == MAX_DISTRIBUTIONS:
            break
    return found


def _ledgers(
    figure_class: Any, budgets: list[Mapping[str, Any]], units: Mapping[str, str]
) -> list[dict[str, Any]]:
    """A plot of each budget's ledger (its running totals) against its ceiling."""
    found = []
    for rule in budgets:
        bindings = plots.ledgers(rule)
        if bindings:
            unit = units.get(rule["name"])
            found.append(
                {
                    "name": rule["name"],
                    "unit": unit,
                    "bindings": len(bindings),
                    "drawn": min(len(bindings), plots.MAX_LEDGERS),
                    "failing": sum(not o["passed"] for o in bindings),
                    "source": rule.get("source"),
                    "svg": plots.ledger_plot(figure_class, rule, unit),
                }
            )
    return found


def _boxes(figure_class: Any, table: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A box plot per metric of a table of summary statistics by group."""
    return [
        {
            "name": f"{table['name']}-{metric or 'value'}",
            "table": table["name"],
            "metric": metric,
            "groups": len(groups),
            "svg": plots.box_plot(figure_class, table, metric, groups),
        }
        for metric, groups in plots.summary_boxes(table)
    ]


def _singles(
    figure_class: Any, rules: list[Mapping[str, Any]], units: Mapping[str, str]
) -> dict[str, Any] | None:
    """One plot of every gate and budget that compares a single binding with a nonzero
    bound by `<`, `<=`, `>` or `>=`; those against a bound of 0 or below (where observed
    over bound says nothing, or the opposite) are named, not drawn."""
    singles, zero = [], []
    for rule in rules:
        bindings = _measured(rule)
        op = next((o["op"] for o in rule["observations"] if o.get("op")), "")
        if len(bindings) != 1 or op not in ("<", "<=", ">", ">="):
            continue
        _, observed, bound, held = bindings[0]
        if bound <= 0:
            zero.append(rule["name"])
            continue
        unit = units.get(rule["name"])
        label = f"{rule['name']}: {_shown(observed, unit)} {op} {_shown(bound, unit)}"
        singles.append(plots.Single(label, float(observed / bound), held))
    if not singles:
        return None
    return {
        "count": len(singles),
        "failing": sum(not s.held for s in singles),
        "zero": zero,
        "svg": plots.single_plot(figure_class, singles),
    }


def _rule_row(rule: Mapping[str, Any], unit: str | None, vacuous: set[str]) -> dict[str, Any]:
    bindings = _measured(rule)
    failing = [b for b in bindings if not b[3]]
    passing = [b for b in bindings if b[3]]
    shown = ""
    op = next((o["op"] for o in rule["observations"] if o.get("op")), "")
    if failing:
        ids, observed, bound, _ = failing[0]
        shown = f"{ids}: {_shown(observed, unit)} {op} {_shown(bound, unit)} fails"
    elif passing and op in ("<", "<=", ">", ">="):
        below = op in ("<", "<=")
        ids, observed, bound, _ = min(
            passing, key=lambda b: (b[2] - b[1]) if below else (b[1] - b[2])
        )
        shown = f"{ids}: {_shown(observed, unit)} {op} {_shown(bound, unit)}"
    elif not rule["passed"]:
        why: Mapping[str, Any] = next((o for o in rule["observations"] if not o["passed"]), {})
        shown = why.get("error") or ", ".join(why.get("failed_rules", ())) or "fails"
    outcome = "fail" if not rule["passed"] else "vacuous" if rule["name"] in vacuous else "pass"
    return {
        "kind": rule["kind"],
        "name": rule["name"],
        "outcome": outcome,
        "binding": shown,
        "source": rule.get("source"),
    }


def _cell(value: Any) -> dict[str, Any]:
    number = _number(value)
    if number is not None:
        return {"text": rounded(number), "num": True}
    if isinstance(value, dict) and "error" in value:
        return {"text": f"error: {value['error']}", "num": False}
    if isinstance(value, dict) and isinstance(value.get("unavailable"), list):
        return {"text": rounded(Unavailable(tuple(value["unavailable"])))}
    return {"text": rounded(value) if value is None or isinstance(value, bool) else str(value)}


def _place(where: Mapping[str, Any]) -> str:
    place = str(where.get("file") or where.get("document") or "")
    if "line" in where:
        place += f":{where['line']}" + (f":{where['column']}" if "column" in where else "")
    if "pointer" in where:
        place += f" ({where['pointer'] or '/'})"
    return place


def html_report(data: Mapping[str, Any], title: str, units: Mapping[str, str], counts: str) -> str:
    """The page for the JSON data of `check` (a protocol report) or `evaluate`."""
    jinja2, figure_class = _libraries()
    rules = [*data["gates"], *data["budgets"]]
    vacuous = {w.get("rule") for w in data["warnings"]}
    drawn = []
    for rule in rules:
        bindings = _measured(rule)
        if len(bindings) >= 2:
            unit = units.get(rule["name"])
            beside = plots.paired(rule, data["tables"], unit)
            drawn.append(
                {
                    "name": rule["name"],
                    "kind": rule["kind"],
                    "unit": unit,
                    "op": bindings and next(o["op"] for o in rule["observations"] if o.get("op")),
                    "count": len(bindings),
                    "failing": sum(not b[3] for b in bindings),
                    "source": rule.get("source"),
                    "table": beside.table if beside else None,
                    "series": [name for name, _ in beside.series] if beside else [],
                    "svg": (
                        plots.paired_plot(figure_class, rule, beside, unit)
                        if beside
                        else _plot(figure_class, rule, unit)
                    ),
                }
            )
    inputs = data.get("inputs") or {
        name: {"file": d["path"], "sha256": d.get("sha256", "absent")}
        for name, d in data.get("documents", {}).items()
    }
    context = {
        "title": title,
        "version": rulecheck_version(),
        "banners": data.get("banners", []),
        "ruleset_hash": data["ruleset_hash"],
        "protocol": data.get("protocol"),
        "verdict": data.get("verdict"),
        "admitted": data.get("admitted"),
        "passed": data["passed"],
        "counts": counts,
        "decisions": data["decisions"],
        "tables": [
            {
                "name": t["name"],
                "source": t.get("source"),
                "columns": t["columns"],
                "rows": [
                    {"ids": r["ids"], "cells": [_cell(v) for v in r["values"]]} for r in t["rows"]
                ],
            }
            for t in data["tables"]
        ],
        "plots": drawn,
        "singles": _singles(figure_class, rules, units),
        "ledgers": _ledgers(figure_class, data["budgets"], units),
        "distributions": [d for t in data["tables"] for d in _distributions(figure_class, t)],
        "boxes": [b for t in data["tables"] for b in _boxes(figure_class, t)],
        "violations": [{**v, "where": _place(v["location"])} for v in data["violations"]],
        "input_warnings": [
            {**w, "where": _place(w["location"])} for w in data["warnings"] if not w.get("rule")
        ],
        "rules": [_rule_row(r, units.get(r["name"]), vacuous) for r in rules],
        "inputs": inputs,
    }
    template_text = (
        resources.files("engine.report").joinpath("templates", "report.html.j2").read_text("utf-8")
    )
    environment = jinja2.Environment(autoescape=True, keep_trailing_newline=True)
    return str(environment.from_string(template_text).render(**context))
