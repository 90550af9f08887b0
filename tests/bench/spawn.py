"""Run one command and write its own wall time, CPU time and peak RSS to a file.

    python tests/bench/spawn.py RESULT.json COMMAND [ARG ...]

`answers_bench.run_child` starts every measured command through this small process. On
Linux a child's `ru_maxrss` is at least the high-water mark of the process it was forked
from, so a command started directly by the benchmark (which holds generated bundles of
hundreds of MiB) would report the benchmark's peak instead of its own. Forked from this
small interpreter instead, the command's `ru_maxrss` (from `wait4`, its reaped workers
included) is its own. Exits with the command's exit code (128 + N for signal N).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    """Fork, exec the command, reap it and record its resource usage."""
    if len(sys.argv) < 3:
        raise SystemExit("usage: spawn.py RESULT.json COMMAND [ARG ...]")
    result, command = Path(sys.argv[1]), sys.argv[2:]
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    measured = {
        "exit_code": code,
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "max_rss": usage.ru_maxrss * 1024,  # Linux reports KiB
    }
    result.write_text(json.dumps(measured), encoding="utf-8")
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    raise SystemExit(main())
