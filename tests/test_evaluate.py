"""`rulecheck evaluate GRAPH --input NAME=FILE ...`: any graph of the rules over named files.

Every case runs the CLI on a copy of `tests/data/evaluate/` (a small protocol: a YAML
catalogue, JSON Lines orders and a JSON policy, read as graph `shop`) with one edit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import CliRun

from engine.evaluate.links import EVALUATION_ERROR
from engine.limits import MAX_FINDINGS
from engine.report.output import to_json

DATA = Path(__file__).parent / "data" / "evaluate"
RULES = DATA / "shop.rules"
FILES = {"catalogue": "catalogue.yaml", "orders": "orders.jsonl", "policy": "policy.json"}


class Run(CliRun):
    """One CLI invocation, checked for a traceback, with its JSON report parsed."""

    def __init__(self, args: list[str]) -> None:
        super().__init__(args)
        self.assert_clean()

    def codes(self) -> list[str]:
        return [v["code"] for v in self.data["violations"]]


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    for name in FILES.values():
        shutil.copy(DATA / name, tmp_path / name)
    return tmp_path


def evaluate(folder: Path, *extra: str, files: dict[str, str] | None = None) -> Run:
    inputs = [f"--input={name}={folder / file}" for name, file in (files or FILES).items()]
    return Run(["evaluate", "shop", "--rules", str(RULES), *inputs, *extra])


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


# ---- a passing and a failing case of every rule ---------------------------------------------


def test_valid_inputs_pass(shop: Path) -> None:
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 0, run.stdout
    assert run.data["passed"] is True
    assert run.data["violations"] == []
    assert [g["passed"] for g in run.data["gates"]] == [True, True]
    assert run.data["decisions"][0]["verdict"] == "APPROVE"
    rows = run.data["tables"][0]["rows"]
    assert rows == [  # whole numbers are JSON integers however computed (2.50 * 2)
        {"ids": ["o1"], "values": [2, 5]},
        {"ids": ["o2"], "values": [1, 10]},
    ]


def test_unknown_item_is_located_in_the_json_lines_file(shop: Path) -> None:
    edit(shop / "orders.jsonl", '"sku": "B2"', '"sku": "Z9"')
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 1
    assert run.codes() == ["ORDER_UNKNOWN_ITEM"]
    violation = run.data["violations"][0]
    assert violation["ids"] == ["o2"]
    assert violation["rule"] == "orders_name_catalogued_items"
    assert len(violation["rule_hash"]) == 64
    assert violation["location"] == {
        "document": "orders",
        "file": str(shop / "orders.jsonl"),
        "pointer": "/1",
        "line": 2,
        "column": 1,
    }


def test_a_bad_price_is_located_in_the_yaml_file(shop: Path) -> None:
    edit(shop / "catalogue.yaml", "price: 10", "price: 0")
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 1
    assert run.codes() == ["ITEM_PRICE"]
    location = run.data["violations"][0]["location"]
    assert (location["pointer"], location["line"], location["column"]) == ("/items/1", 4, 5)


def test_a_bad_quantity_fails_its_link_rule(shop: Path) -> None:
    edit(shop / "orders.jsonl", '"quantity": 1}', '"quantity": 0}')
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 1
    assert run.codes() == ["ORDER_QUANTITY"]


def test_a_missing_quantity_is_an_evaluation_error_not_a_pass(shop: Path) -> None:
    edit(shop / "orders.jsonl", ', "quantity": 1}', "}")
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 1
    assert "ORDER_QUANTITY" not in run.codes()
    assert run.codes() and all(code == EVALUATION_ERROR for code in run.codes())


def test_spending_over_the_policy_fails_the_gate_and_changes_the_decision(shop: Path) -> None:
    edit(shop / "policy.json", '"max_total": 20', '"max_total": 14.99')
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 1
    assert run.data["violations"] == []
    gates = {g["name"]: g for g in run.data["gates"]}
    assert gates["spending_within_policy"]["passed"] is False
    observation = gates["spending_within_policy"]["observations"][0]
    assert (observation["observed"], observation["bound"]) == (15, "1499/100")
    assert run.data["decisions"][0]["verdict"] == "REVIEW"
    budget = run.data["budgets"][0]
    assert budget["passed"] is False
    assert budget["observations"][0]["crossing_entry"] == ["o2"]  # 5 + 10 crosses 14.99
    text = evaluate(shop)
    assert "FAIL budget spending_ledger: 1 of 1 fail" in text.stdout
    assert "all: running total 15 <= 14.9900, misses by 0.0100 at entry o2" in text.stdout
    exact = evaluate(shop, "--exact")
    assert "running total 15 <= 14.9900 (1499/100), misses by 0.0100 (1/100)" in exact.stdout


def test_a_ceiling_exactly_met_holds(shop: Path) -> None:
    edit(shop / "policy.json", '"max_total": 20', '"max_total": 15.00')
    assert evaluate(shop).exit_code == 0


def test_too_many_orders_fails_the_count_gate(shop: Path) -> None:
    edit(shop / "policy.json", '"max_orders": 3', '"max_orders": 1')
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 1
    assert {g["name"]: g["passed"] for g in run.data["gates"]} == {
        "spending_within_policy": True,
        "order_count_within_policy": False,
    }


# ---- reports ------------------------------------------------------------------------------


def test_json_report_is_byte_stable_and_lists_input_hashes(shop: Path) -> None:
    first = evaluate(shop, "--format", "json")
    second = evaluate(shop, "--format", "json")
    assert first.stdout == second.stdout
    assert first.stdout == to_json(first.data)  # canonical: sorted keys, one layout
    inputs = first.data["inputs"]
    assert sorted(inputs) == ["catalogue", "orders", "policy"]
    assert inputs["orders"]["format"] == "jsonl"
    assert all(len(item["sha256"]) == 64 for item in inputs.values())


def test_text_report_names_the_finding_its_rule_and_place(shop: Path) -> None:
    edit(shop / "orders.jsonl", '"sku": "B2"', '"sku": "Z9"')
    run = evaluate(shop)
    assert run.exit_code == 1
    assert (
        "FAILED: 2/2 gates pass, 1/1 budgets hold, 1 link rule violated (1 violation)" in run.stdout
    )
    assert "ORDER_UNKNOWN_ITEM: an order names an item that is not in the catalogue [o2]" in (
        run.stdout
    )
    assert f"at {shop / 'orders.jsonl'}:2:1 (/1); rule orders_name_catalogued_items" in run.stdout


def test_markdown_report_has_markdown_tables(shop: Path) -> None:
    run = evaluate(shop, "--format", "markdown", "--verbose")
    assert run.exit_code == 0
    assert "## orders\\_placed" in run.stdout
    assert "| ids | quantity | total |" in run.stdout


def test_inputs_are_never_modified(shop: Path) -> None:
    before = {name: (shop / name).read_bytes() for name in FILES.values()}
    evaluate(shop, "--format", "json")
    assert {name: (shop / name).read_bytes() for name in FILES.values()} == before


# ---- malformed inputs: exit 1, every problem located -----------------------------------------


def test_malformed_files_are_all_reported_with_their_lines(shop: Path) -> None:
    (shop / "orders.jsonl").write_text('{"id": "o1", "sku": "A1", "quantity": 2}\n{"id": \n')
    (shop / "catalogue.yaml").write_text("items:\n  - sku: A1\n    sku: A2\n    price: 1\n")
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 1
    found = {
        (d["code"], d["location"]["file"], d["location"].get("line"))
        for d in run.data["diagnostics"]
    }
    assert ("JSON_SYNTAX", str(shop / "orders.jsonl"), 2) in found
    assert ("YAML_DUPLICATE_KEY", str(shop / "catalogue.yaml"), 3) in found


def test_duplicate_json_key_is_refused(shop: Path) -> None:
    (shop / "policy.json").write_text('{"max_total": 20, "max_total": 30, "max_orders": 3}')
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 1
    assert [d["code"] for d in run.data["diagnostics"]] == ["JSON_DUPLICATE_KEY"]


# ---- usage errors: exit 2 ----------------------------------------------------------------------


def test_unknown_graph_suggests_the_declared_one(shop: Path) -> None:
    run = Run(["evaluate", "shp", "--rules", str(RULES), "--format", "json"])
    assert run.exit_code == 2
    diagnostic = run.data["diagnostics"][0]
    assert diagnostic["code"] == "USAGE_GRAPH"
    assert diagnostic["hint"] == "did you mean `shop`?"


def test_an_input_the_graph_does_not_read_is_refused(shop: Path) -> None:
    files = {**FILES, "polcy": "policy.json"}
    run = evaluate(shop, "--format", "json", files=files)
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["message"] == "graph `shop` reads no document `polcy`"
    assert run.data["diagnostics"][0]["hint"] == "did you mean `policy`?"


def test_a_missing_input_is_refused_never_taken_as_empty(shop: Path) -> None:
    files = {"catalogue": "catalogue.yaml", "orders": "orders.jsonl"}
    run = evaluate(shop, "--format", "json", files=files)
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["message"] == "graph `shop` also reads `policy`"


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ("--input=policy", "`policy` is not NAME=FILE"),
        ("--input==policy.json", "`=policy.json` is not NAME=FILE"),
        ("--input=policy={folder}/policy.txt", "is not a .json, .jsonl, .yaml or .yml file"),
        ("--input=orders={folder}/orders.jsonl", "input `orders` is given twice"),
    ],
)
def test_malformed_input_options(shop: Path, policy: str, message: str) -> None:
    others = [f"--input={name}={shop / FILES[name]}" for name in ("catalogue", "orders")]
    if "orders" in policy:
        others.append(f"--input=policy={shop / FILES['policy']}")
    option = policy.format(folder=shop)
    run = Run(["evaluate", "shop", "--rules", str(RULES), *others, option, "--format", "json"])
    assert run.exit_code == 2, run.stdout
    assert message in run.data["diagnostics"][0]["message"]


def test_an_unreadable_input_is_a_usage_error(shop: Path) -> None:
    (shop / "policy.json").unlink()
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 2
    assert run.data["diagnostics"][0]["code"] == "FILE_UNREADABLE"


def test_rows_over_a_set_come_in_one_order_whatever_the_hash_seed(shop: Path) -> None:
    # `for sku in ids(item)` iterates a set: string hashing differs per process, so the rows
    # must be put in a fixed order, as compiled link rules already do.
    command = [str(Path(sys.executable).parent / "rulecheck"), "evaluate", "shop"]
    command += ["--rules", str(RULES), "--format", "json"]
    command += [f"--input={name}={shop / file}" for name, file in FILES.items()]
    outputs = set()
    for seed in ("0", "1", "2", "3"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(command, capture_output=True, env=environment, check=False)
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
    rows = json.loads(outputs.pop())["tables"][1]["rows"]
    assert [row["ids"] for row in rows] == [["A1"], ["B2"]]


def test_yaml_aliases_are_refused_before_they_can_expand(shop: Path) -> None:
    # Nine lines of nested aliases would expand to 10^8 items ("billion laughs").
    lines = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 10)}]")
    (shop / "catalogue.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 1
    [diagnostic] = run.data["diagnostics"]
    assert diagnostic["code"] == "YAML_ALIAS"
    assert (diagnostic["location"]["line"], diagnostic["location"]["column"]) == (
        2,
        8,
    )  # the first `*a`


LONG_TEXT_RULES = """ruleset r version "1"
kind event of trace
  records trace ""
  key id
  attr text: text
metric doubled(e: event) = concat(e.text, e.text)
"""


def test_a_long_metric_text_is_held_only_until_the_next_one_and_stays_right() -> None:
    """A metric's long text values (a rendered prompt per record) are not all held for the
    whole evaluation: asked again after another, the value is computed anew, the same."""
    from engine.check import check_rules
    from engine.evaluate.compile import Compiler, Context
    from engine.evaluate.runtime import LONG_TEXT
    from engine.graph.build import Graph
    from engine.syntax.parse import parse_text

    checked = check_rules([parse_text(LONG_TEXT_RULES, "r.rules")])
    assert checked.ok, checked.diagnostics
    texts = {"a": "x" * LONG_TEXT, "b": "y" * LONG_TEXT, "c": "z"}
    graph = Graph(
        {"event": [("event", i) for i in range(len(texts))]},
        {("event", i): {"id": k, "text": t} for i, (k, t) in enumerate(texts.items())},
        {},
        {},
    )
    ctx = Context(graph)
    env = {"a": ("event", 0), "b": ("event", 1), "c": ("event", 2)}
    compiler = Compiler(checked)
    found = []
    for name in ("a", "b", "c", "a"):
        probe = parse_text(
            f'ruleset q version "1"\nconst probe = doubled({name})\n', "q.rules"
        ).declarations[0]
        found.append(compiler.expr(probe.value)(ctx, env))  # type: ignore[union-attr]
    assert found == [texts["a"] * 2, texts["b"] * 2, "zz", texts["a"] * 2]
    table = ctx.memo["doubled"]  # the metric's own memo table
    held = [v for v in table.values() if isinstance(v, str) and len(v) > LONG_TEXT]
    assert held == [texts["a"] * 2]  # the last long text only; the short one is kept too
    assert "zz" in table.values()


MEMO_RULES = """ruleset r version "1"
kind event of trace
  records trace ""
  key id
  attr text: text
metric same_text(a: event, b: event) = a.text == b.text
metric shouted(e: event) = concat(e.text, "!")
metric alike(e: event) = having(event, {"text": e.text})
"""


def test_a_metric_of_comparisons_only_is_computed_not_memoised_and_others_by_argument() -> None:
    """A metric of attribute reads and comparisons costs less than its memo entry, which a
    call per pair of records would hold for the whole evaluation: it is computed each time;
    so is a keyed look-up (`having`), whose index the context holds already. Any other
    metric has one memo table, keyed by its argument (a node) itself."""
    from engine.check import check_rules
    from engine.evaluate.compile import Compiler, Context
    from engine.graph.build import Graph
    from engine.syntax.parse import parse_text

    checked = check_rules([parse_text(MEMO_RULES, "r.rules")])
    assert checked.ok, checked.diagnostics
    texts = ["a", "a", "b"]
    graph = Graph(
        {"event": [("event", i) for i in range(len(texts))]},
        {("event", i): {"id": f"e{i}", "text": t} for i, t in enumerate(texts)},
        {},
        {},
    )
    ctx = Context(graph)
    env = {"x": ("event", 0), "y": ("event", 1), "z": ("event", 2)}
    compiler = Compiler(checked)

    def probe(expression: str) -> object:
        text = f'ruleset q version "1"\nconst probe = {expression}\n'
        decl = parse_text(text, "q.rules").declarations[0]
        return compiler.expr(decl.value)(ctx, env)  # type: ignore[union-attr]

    assert [probe("same_text(x, y)"), probe("same_text(x, z)")] == [True, False]
    assert "same_text" not in ctx.memo
    assert probe("alike(y)") == [("event", 0), ("event", 1)] and "alike" not in ctx.memo
    assert probe("shouted(z)") == "b!" and probe("shouted(z)") == "b!"
    assert ctx.memo["shouted"] == {("event", 2): "b!"}


def test_a_rule_lists_its_first_violations_and_counts_the_rest(shop: Path) -> None:
    count = MAX_FINDINGS + 250
    orders = "".join(
        json.dumps({"id": f"O{n}", "sku": "A1", "quantity": 0}) + "\n" for n in range(count)
    )
    (shop / "orders.jsonl").write_text(orders, encoding="utf-8")
    run = evaluate(shop, "--format", "json")
    assert run.exit_code == 1
    found = [v for v in run.data["violations"] if v["rule"] == "quantities_are_positive"]
    assert len(found) == MAX_FINDINGS + 1
    assert [v["ids"] for v in found[:2]] == [["O0"], ["O1"]]
    last = found[-1]
    assert last["code"] == "ORDER_QUANTITY" and last["not_listed"] == 250
    assert last["message"] == "250 more violations of this rule are not listed (1,250 in all)"
    assert all("not_listed" not in v for v in found[:-1])
    text = evaluate(shop)
    assert f"VIOLATIONS ({count})" in text.stdout
    assert f"1 link rule violated ({count} violations)" in text.stdout
