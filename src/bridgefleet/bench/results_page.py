"""A measured table in the format of docs/results.md: a title, one provenance line (machine, date, commit and the
command that printed it) and a Markdown table.

The benchmark scripts print their tables through :func:`results_table`, so a table they print can be pasted into
docs/results.md as it is::

    ### Simulator throughput

    Machine: 2 cores, AMD EPYC 7B13, torch 2.13.0+cpu; date: 2026-12-07; commit: 2617fe9; command:
    `python benchmarks/env_throughput.py --seconds 3`

    | simulator | fleets | bridge-steps/s | vs reference |
    |---|---:|---:|---:|
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[3]


def machine() -> str:
    """The machine in words: the cores this process may use, the CPU model (``/proc/cpuinfo`` where there is
    one, else :func:`platform.processor`) and, where torch is already imported, its version and CUDA device.

    Returns:
        e.g. ``"2 cores, AMD EPYC 7B13, torch 2.13.0+cpu"``.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 0
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    words = [f"{cores} cores", cpu]
    torch = sys.modules.get("torch")
    if torch is not None:
        words.append(f"torch {torch.__version__}")
        if torch.cuda.is_available():
            words.append(torch.cuda.get_device_name(0))
    return ", ".join(words)


def commit(root: Path = _ROOT) -> str:
    """The short hash of the checkout's HEAD, with ``+changes`` where tracked files under ``src/`` or
    ``benchmarks/`` differ from it; ``"unknown"`` outside a git checkout (an installed package)."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "-uno", "--", "src", "benchmarks"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def command(argv: Sequence[str] | None = None) -> str:
    """The command line that is running, as a user would type it: ``python benchmarks/NAME.py ARGS`` for a
    script (its path relative to the current folder where it lies below it), ``bridgefleet ARGS`` for the CLI."""
    argv = list(sys.argv if argv is None else argv)
    if not argv:
        return ""
    prog = Path(argv[0])
    if prog.name == "bridgefleet" or prog.name == "__main__.py":
        head = ["bridgefleet"]
    else:
        try:
            shown = str(prog.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            shown = str(prog)
        head = ["python", shown]
    return shlex.join(head + argv[1:])


def provenance(cmd: str | None = None, date: _dt.date | None = None) -> str:
    """The line under a table's title: ``Machine: …; date: YYYY-MM-DD; commit: …; command: `…```.

    Args:
        cmd: the command that printed the table (default: this process's, :func:`command`).
        date: the day of the measurement (default: today, local time).
    """
    day = (date or _dt.date.today()).isoformat()
    return f"Machine: {machine()}; date: {day}; commit: {commit()}; command: `{cmd or command()}`"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]], numeric: Sequence[bool] | None = None
                   ) -> str:
    """A GitHub-flavoured Markdown table; cells are written with ``str``.

    Args:
        header: the column titles.
        rows: one sequence of cells a row, each as long as ``header``.
        numeric: per column, whether it is right-aligned (``---:``); default: the first column left, the rest right.

    Raises:
        ValueError: a row whose length differs from the header's, naming the row (0-based).
    """
    numeric = list(numeric) if numeric is not None else [False] + [True] * (len(header) - 1)
    if len(numeric) != len(header):
        raise ValueError(f"numeric has {len(numeric)} entries for {len(header)} columns")
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"row {i} has {len(row)} cells for {len(header)} columns")
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)


def results_table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]],
                  numeric: Sequence[bool] | None = None, cmd: str | None = None, note: str | None = None) -> str:
    """A table as docs/results.md gives it: ``### title``, the :func:`provenance` line, an optional note and the
    Markdown table, separated by blank lines (no trailing newline)."""
    parts = [f"### {title}", provenance(cmd)]
    if note:
        parts.append(note)
    parts.append(markdown_table(header, rows, numeric))
    return "\n\n".join(parts)
