"""Locate the files rulecheck ships: the grammar, the rules and the schemas.

In a source checkout they are the top-level folders reviewers edit (`grammar/`, `rules/`,
`manifests/schemas/`); in an installed wheel they are package data under `engine/_data/`,
in the same layout (`engine/_data/manifests/schemas/`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
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
    """How many Python modules a package folder holds (shipped data under `_data` left
    out) and the sha256 of their `SHA256  PATH` listing. Walked and read with `os`, not
    `pathlib`: every process computes the engine's, and `rglob` and `read_bytes` were
    half of it (about 10 ms a process, 4 % of `rulecheck lint rules/`)."""
    top = os.fspath(package)
    modules: list[str] = []
    for folder, folders, files in os.walk(top, followlinks=True):  # as `rglob` follows
        folders[:] = [name for name in folders if name != "_data"]
        inside = os.path.relpath(folder, top).replace(os.sep, "/")
        prefix = "" if inside == "." else inside + "/"
        modules += [prefix + name for name in files if name.endswith(".py")]
    modules.sort()
    lines = []
    for module in modules:
        with open(os.path.join(top, module), "rb") as handle:
            lines.append(f"{hashlib.sha256(handle.read()).hexdigest()}  {module}\n")
    return len(modules), hashlib.sha256("".join(lines).encode()).hexdigest()


DISTRIBUTION = "rulecheck"


@cache
def distribution() -> tuple[str, tuple[str, ...]]:
    """rulecheck's version and its declared requirements: from the installed package's
    metadata, else (a source checkout run without installing it, `python -m engine.cli`
    with the checkout on the path) from the checkout's `pyproject.toml`, from which an
    install would take the same two."""
    from importlib import metadata  # a tenth of the imports of a command that never asks

    try:
        return metadata.version(DISTRIBUTION), tuple(metadata.requires(DISTRIBUTION) or ())
    except metadata.PackageNotFoundError:
        pass
    import tomllib

    try:
        with open(_CHECKOUT_ROOT / "pyproject.toml", "rb") as handle:
            project = tomllib.load(handle).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        project = {}
    if project.get("name") != DISTRIBUTION:
        return "unknown", ()
    return str(project.get("version", "unknown")), tuple(map(str, project.get("dependencies", ())))


def rulecheck_version() -> str:
    """The running rulecheck's version (see `distribution`)."""
    return distribution()[0]
