"""What a JSON Schema guarantees about the members of records, read soundly: the cases of
`tests/data/schema_types/cases.yaml` (adding a case means adding an entry there)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.bundle.schematypes import record_member_types

CASES = yaml.safe_load(
    (Path(__file__).parent / "data" / "schema_types" / "cases.yaml").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_member_types(case: dict[str, Any]) -> None:
    found = record_member_types(case["schema"], case["pointer"])
    assert {name: sorted(member.types) for name, member in found.items()} == {
        name: sorted(types) for name, types in case["types"].items()
    }
    items = {name: sorted(m.item_types) for name, m in found.items() if m.item_types}
    assert items == {name: sorted(types) for name, types in case.get("items", {}).items()}
