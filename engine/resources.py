"""Locate the files rulecheck ships: the grammar, the rules and the schemas.

In a source checkout they are the top-level folders reviewers edit (`grammar/`, `rules/`,
`manifests/schemas/`); in an installed wheel they are package data under `engine/_data/`,
in the same layout (`engine/_data/manifests/schemas/`).
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

_CHECKOUT_ROOT = Path(__file__).resolve().parent.parent
_FOLDERS = {
    "grammar": Path("grammar"),
    "rules": Path("rules"),
    "schemas": Path("manifests") / "schemas",
}


def shipped(folder: str) -> Traversable:
    """The shipped folder `grammar`, `rules` or `schemas`."""
    in_checkout = _CHECKOUT_ROOT / _FOLDERS[folder]
    if (_CHECKOUT_ROOT / "pyproject.toml").is_file() and in_checkout.is_dir():
        return in_checkout
    from importlib import resources  # installed only: spares a checkout its imports

    return resources.files("engine._data." + ".".join(_FOLDERS[folder].parts))


def shipped_rules_dir() -> Path:
    """The shipped rules as a real folder path (rule files are read from disk)."""
    folder = shipped("rules")
    if isinstance(folder, Path):
        return folder
    # Installed, `engine._data.rules` is a namespace package (data only): importlib.resources
    # gives a MultiplexedPath for it, whose str() is its repr, not a path. Use its folder.
    spec = importlib.util.find_spec("engine._data.rules")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover
        raise RuntimeError("the shipped rules are not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def engine_source_digest() -> dict[str, Any]:
    """The sha256 of the engine's own Python source: every module's path (relative to the
    package, `/`-separated) and sha256, one `SHA256  PATH` line each in path order. A
    modified engine of the same version then has another identity. Shipped data (rules,
    grammar, schemas) is hashed on its own and left out."""
    modules, digest = _engine_digest()
    return {"modules": modules, "sha256": digest}


@cache
def _engine_digest() -> tuple[int, str]:
    """Read once per process (the parse and schema caches both key on it): the code that
    runs is the code this process imported."""
    return _sources_digest(Path(__file__).resolve().parent)


def library_source_digest(name: str) -> str:
    """The sha256 of an installed package's Python source (as `engine_source_digest`),
    found without importing it; empty when it is not installed."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return ""
    return _sources_digest(Path(next(iter(spec.submodule_search_locations))))[1]


def _sources_digest(package: Path) -> tuple[int, str]:
    modules = sorted(
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if "_data" not in path.relative_to(package).parts
    )
    listing = "".join(
        f"{hashlib.sha256((package / module).read_bytes()).hexdigest()}  {module}\n"
        for module in modules
    )
    return len(modules), hashlib.sha256(listing.encode()).hexdigest()
