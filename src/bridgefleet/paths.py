"""Output paths checked before any work, so a long evaluation or plan never fails at its last step."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def check_writable_file(path: str | Path, option: str, create: bool = False,
                        reads: Iterable[tuple[str | Path, str]] = ()) -> Path:
    """Refuse an output file path that cannot be written, naming the option and the reason; ``create``: its
    folders may be missing (the writer makes them) if the nearest one that exists is writable. ``reads``: (path,
    what it is) of the files the command reads (an inventory, a run's model), which the output must not replace.

    Raises:
        ValueError: the path is empty, or it is one of ``reads``. IsADirectoryError: it is a folder.
            FileNotFoundError: its folder does not exist. NotADirectoryError: a part of its folder is a file.
            PermissionError: not writable.
    """
    if not str(path).strip():
        raise ValueError(f"{option} '': give a file name")
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{option} {p} is a folder: give a file name inside it")
    for read, what in reads if p.exists() else ():
        if Path(read).exists() and os.path.samefile(p, read):
            raise ValueError(f"{option} {p} is {what}, which this command reads: give another file")
    parent = p.parent
    _no_file_on_the_way(parent, p, option)
    if create:
        parent = _nearest_existing(parent)
    if not parent.is_dir():
        raise FileNotFoundError(f"{option} {p}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise PermissionError(f"{option} {p}: folder {parent} is not writable")
    return p


def check_writable_folder(path: str | Path, option: str) -> Path:
    """Refuse an output folder that cannot be made or written (it may not exist yet: the nearest folder that does
    must be writable), naming the option and the reason; nothing is created.

    Raises:
        ValueError: the path is empty. NotADirectoryError: it or a part of it is a file. PermissionError: not
            writable.
    """
    if not str(path).strip():
        raise ValueError(f"{option} '': give a folder")
    p = Path(path)
    _no_file_on_the_way(p, p, option)
    near = _nearest_existing(p)
    if not os.access(near, os.W_OK):
        raise PermissionError(f"{option} {p}: folder {near} is not writable")
    return p


def _no_file_on_the_way(folder: Path, path: Path, option: str) -> None:
    """Raise NotADirectoryError (naming ``option`` and ``path``) if ``folder`` or a folder above it is a file."""
    for part in (folder, *folder.parents):
        if part.exists() and not part.is_dir():
            raise NotADirectoryError(f"{option} {path}: {part} is a file, not a folder")


def _nearest_existing(folder: Path) -> Path:
    """The folder itself, or its nearest parent that exists (the current folder for a relative path)."""
    for part in (folder, *folder.parents):
        if part.exists():
            return part
    return Path(".")
