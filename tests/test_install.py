"""A built wheel, installed into a fresh virtual environment, works outside the checkout.

The wheel is installed with `--no-deps --no-index`; its dependencies come from the
hash-pinned `requirements/runtime.lock` (`--require-hashes --no-deps`), so nothing of the
checkout or of the development venv is importable. The installed `rulecheck` must find
its grammar and shipped rules as package data, lint them clean, and hash them exactly as
the checkout does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from engine.inventory import engine_source_digest
from engine.ruleset import load_ruleset

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def test_wheel_installs_and_runs_outside_the_checkout(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH",)}
    env["PYTHONNOUSERSITE"] = "1"
    # Build from a copy of what the wheel is made of, so no stale `build/` of the checkout
    # (or a file another change left there) can slip into the wheel.
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("engine", "grammar", "rules", "manifests"):
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(source),
        ],
        tmp_path,
        env,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("rulecheck-*.whl")

    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    python = target / "bin" / "python"
    installed = _run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        tmp_path,
        env,
    )
    assert installed.returncode == 0, installed.stderr
    lock = ROOT / "requirements" / "runtime.lock"
    dependencies = _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--require-hashes",
            "--no-deps",
            "-r",
            str(lock),
        ],
        tmp_path,
        env,
    )
    if dependencies.returncode != 0 and (
        "No matching distribution" in dependencies.stderr
        or "Could not find a version" in dependencies.stderr
        or "NewConnectionError" in dependencies.stderr
    ):
        pytest.skip(f"pip cannot reach an index for {lock.name}: {dependencies.stderr[-300:]}")
    assert dependencies.returncode == 0, dependencies.stderr

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    where = _run([str(python), "-c", "import engine; print(engine.__file__)"], outside, env)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(target), where.stdout
    assert not Path(where.stdout.strip()).is_relative_to(ROOT)

    rulecheck = str(target / "bin" / "rulecheck")
    lint = _run([rulecheck, "lint"], outside, env)
    assert lint.returncode == 0, lint.stderr
    assert re.search(r": ok( \(\d+ warnings?\))?\n$", lint.stdout), lint.stdout
    assert "error[" not in lint.stderr
    hashed = _run([rulecheck, "hash"], outside, env)
    assert hashed.returncode == 0, hashed.stderr
    expected = load_ruleset([ROOT / "rules"]).hashed.ruleset_hash
    assert hashed.stdout.splitlines()[-1] == f"ruleset {expected}"
    inventory = _run([rulecheck, "inventory"], outside, env)
    assert inventory.returncode == 0, inventory.stderr
    assert f"ruleset         {expected}\n" in inventory.stdout
    # The installed engine is the same source as the checkout's: one evaluator identity.
    source = engine_source_digest()
    assert f"engine source   {source['sha256']}  {source['modules']} modules\n" in inventory.stdout
    # The html page's template ships as package data (jinja2 and matplotlib are optional).
    template = _run(
        [
            str(python),
            "-c",
            "from importlib import resources; "
            "print(resources.files('engine.report').joinpath('templates', 'report.html.j2')"
            ".is_file())",
        ],
        outside,
        env,
    )
    assert template.stdout.strip() == "True", template.stderr
