"""The engine's source identity: the sha256 of a `SHA256  PATH` listing of a package's
Python modules, shipped data under `_data` left out (`engine.resources`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from engine.resources import _sources_digest, engine_source_digest

MODULES = {
    "__init__.py": b"",
    "cli.py": b"print('cli')\n",
    "check/__init__.py": b"# check\n",
    "check/deep/types.py": b"x = 1\n",
}
NOT_MODULES = {
    "_data/rules/copy.py": b"shipped data, not engine source\n",
    "check/_data/more.py": b"shipped data again\n",
    "__pycache__/cli.cpython-311.pyc": b"\x00compiled",
    "grammar.lark": b"start: NAME\n",
    "notes.pyi": b"stub\n",
}


def _package(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def _expected(files: dict[str, bytes]) -> str:
    listing = "".join(
        f"{hashlib.sha256(files[name]).hexdigest()}  {name}\n" for name in sorted(files)
    )
    return hashlib.sha256(listing.encode()).hexdigest()


def test_the_digest_lists_every_module_in_path_order(tmp_path: Path) -> None:
    package = _package(tmp_path / "pkg", {**MODULES, **NOT_MODULES})
    assert _sources_digest(package) == (len(MODULES), _expected(MODULES))


def test_a_changed_byte_or_a_new_module_changes_the_digest(tmp_path: Path) -> None:
    package = _package(tmp_path / "pkg", MODULES)
    before = _sources_digest(package)
    (package / "check" / "deep" / "types.py").write_bytes(b"x = 2\n")
    changed = _sources_digest(package)
    assert changed[1] != before[1]
    (package / "check" / "new.py").write_bytes(b"")
    added = _sources_digest(package)
    assert added[0] == before[0] + 1
    assert added[1] not in (before[1], changed[1])


def test_data_and_bytecode_do_not_change_the_digest(tmp_path: Path) -> None:
    package = _package(tmp_path / "pkg", MODULES)
    before = _sources_digest(package)
    _package(package, NOT_MODULES)
    assert _sources_digest(package) == before


def test_the_engine_digest_names_its_modules() -> None:
    engine = Path(__file__).resolve().parent.parent / "engine"
    found = engine_source_digest()
    modules = [p for p in engine.rglob("*.py") if "_data" not in p.relative_to(engine).parts]
    assert found["modules"] == len(modules)
    assert len(found["sha256"]) == 64
