"""The floor of reading a bundle: every file read and parsed by plain Python, nothing checked.

`make bench` runs this as a child process beside `rulecheck check` on the same folder, so
the check's CPU time and peak memory can be given as a ratio to the least any checker must
spend: reading each file and parsing its JSON, JSON Lines or YAML (with libyaml's loader
when it is installed, as `engine/bundle/yamldoc.py` does).

    python tests/bench/floor.py FOLDER [FOLDER ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_all(folders: list[Path]) -> int:
    """Read and parse every file under `folders`; the number of files read."""
    files = 0
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            files += 1
            if path.suffix == ".json":
                json.loads(data)
            elif path.suffix == ".jsonl":
                for line in data.splitlines():
                    if line.strip():
                        json.loads(line)
            elif path.suffix in {".yaml", ".yml"}:
                yaml.load(data, Loader=_LOADER)
    return files


def main(argv: list[str] | None = None) -> int:
    """Parse the folders given; print how many files were read."""
    folders = [Path(arg) for arg in (sys.argv[1:] if argv is None else argv)]
    if not folders:
        raise SystemExit("usage: floor.py FOLDER [FOLDER ...]")
    count = parse_all(folders)
    if not count:
        raise SystemExit(f"no file under {', '.join(map(str, folders))}")
    print(count)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
