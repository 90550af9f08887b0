"""The plots of `--format html` that read more than one gate's bindings: a gate beside the
columns of a report table it compares (each series of the table side by side against the
gate's bound), a budget's ledger (its running total against its ceiling), and a table of
summary statistics per group (a box per row).

Everything is read from the JSON report: names, bounds and units come from the rules that
made it, never from here. Each function returns SVG text drawn by matplotlib.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from engine.units import UNITS

# The SVG is byte-stable: a fixed hash salt, text kept as text, no date.
RC: dict[Any, Any] = {"svg.hashsalt": "rulecheck", "svg.fonttype": "none"}
PASS_COLOUR, FAIL_COLOUR, BOUND_COLOUR = "#196c2e", "#b3261e", "#555555"
SERIES_COLOURS = ("#1f5fa8", "#d9822b", "#6a3d9a", "#33a02c", "#e31a1c", "#b15928")
# A ledger plot draws at most this many bindings' ledgers (the rest are in the JSON report).
MAX_LEDGERS = 40
# The columns of a summary-statistics table, by what they hold; a column is named the
# statistic itself or the statistic joined to a metric by `_` (`median_seconds`,
# `seconds_median`).
STATISTICS: dict[str, tuple[str, ...]] = {
    "n": ("n", "count"),
    "min": ("min", "minimum"),
    "q1": ("q1", "p25", "lower_quartile", "quartile_1"),
    "median": ("median", "p50"),
    "q3": ("q3", "p75", "upper_quartile", "quartile_3"),
    "max": ("max", "maximum"),
}


def number(value: Any) -> Fraction | None:
    """An exact JSON value (`7`, `"4/5"`) as a fraction; None when it is not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(value)
        except (ValueError, ZeroDivisionError):
            return None
    return None


def in_unit(value: Fraction, unit: str | None) -> float:
    """A value in base units as a float in `unit` (the unit the rule's bound is written in)."""
    return float(value / UNITS[unit].scale) if unit in UNITS else float(value)


def svg(figure: Any) -> str:
    """A figure as inline SVG text (no XML declaration or doctype)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


@dataclass(frozen=True)
class Paired:
    """A gate's bindings found as one column of a report table whose name has siblings
    (`median_R_A`, `median_R_B`): the rows, each series and each row's bound."""

    table: str
    labels: tuple[str, ...]
    series: tuple[tuple[str, tuple[float | None, ...]], ...]
    bounds: tuple[float, ...]
    held: tuple[bool, ...]


def _stem(column: str) -> str | None:
    head, _, tail = column.rpartition("_")
    return head if head and tail else None


def paired(
    rule: Mapping[str, Any], tables: Sequence[Mapping[str, Any]], unit: str | None
) -> Paired | None:
    """The report table column that holds exactly what `rule` observed, row by row (rows
    matched by their ids), with the columns named as it is but for the last `_` part: the
    series a reader compares the gate's one with. None when there is no such table."""
    bindings = [
        (tuple(o["ids"]), number(o.get("observed")), number(o.get("bound")), bool(o["passed"]))
        for o in rule["observations"]
    ]
    if len(bindings) < 2 or any(not ids or v is None or b is None for ids, v, b, _ in bindings):
        return None
    for table in tables:
        rows = {tuple(row["ids"]): row["values"] for row in table["rows"]}
        if not all(ids in rows for ids, *_ in bindings):
            continue
        columns = list(table["columns"])
        for index, column in enumerate(columns):
            if any(number(rows[ids][index]) != value for ids, value, *_ in bindings):
                continue
            stem = _stem(column)
            siblings = [i for i, c in enumerate(columns) if stem is not None and _stem(c) == stem]
            if len(siblings) < 2:
                continue
            series = []
            for i in siblings:
                values = [number(rows[ids][i]) for ids, *_ in bindings]
                series.append((columns[i], tuple(_maybe(v, unit) for v in values)))
            return Paired(
                table=str(table["name"]),
                labels=tuple(", ".join(ids) for ids, *_ in bindings),
                series=tuple(series),
                bounds=tuple(in_unit(b, unit) for _, _, b, _ in bindings if b is not None),
                held=tuple(held for *_, held in bindings),
            )
    return None


def _maybe(value: Fraction | None, unit: str | None) -> float | None:
    return None if value is None else in_unit(value, unit)


def paired_plot(figure_class: Any, rule: Mapping[str, Any], found: Paired, unit: str | None) -> str:
    """Each series side by side per row (the gate's own series ringed red where it fails),
    with the gate's bound as a line."""
    import matplotlib

    with matplotlib.rc_context(RC):
        figure = figure_class(figsize=(9, 2.8), layout="constrained")
        axes = figure.subplots()
        xs = list(range(len(found.labels)))
        width = 0.8 / len(found.series)
        for n, (column, values) in enumerate(found.series):
            offset = (n - (len(found.series) - 1) / 2) * width
            shown = [(x + offset, v) for x, v in zip(xs, values, strict=True) if v is not None]
            axes.bar(
                [x for x, _ in shown],
                [v for _, v in shown],
                width=width * 0.9,
                color=SERIES_COLOURS[n % len(SERIES_COLOURS)],
                label=column,
                zorder=2,
            )
        failing = [x for x, held in zip(xs, found.held, strict=True) if not held]
        if failing:
            axes.scatter(
                failing,
                [found.bounds[x] for x in failing],
                marker="x",
                s=40,
                color=FAIL_COLOUR,
                zorder=4,
                label="fails",
            )
        axes.hlines(
            found.bounds,
            [x - 0.45 for x in xs],
            [x + 0.45 for x in xs],
            color=BOUND_COLOUR,
            linewidth=1.4,
            label=f"bound ({rule['name']})",
            zorder=3,
        )
        axes.set_xticks(xs, found.labels, rotation=45 if len(xs) > 12 else 0, fontsize=8)
        axes.set_ylabel(unit or "value", fontsize=8)
        axes.set_title(f"{rule['kind']} {rule['name']}: table {found.table}", fontsize=10)
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
        axes.grid(axis="y", linewidth=0.3)
        return svg(figure)


def ledgers(rule: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The bindings of a budget whose ledger has entries, when some ledger has several (a
    ledger of one entry is its binding's dot in the plot of bindings against the bound)."""
    found = [o for o in rule["observations"] if o.get("running_totals")]
    return found if any(len(o["running_totals"]) >= 2 for o in found) else []


def ledger_plot(figure_class: Any, rule: Mapping[str, Any], unit: str | None) -> str:
    """Each binding's running total, entry by entry, against the budget's ceiling (and the
    totals entries were admitted on, when the budget reserves); a broken ceiling is marked
    at the entry that broke it."""
    import matplotlib

    found = ledgers(rule)[:MAX_LEDGERS]
    single = len(found) == 1
    with matplotlib.rc_context(RC):
        figure = figure_class(figsize=(9, 2.8), layout="constrained")
        axes = figure.subplots()
        longest = 0
        for observation in found:
            steps = observation["running_totals"]
            longest = max(longest, len(steps))
            xs = list(range(1, len(steps) + 1))
            totals = [_value(s["total"], unit) for s in steps]
            colour = PASS_COLOUR if observation["passed"] else FAIL_COLOUR
            axes.step(
                xs,
                totals,
                where="post",
                color=colour,
                linewidth=1.2 if single else 0.6,
                label="running total" if single else None,
            )
            if any("reserved" in s for s in steps):
                reserved = [_value(s.get("reserved", s["total"]), unit) for s in steps]
                axes.scatter(
                    xs,
                    reserved,
                    s=6,
                    color="#8a6d00",
                    zorder=3,
                    label="admitted on (with reservation)" if single else None,
                )
            if not observation["passed"] and "observed" in observation:
                axes.scatter(
                    [len(steps)],
                    [_value(observation["observed"], unit)],
                    marker="x",
                    s=50,
                    color=FAIL_COLOUR,
                    zorder=4,
                    label="breaks the ceiling",
                )
        ceilings = sorted({_value(o["bound"], unit) for o in found if "bound" in o})
        for ceiling in ceilings:
            axes.axhline(
                ceiling,
                color=BOUND_COLOUR,
                linewidth=1.4,
                linestyle="--",
                label=f"ceiling {rule['observations'][0].get('op', '')} {ceiling:,.10g}"
                if ceiling == ceilings[0]
                else None,
            )
        axes.set_xlabel(
            f"ledger entries in order ({longest})"
            if single
            else f"ledger entries in order, {len(found)} bindings",
            fontsize=8,
        )
        axes.set_ylabel(unit or "total", fontsize=8)
        axes.set_xlim(0, max(longest, 1) + 0.5)
        axes.set_title(f"budget {rule['name']}: running total against its ceiling", fontsize=10)
        axes.legend(loc="upper left", fontsize=7)
        axes.grid(axis="y", linewidth=0.3)
        return svg(figure)


def _value(value: Any, unit: str | None) -> float:
    found = number(value)
    return 0.0 if found is None else in_unit(found, unit)


def _statistic(column: str) -> tuple[str, str] | None:
    """(statistic, metric) a column is named for: `median` is ("median", ""),
    `median_seconds` and `seconds_median` are ("median", "seconds")."""
    for statistic, names in STATISTICS.items():
        for name in names:
            if column == name:
                return statistic, ""
            if column.startswith(name + "_"):
                return statistic, column[len(name) + 1 :]
            if column.endswith("_" + name):
                return statistic, column[: -len(name) - 1]
    return None


def summary_boxes(table: Mapping[str, Any]) -> list[tuple[str, list[tuple[str, dict[str, float]]]]]:
    """For a report table with one row per group and, for a metric, its median, both
    quartiles, minimum and maximum as columns: per metric, each group's label and its box.
    A group is its first column when that is text, else its row's ids."""
    columns = list(table["columns"])
    found: dict[str, dict[str, int]] = {}
    for index, column in enumerate(columns):
        named = _statistic(column)
        if named is not None:
            found.setdefault(named[1], {})[named[0]] = index
    needed = {"min", "q1", "median", "q3", "max"}
    counted = found.get("", {}).get("n")  # a bare `n` column counts every metric's group
    boxes = []
    for metric, where in sorted(found.items()):
        if not needed <= where.keys():
            continue
        if "n" not in where and counted is not None:
            where = {**where, "n": counted}
        groups = []
        for row in table["rows"]:
            values = {s: number(row["values"][i]) for s, i in where.items()}
            if any(values[s] is None for s in needed):
                continue  # a group with no figures (no gradeable trial) has no box
            first = row["values"][0]
            text = isinstance(first, str) and _statistic(columns[0]) is None
            label = (first if text else "") or ", ".join(row["ids"]) or "all"
            groups.append((label, {s: float(v) for s, v in values.items() if v is not None}))
        if groups:
            boxes.append((metric, groups))
    return boxes


def box_plot(
    figure_class: Any,
    table: Mapping[str, Any],
    metric: str,
    groups: Sequence[tuple[str, Mapping[str, float]]],
) -> str:
    """A box per group: median, quartiles and the minimum and maximum as whiskers."""
    import matplotlib

    stats = [
        {
            "label": label + (f"\nn={s['n']:g}" if "n" in s else ""),
            "med": s["median"],
            "q1": s["q1"],
            "q3": s["q3"],
            "whislo": s["min"],
            "whishi": s["max"],
            "fliers": [],
        }
        for label, s in groups
    ]
    with matplotlib.rc_context(RC):
        figure = figure_class(figsize=(6, 2.8), layout="constrained")
        axes = figure.subplots()
        axes.bxp(stats, showfliers=False, patch_artist=False)
        axes.set_ylabel(metric or "value", fontsize=8)
        axes.tick_params(axis="x", labelsize=8)
        axes.set_title(f"{table['name']}: {metric or 'value'} per group", fontsize=10)
        axes.grid(axis="y", linewidth=0.3)
        return svg(figure)


@dataclass(frozen=True)
class Single:
    """A gate or budget with one binding compared against a bound: its label (name, values
    and units as the report words them), observed over bound, whether it held."""

    label: str
    ratio: float
    held: bool


def single_plot(figure_class: Any, singles: Sequence[Single]) -> str:
    """Each single comparison as its observed value over its bound (1 is the bound), so
    rules of every unit share one axis: aggregate ratios, campaign totals, rates."""
    import matplotlib

    with matplotlib.rc_context(RC):
        figure = figure_class(figsize=(9, 0.8 + 0.28 * len(singles)), layout="constrained")
        axes = figure.subplots()
        ys = list(range(len(singles)))[::-1]
        colours = [PASS_COLOUR if s.held else FAIL_COLOUR for s in singles]
        axes.barh(ys, [s.ratio for s in singles], color=colours, height=0.6, zorder=2)
        axes.axvline(1.0, color=BOUND_COLOUR, linewidth=1.4, linestyle="--", zorder=3)
        axes.set_yticks(ys, [s.label for s in singles], fontsize=7)
        axes.set_xlabel("observed / bound (the dashed line is the bound)", fontsize=8)
        axes.set_title("gates and budgets with one binding against their bounds", fontsize=10)
        axes.grid(axis="x", linewidth=0.3)
        return svg(figure)
