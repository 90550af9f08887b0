"""The builtin table is the one list: the checker, the compiler and the docs all follow it."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest

from engine.builtins import BUILTINS, builtins_markdown
from engine.evaluate import runtime
from tests.cli_run import CliRun

ROOT = Path(__file__).resolve().parent.parent


def test_docs_table_is_generated_from_the_registry() -> None:
    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- builtins: [^\n]*-->\n(.*?)<!-- /builtins -->", text, re.S)
    assert found is not None
    assert found.group(1) == builtins_markdown()


@pytest.mark.parametrize("builtin", [b for b in BUILTINS if b.runtime], ids=lambda b: b.name)
def test_every_runtime_function_exists(builtin: object) -> None:
    assert callable(getattr(runtime, builtin.runtime))  # type: ignore[attr-defined]


# `passed` names one rule and says so in its own message (TYPE_MISMATCH).
@pytest.mark.parametrize(
    "builtin",
    [b for b in BUILTINS if b.arity is not None and b.name != "passed"],
    ids=lambda b: b.name,
)
def test_the_checker_holds_each_builtin_to_its_arity(builtin: object, tmp_path: Path) -> None:
    name, arity = builtin.name, builtin.arity  # type: ignore[attr-defined]
    args = ", ".join(['"x"'] * (arity + 1))
    path = tmp_path / "arity.rules"
    path.write_text(f'ruleset a version "1"\nconst c = {name}({args})\n', encoding="utf-8")
    run = CliRun(["lint", str(path), "--format", "json"])
    assert run.exit_code == 1
    codes = [d["code"] for d in run.data["diagnostics"] if d["severity"] == "error"]
    assert "ARITY_MISMATCH" in codes


@pytest.mark.parametrize(("value", "number"), [("E1", 1), ("E12", 12), ("EV300", 300)])
def test_id_number_is_the_number_after_the_letters(value: str, number: int) -> None:
    assert runtime.id_number(value) == number


@pytest.mark.parametrize("value", ["E", "E01", "", 12], ids=["none", "leading_zero", "empty", "nt"])
def test_id_number_of_no_id_is_an_evaluation_error(value: object) -> None:
    with pytest.raises(runtime.EvaluationError, match="id_number"):
        runtime.id_number(value)


@pytest.mark.parametrize(
    "values",
    [
        # neighbours of one float out of their exact order: 2**53 + 1 rounds down
        [2**53 + 1, 2**53, 2**53 - 1, 2**53 + 2],
        [Fraction(10**20 + 1, 10**20), 1, Fraction(10**20 - 1, 10**20), Fraction(1, 3)],
        # beyond the floats
        [10**400, -(10**400), 3, Fraction(7, 2)],
        # equal values of two types keep their order, as `sorted` keeps it
        [Fraction(4, 2), 2, 1, Fraction(2, 1), 2],
    ],
)
def test_the_order_statistics_sort_as_exactly_as_sorted(values: list[object]) -> None:
    """Median and quartiles sort by float first (a Fraction comparison is slow), then
    exactly wherever the floats cannot tell: the order is `sorted`'s, object for object."""
    ordered = runtime._sorted_numbers(values, "median")
    assert [id(v) for v in ordered] == [id(v) for v in sorted(values)]  # type: ignore[type-var]
    assert runtime.median(values) == runtime.median(sorted(values))  # type: ignore[type-var]


@pytest.mark.parametrize(
    "values",
    [
        [3, 1, 2],
        [Fraction(4, 2), 2, 1, Fraction(2, 1), 2, 1],  # equal extremes of two types
        [2**53 + 1, 2**53, 2**53 - 1, 2**53 + 2],
        [10**400, -(10**400), 3, Fraction(7, 2), -(10**400)],
        [5],
    ],
)
def test_min_and_max_of_a_sorted_distribution_are_those_of_min_and_max(
    values: list[object],
) -> None:
    """After a median, `min` and `max` read the sorted list: the same object as Python's
    `min` and `max` give (the first of equal extremes), whatever the order of the calls."""
    expected = (id(min(values)), id(max(values)))  # type: ignore[type-var]
    assert (id(runtime.minimum(values)), id(runtime.maximum(values))) == expected
    runtime.median(values)
    assert (id(runtime.minimum(values)), id(runtime.maximum(values))) == expected
    assert runtime._LAST_SORTED[0] is values  # the sorted list was the one read
