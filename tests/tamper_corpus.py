"""Tamper corpus (not a test module): one-byte edits of every file of controls/campaign.

    .venv/bin/python tests/tamper_corpus.py [--seed N]

Each file gets one letter or digit replaced by another of its class (so the syntax stays
valid), once as is and once with the manifest re-hashed as a freezer would (every
occurrence of the file's old sha256 in manifest.yaml replaced by the new one). Each
variant is run through `rulecheck check`; the files whose edit is admitted (exit 0) are
listed. It takes a few minutes (two checks per file).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import sys
import tempfile
from pathlib import Path

from cli_run import CliRun

CAMPAIGN = Path(__file__).resolve().parent.parent / "controls" / "campaign"
_CLASSES = ("0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def one_byte_edit(data: bytes, rng: random.Random) -> bytes:
    """`data` with one letter or digit replaced by another of the same class."""
    positions = [i for i, byte in enumerate(data) if chr(byte).isascii() and chr(byte).isalnum()]
    index = rng.choice(positions)
    old = chr(data[index])
    pool = next(c for c in _CLASSES if old in c)
    new = rng.choice([c for c in pool if c != old])
    return data[:index] + new.encode("ascii") + data[index + 1 :]


def tampered_copy(relative: str, rng: random.Random, rehash: bool, folder: Path) -> Path:
    """A copy of the campaign under `folder` with one byte of `relative` edited and, with
    `rehash`, every occurrence of its old sha256 in manifest.yaml replaced by the new one
    (as a freezer would). Returns the copy's root."""
    root = folder / "campaign"
    shutil.copytree(CAMPAIGN, root)
    source, target = CAMPAIGN / relative, root / relative
    target.write_bytes(one_byte_edit(target.read_bytes(), rng))
    manifest = root / "manifest.yaml"
    if rehash and target != manifest:
        old = hashlib.sha256(source.read_bytes()).hexdigest()
        new = hashlib.sha256(target.read_bytes()).hexdigest()
        manifest.write_text(manifest.read_text().replace(old, new))
    return root


def campaign_files() -> list[str]:
    """Every file of the shipped campaign, relative to it, sorted."""
    return sorted(p.relative_to(CAMPAIGN).as_posix() for p in CAMPAIGN.rglob("*") if p.is_file())


def admitted_edits(seed: int) -> list[tuple[bool, str]]:
    """(re-hashed, file) of every edit `rulecheck check` admits."""
    rng = random.Random(seed)
    admitted = []
    for rehash in (False, True):
        for relative in campaign_files():
            with tempfile.TemporaryDirectory() as folder:
                root = tampered_copy(relative, rng, rehash, Path(folder))
                if CliRun(["check", str(root), "--format", "json"]).exit_code == 0:
                    admitted.append((rehash, relative))
    return admitted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=7)
    seed = parser.parse_args().seed
    admitted = admitted_edits(seed)
    total = len(campaign_files())
    for rehash, relative in admitted:
        print(f"admitted{' (re-hashed)' if rehash else ''}: {relative}")
    print(f"{total} files, 2 edits each: {len(admitted)} admitted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
