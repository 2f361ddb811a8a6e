"""Output paths checked before any work, so a long evaluation or plan never fails at its last step."""

from __future__ import annotations

import os
from pathlib import Path


def check_writable_file(path: str | Path, option: str, create: bool = False) -> Path:
    """Refuse an output file path that cannot be written, naming the option and the reason; ``create`` makes
    its missing folders.

    Raises:
        ValueError: the path is empty. IsADirectoryError: it is a folder. FileNotFoundError: its folder does
            not exist. NotADirectoryError: a part of its folder is a file. PermissionError: not writable.
    """
    if not str(path).strip():
        raise ValueError(f"{option} '': give a file name")
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{option} {p} is a folder: give a file name inside it")
    parent = p.parent
    for part in (parent, *parent.parents):
        if part.exists() and not part.is_dir():
            raise NotADirectoryError(f"{option} {p}: {part} is a file, not a folder")
    if create:
        parent.mkdir(parents=True, exist_ok=True)
    if not parent.is_dir():
        raise FileNotFoundError(f"{option} {p}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise PermissionError(f"{option} {p}: folder {parent} is not writable")
    return p
