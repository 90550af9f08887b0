"""rulecheck run from a source checkout that was never installed (`python -m engine.cli`
with the checkout on the path): no package metadata, the same version and reports."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from engine import resources

ROOT = Path(__file__).resolve().parents[1]

# Runs the CLI as if rulecheck had no installed metadata.
_UNINSTALLED = """
import runpy, sys
from importlib import metadata
installed = metadata.version, metadata.requires
def hidden(which):
    def look_up(name):
        if name == "rulecheck":
            raise metadata.PackageNotFoundError(name)
        return which(name)
    return look_up
metadata.version, metadata.requires = map(hidden, installed)
sys.argv = ["rulecheck", *sys.argv[1:]]
runpy.run_module("engine.cli", run_name="__main__")
"""


def _run(*args: str, installed: bool) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "engine.cli", *args]
    if not installed:
        command = [sys.executable, "-c", _UNINSTALLED, *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_a_checkout_never_installed_reads_its_version_from_pyproject(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    resources.distribution.cache_clear()
    monkeypatch.setattr(metadata, "version", not_installed)
    try:
        version, requirements = resources.distribution()
    finally:
        resources.distribution.cache_clear()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert version == project["version"] == metadata.distribution("rulecheck").version
    installed = [r for r in metadata.requires("rulecheck") or [] if "extra ==" not in r]
    assert list(requirements) == project["dependencies"]
    assert sorted(requirement.replace(" ", "") for requirement in requirements) == sorted(
        requirement.replace(" ", "") for requirement in installed
    )


@pytest.mark.parametrize(
    "args",
    [
        ("check", "controls/campaign", "--format", "json"),
        ("inventory", "--format", "json"),
    ],
)
def test_a_checkout_never_installed_reports_as_installed(args: tuple[str, ...]) -> None:
    uninstalled = _run(*args, installed=False)
    installed = _run(*args, installed=True)
    assert "INTERNAL_ERROR" not in uninstalled.stdout + uninstalled.stderr
    assert (uninstalled.returncode, uninstalled.stdout) == (installed.returncode, installed.stdout)
