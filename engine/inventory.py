"""What exactly is running: runtime, dependency versions, and hashes of everything shipped."""

from __future__ import annotations

import platform
import re
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from engine.freeze.hashing import sha256_hex
from engine.limits import read_input
from engine.resources import distribution, engine_source_digest, rulecheck_version, shipped
from engine.ruleset import load_ruleset
from engine.syntax.load import rule_paths
from engine.syntax.parse import GRAMMAR_FILE, grammar_text, grammar_version


def _dependency_versions() -> dict[str, str]:
    _version, requirements = distribution()
    versions: dict[str, str] = {}
    for requirement in requirements:
        if "extra ==" in requirement:
            continue
        name = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "missing"
    return dict(sorted(versions.items()))


def _schema_hashes() -> dict[str, str]:
    schemas = shipped("schemas")
    return {
        entry.name: sha256_hex(entry.read_bytes())
        for entry in sorted(schemas.iterdir(), key=lambda e: e.name)
        if entry.name.endswith((".yaml", ".json"))
    }


def evaluator_identity() -> dict[str, Any]:
    """What decides how rules evaluate, independent of the machine it runs on: the
    rulecheck version, the Python version and implementation, every dependency version,
    the engine's source, the grammar and the engine's own schemas (an evaluation receipt
    records this; the interpreter's path and the kernel's name are left out: they change
    no verdict)."""
    return {
        "rulecheck": rulecheck_version(),
        "runtime": {
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
        },
        "dependencies": _dependency_versions(),
        "engine": engine_source_digest(),
        "grammar": {
            "file": GRAMMAR_FILE,
            "version": grammar_version(),
            "sha256": sha256_hex(grammar_text().encode("utf-8")),
        },
        "schemas": _schema_hashes(),
    }


def collect_inventory(rule_locations: Sequence[Path]) -> dict[str, Any]:
    """Runtime, dependencies and content hashes, as data."""
    ruleset = load_ruleset(rule_locations)
    identity = evaluator_identity()
    return {
        "rulecheck": identity["rulecheck"],
        "runtime": {
            **identity["runtime"],
            "executable": sys.executable,
            "platform": platform.platform(),
        },
        "dependencies": identity["dependencies"],
        "engine": identity["engine"],
        "grammar": identity["grammar"],
        "rules": {
            "ruleset_hash": ruleset.hashed.ruleset_hash,
            "files": {
                str(path): sha256_hex(read_input(path)) for path in rule_paths(rule_locations)
            },
        },
        "schemas": identity["schemas"],
    }


def inventory_text(data: dict[str, Any]) -> str:
    """The inventory as aligned `key  value` lines."""
    lines = [f"rulecheck       {data['rulecheck']}"]
    runtime = data["runtime"]
    lines.append(f"python          {runtime['python']} ({runtime['implementation']})")
    lines.append(f"platform        {runtime['platform']}")
    for name, version in data["dependencies"].items():
        lines.append(f"dependency      {name} {version}")
    engine = data["engine"]
    lines.append(f"engine source   {engine['sha256']}  {engine['modules']} modules")
    grammar = data["grammar"]
    lines.append(
        f"grammar         {grammar['sha256']}  {grammar['file']} (version {grammar['version']})"
    )
    for path, digest in data["rules"]["files"].items():
        lines.append(f"rule file       {digest}  {path}")
    lines.append(f"ruleset         {data['rules']['ruleset_hash']}")
    for name, digest in data["schemas"].items():
        lines.append(f"schema          {digest}  {name}")
    return "\n".join(lines) + "\n"
