"""What a run was trained on (issue 79, kind 5): the SHA-256 of each file it read, recorded in its folder's
``inputs.json`` when it starts, so that a file edited in place afterwards is noticed.

The files are the fleet's inventory, its column mapping and its component model (a bundled name such as
``dc-2019`` is its file in the package) and the ``--config`` file the run's options came from. A resume on a
changed fleet file is refused in one line naming the file (:func:`check_resume`): it would continue on another
fleet; ``evaluate RUN``, ``plan RUN`` and ``report RUN`` warn in one line and go on (:func:`warn_changed`). The
``--config`` file is only noted: the run's own config.yaml holds its options, and a resume reads that. A run
folder written before this record (no inputs.json) loads as before, without a word."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.outputs import write_json

INPUTS_FILE = "inputs.json"
"""The run folder's record of its input files' SHA-256."""
CONFIG_KEY = "--config"
"""The record's key of the training config file the run's options came from (only noted when it changed)."""
SHOWN_HEX = 12
"""Hex digits of a SHA-256 a message shows."""
_WHAT = {"inventory": "inventory", "inventory_mapping": "column mapping", "component_model": "component model",
         CONFIG_KEY: "training config (--config)"}


@dataclass(frozen=True)
class Changed:
    """A recorded input whose content is not what the run read: ``now`` is None where the file is gone."""

    key: str
    given: str
    path: str
    then: str
    now: str | None
    extent_then: str = ""
    extent_now: str = ""

    def line(self, run_dir: Path) -> str:
        """One line naming the file and what changed (hash then / now, :data:`SHOWN_HEX` hex digits; and its size
        and line count then / now where the run recorded them)."""
        what = f"{_WHAT.get(self.key, self.key)} {self.given}"
        if self.path != self.given:
            what += f" ({self.path})"
        now = "the file is gone now" if self.now is None else f"{self.now[:SHOWN_HEX]} now"
        sizes = (f"; {self.extent_then} then, {self.extent_now or 'gone'} now"
                 if self.extent_then and self.extent_then != self.extent_now else
                 f"; {self.extent_then} then and now, other content" if self.extent_then else "")
        return (f"{run_dir}: its {what} changed since the run was trained (SHA-256 {self.then[:SHOWN_HEX]} then, "
                f"{now}{sizes})")


def sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, hex (read in 1 MiB blocks)."""
    return _digest(path)[0]


def _digest(path: str | Path) -> tuple[str, int, int]:
    """(SHA-256 hex, size in bytes, lines: the count of line feeds) of a file, read once in 1 MiB blocks."""
    digest, size, lines = hashlib.sha256(), 0, 0
    with Path(path).open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
            size += len(block)
            lines += block.count(b"\n")
    return digest.hexdigest(), size, lines


def _extent(size: int | None, lines: int | None) -> str:
    """"12,345 bytes in 40 lines" ("" where not recorded: runs before the sizes were)."""
    if size is None or lines is None:
        return ""
    return f"{size:,} bytes in {lines:,} line{'s' if lines != 1 else ''}"


def _bundled_file(key: str, name: str) -> Path | None:
    """The package's file behind a bundled name of ``key`` (an inventory, a mapping, a component model), None if
    ``name`` is not one."""
    if key == "inventory":
        from bridgefleet.inventory.load import BUNDLED, bundled_path

        return bundled_path(name) if name in BUNDLED else None
    if key == "inventory_mapping":
        from importlib import resources

        from bridgefleet.inventory.model import BUNDLED_MAPPINGS

        return (Path(str(resources.files("bridgefleet").joinpath("data", BUNDLED_MAPPINGS[name])))
                if name in BUNDLED_MAPPINGS else None)
    if key == "component_model":
        from bridgefleet.sim.components import BUNDLED as MODELS

        return Path(MODELS[name]) if name in MODELS else None
    return None


def _file(key: str, given: str) -> Path:
    """The file a config value names: a bundled name's file in the package, else the path."""
    return _bundled_file(key, given) or Path(given)


def input_files(fleet: FleetConfig, config_file: str | Path | None = None) -> list[tuple[str, str, Path]]:
    """(key, value as given, file) of every file the run reads: its fleet's inventory, column mapping and
    component model where set, and ``config_file``; only those that are files."""
    out = [(key, str(value), _file(key, str(value))) for key in ("inventory", "inventory_mapping", "component_model")
           if (value := getattr(fleet, key)) is not None]
    if config_file is not None:
        out.append((CONFIG_KEY, str(config_file), Path(config_file)))
    return [(key, given, path) for key, given, path in out if path.is_file()]


def record(run_dir: Path, fleet: FleetConfig, config_file: str | Path | None = None,
           keep: list[dict[str, Any]] | None = None) -> None:
    """Write the run's ``inputs.json`` (atomically): the SHA-256 of each of :func:`input_files`, and the entries of
    ``keep`` (a record read before a restart) for keys not hashed now."""
    files = [{"key": key, "given": given, "path": str(path.resolve()), "sha256": digest, "bytes": size,
              "lines": lines}
             for key, given, path in input_files(fleet, config_file)
             for digest, size, lines in [_digest(path)]]
    hashed = {f["key"] for f in files}
    files += [f for f in keep or [] if f.get("key") not in hashed]
    write_json(run_dir / INPUTS_FILE, {
        "about": "SHA-256 of each file this run read when it started: a resume refuses a changed inventory, mapping "
                 "or component model; evaluate, plan and report warn",
        "files": files})


def recorded(run_dir: Path) -> list[dict[str, Any]]:
    """The entries of the run's ``inputs.json``; [] where there is none (a run written before the record) or it
    cannot be read (a warning says so)."""
    path = Path(run_dir) / INPUTS_FILE
    if not path.exists():
        return []
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
        return [f for f in files if isinstance(f, dict) and {"key", "given", "path", "sha256"} <= set(f)]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        from bridgefleet.runs.checkpoints import note

        note(f"warning: {path}: unreadable ({type(exc).__name__}); the run's input files are not checked")
        return []


def changed(run_dir: Path) -> list[Changed]:
    """The recorded inputs whose content differs now: the file a command would read now, which for a fleet file
    given as a relative path (runs before fleet paths were made absolute) is the one in the working folder, not
    the one the run read (a bundled name is hashed in today's package; the ``--config`` file where it was)."""
    out = []
    for f in recorded(run_dir):
        path = _bundled_file(f["key"], f["given"]) or Path(f["path" if f["key"] == CONFIG_KEY else "given"])
        try:
            now: str | None
            now, size, lines = _digest(path)
        except OSError:
            now, size, lines = None, None, None
        if now != f["sha256"]:
            out.append(Changed(f["key"], f["given"], str(path.resolve()), f["sha256"], now,
                               _extent(f.get("bytes"), f.get("lines")), _extent(size, lines)))
    return out


def check_resume(run_dir: Path) -> None:
    """Before a resume: refuse one whose fleet files changed since the run started; note a changed ``--config``
    file (the resume reads the run's config.yaml, not it).

    Raises:
        ConfigError: one line naming the first changed file, its hash then and now, and what to do.
    """
    from bridgefleet.runs.checkpoints import note

    for c in changed(run_dir):
        if c.key == CONFIG_KEY:
            note(f"note: {c.line(run_dir)}; a resume continues with the run's config.yaml, not it")
            continue
        raise ConfigError(f"{c.line(run_dir)}; a resume would continue on another fleet: put the file back as it "
                          "was, or train on it anew with --out")


_warned: set[tuple[str, str, str | None]] = set()


def warn_changed(run_dir: Path) -> None:
    """For ``evaluate RUN``, ``plan RUN``, ``report RUN``: one warning line for each fleet file changed since the
    run was trained (once per process and file), and go on."""
    from bridgefleet.runs.checkpoints import note

    for c in changed(run_dir):
        seen = (str(Path(run_dir).resolve()), c.path, c.now)
        if c.key == CONFIG_KEY or seen in _warned:
            continue
        _warned.add(seen)
        note(f"warning: {c.line(run_dir)}; its policy is applied to the file as it is now")
