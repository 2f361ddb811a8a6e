"""The ``bridgefleet`` command line: evaluate, bound, train, plan, report, scenarios, sweep, bench, calibrate,
inventory (arguments in :mod:`~bridgefleet.cli.parser`; what each does in :mod:`~bridgefleet.cli.commands`, the
yardstick commands in :mod:`~bridgefleet.cli.yardstick`, the data commands in :mod:`~bridgefleet.cli.data`; the
readings they share in :mod:`~bridgefleet.cli.args`)."""

from __future__ import annotations

import os
import sys
import warnings

from bridgefleet.cli.parser import build_parser, check_seed
from bridgefleet.config import ConfigError

__all__ = ["build_parser", "main"]


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      line: str | None = None) -> str:
    return f"bridgefleet: warning: {message}\n"


def _utf8_streams() -> None:
    """Under a C/POSIX locale without UTF-8 coercion Python's stdout is ASCII, and the tables' ×, –, ≥ (or a
    structure number such as MOST-Ł1) would stop a command: write UTF-8 there instead, as every file is."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "ascii"
        if codecs.lookup(encoding).name == "ascii" and hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8")


def _less_memory(coarser: tuple[str, ...], fewer: tuple[str, ...]) -> str:
    """What needs less memory, in the options of the command that ran out (its parser's ``memory`` default: the
    steps a coarser value of which, and the counts fewer of which, need less): "try a coarser --grid-step, fewer
    --episodes, or a smaller fleet"."""
    parts = ([f"a coarser {' or '.join(coarser)}"] if coarser else []) + (
        [f"fewer {' or '.join(fewer)}"] if fewer else [])
    return f"try {', '.join(parts)}, or a smaller fleet" if parts else "try a smaller fleet or input"


def main(argv: list[str] | None = None) -> int:
    _utf8_streams()
    args = build_parser().parse_args(argv)
    warnings.formatwarning = _one_line_warning  # users see the message, not our source lines
    try:
        check_seed(args)
        if getattr(args, "cpu_threads", None) is not None:  # --threads of the planning commands
            from bridgefleet.training.hardware import use_threads

            use_threads(args.cpu_threads)
        return args.func(args)
    except BrokenPipeError:  # e.g. `bridgefleet inventory … | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ConfigError, ValueError, FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError,
            PermissionError, ConnectionError, ModuleNotFoundError) as exc:
        print(f"bridgefleet {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # numpy: "Unable to allocate 67.1 GiB …" (a grid step too fine for the machine)
        print(f"bridgefleet {args.command}: error: not enough memory ({str(exc) or 'MemoryError'}): "
              f"{_less_memory(*getattr(args, 'memory', ((), ())))}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path the system refuses (not a folder, read-only, …): one line, no traceback
        where = f": {exc.filename}" if exc.filename else ""
        print(f"bridgefleet {args.command}: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        # a newline first: the progress bar's line is not finished
        print(f"\nbridgefleet {args.command}: {str(exc) or 'interrupted'}", file=sys.stderr)
        return 130

