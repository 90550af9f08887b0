"""The compiled fast path of the cerberus schemas gives cerberus's own verdict.

The YAML documents of the shipped campaign, the rules lock, and random mutations of them
are validated by cerberus (the reference) and by the translated, compiled check; both must
accept and refuse the same documents.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.bundle.cerberus_fast import UnsupportedRule, compile_cerberus
from engine.bundle.yamldoc import cerberus_validator, load_schema, safe_yaml, strict_validator
from engine.cli import main

CAMPAIGN = Path(__file__).resolve().parent.parent / "controls" / "campaign"
SCHEMAS = Path(__file__).resolve().parent.parent / "manifests" / "schemas"
DOCUMENTS = {
    "execution_manifest": CAMPAIGN / "manifest.yaml",
    "task_registry": CAMPAIGN / "tasks.yaml",
    "truth": CAMPAIGN / "truth" / "T1.yaml",
    "adjudication_manifest": CAMPAIGN / "adjudication_manifest.yaml",
    "rules_lock": CAMPAIGN / "rules.lock",
}
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 5), st.sampled_from(["", "x", "T1", "0" * 64])
)


def _document(name: str) -> Any:
    return yaml.safe_load(DOCUMENTS[name].read_text(encoding="utf-8"))


def _small(document: Any) -> Any:
    """The document with every list cut to 12 items (cerberus is slow on long lists)."""
    if isinstance(document, dict):
        return {key: _small(value) for key, value in document.items()}
    if isinstance(document, list):
        return [_small(item) for item in document[:12]]
    return document


def _cerberus_accepts(name: str, document: Any) -> bool:
    return bool(strict_validator(load_schema(name)).validate(document))


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            found += _paths(item, (*prefix, index))
    return found


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_shipped_documents_pass_both(name: str) -> None:
    document = _document(name)
    assert _cerberus_accepts(name, document)
    assert compile_cerberus(load_schema(name))(document) == []


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_verdicts_agree_on_mutations(name: str, data: st.DataObject) -> None:
    document = _small(_document(name))
    path = data.draw(st.sampled_from(_paths(document)))
    parent = document
    for part in path[:-1]:
        parent = parent[part]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(SCALARS)
    fast = compile_cerberus(load_schema(name))(document) == []
    assert fast == _cerberus_accepts(name, document)


def test_an_untranslated_rule_is_refused() -> None:
    with pytest.raises(UnsupportedRule, match="coerce"):
        compile_cerberus({"x": {"type": "string", "coerce": "int"}})


PROTOCOL = Path(__file__).parent / "data" / "cerberus" / "protocol.rules"
CASES = yaml.safe_load((Path(__file__).parent / "data" / "cerberus" / "cases.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_a_users_cerberus_schema_gets_cerberus_verdict(case: dict[str, Any]) -> None:
    schema, document = case["schema"], case["document"]
    assert bool(strict_validator(schema).validate(document)) == case["accepted"]
    for checked in (False, True):  # cerberus made at once, or only for a refused document
        problems = cerberus_validator(schema, checked=checked)(document)
        assert (problems == []) == case["accepted"], problems


@pytest.mark.parametrize(
    ("rules", "said"),
    [
        ("{type: integer, allowed: 5}", "'allowed': ['must be of container"),
        ("{type: string, regex: 5}", "'regex': ['must be of string"),
    ],
)
def test_a_malformed_cerberus_schema_is_unusable_not_a_crash(
    tmp_path: Path, rules: str, said: str
) -> None:
    schema = f"items: {{type: list, schema: {{type: dict, schema: {{n: {rules}}}}}}}\n"
    (tmp_path / "items.schema.yaml").write_text(schema)
    (tmp_path / "p.rules").write_bytes(PROTOCOL.read_bytes())
    run = CliRunner().invoke(main, ["lint", str(tmp_path / "p.rules"), "--format", "json"])
    assert run.exit_code == 1, run.output
    [found] = json.loads(run.output)["diagnostics"]
    assert found["code"] == "SCHEMA_INVALID"
    assert "is unusable: not a cerberus schema" in found["message"] and said in found["message"]


def test_a_schema_recorded_as_checked_but_not_one_refuses_instead_of_crashing() -> None:
    """A cache entry can only say what cerberus said: should one lie, the document is
    refused with cerberus's complaint about the schema, never a crash."""
    validate = cerberus_validator({"n": {"type": "integer", "nullable": "yes"}}, checked=True)
    assert validate({"n": 3}) == []  # accepted by the compiled check: cerberus never asked
    [(pointer, keyword, message)] = validate({"n": "x"})
    assert (pointer, keyword) == ("", "cerberus")
    assert message.startswith("not a cerberus schema: ") and "boolean" in message
    with pytest.raises(ValueError, match="not a cerberus schema"):
        cerberus_validator({"n": {"type": "integer", "nullable": "yes"}})


def _rules(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    """Cerberus rules of one field, made of the rules the compiled check translates: a
    type and at most two other rules, so that some documents pass."""
    scalars = ["integer", "string", "boolean", "float", "number"]
    kinds = st.sampled_from([*scalars, "list"] + ["dict"] * (6 if depth == 0 else 1))

    def rules_of(kind: str) -> st.SearchStrategy[dict[str, Any]]:
        optional: dict[str, st.SearchStrategy[Any]] = {
            "empty": st.booleans(),
            "nullable": st.booleans(),
        }
        if kind in ("string", "integer"):
            optional["allowed"] = st.lists(st.sampled_from(["a", "b", 1, 2]), min_size=1)
        if kind == "string":
            optional["regex"] = st.sampled_from(["[a-z]+", "a", "A?"])
        if kind in ("integer", "number", "float"):
            optional["min"] = optional["max"] = st.sampled_from([0, 1, 1.5])
        if depth < 2 and kind == "dict":
            nested = st.deferred(lambda: _rules(depth + 1))
            optional["schema"] = st.dictionaries(st.sampled_from(["a", "b"]), nested, max_size=2)
            optional["keysrules"] = st.fixed_dictionaries(
                {"type": st.just("string")}, optional={"regex": st.sampled_from(["[a-z]+"])}
            )
            optional["valuesrules"] = nested
        if depth < 2 and kind == "list":
            optional["schema"] = st.deferred(lambda: _rules(depth + 1))
        chosen = st.lists(st.sampled_from(sorted(optional)), max_size=2, unique=True)
        return chosen.flatmap(
            lambda names: st.fixed_dictionaries(
                {"type": st.just(kind), **{name: optional[name] for name in names}}
            )
        )

    return kinds.flatmap(rules_of)


SCALAR_VALUES = [None, True, 0, 1, 1.0, 1.5, "", "a", "A", [], {}]


def _document_for(rules: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values shaped like `rules` (a mapping with the members its `schema` names, a list
    of its items), with any scalar where a scalar goes: most near a pass or a refusal."""
    nested = rules.get("schema")
    if rules["type"] == "dict" and isinstance(nested, dict):
        members = {name: _document_for(inner) for name, inner in nested.items()}
        return st.one_of(st.fixed_dictionaries(members), st.sampled_from(SCALAR_VALUES))
    if rules["type"] == "dict":
        keys = st.sampled_from(["a", "b", "A", ""])
        return st.dictionaries(keys, st.sampled_from(SCALAR_VALUES), max_size=2)
    if rules["type"] == "list" and isinstance(nested, dict):
        return st.lists(_document_for(nested), max_size=2)
    return st.sampled_from(SCALAR_VALUES)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_compiled_check_never_accepts_what_cerberus_refuses(data: st.DataObject) -> None:
    rules = data.draw(_rules(0))
    schema, document = {"f": rules}, {"f": data.draw(_document_for(rules))}
    try:
        reference = strict_validator(schema)
    except Exception:  # cerberus's SchemaError: not a schema, nothing to compare
        return
    if compile_cerberus(schema)(document) == []:
        assert reference.validate(document), (schema, document, reference.errors)


@pytest.mark.parametrize("path", sorted(SCHEMAS.glob("*.yaml")), ids=lambda path: path.name)
def test_a_schema_file_reads_as_pyyaml_s_safe_loader_reads_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert safe_yaml(text) == yaml.safe_load(text)
