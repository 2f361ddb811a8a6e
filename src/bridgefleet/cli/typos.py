"""What a mistyped command line was likely meant to say, for :mod:`bridgefleet.cli.parser`'s one-line errors:
``plan --inventry dc-2019`` → ``--inventory``, ``plna`` → ``plan`` (:func:`difflib.get_close_matches` against the
command's own options, or the commands)."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable, Mapping

_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")  # a negative number is a value, not an option (as argparse reads it)


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice ``word`` is most likely a typo of, or None where none is close."""
    match = difflib.get_close_matches(word, list(choices), n=1)
    return match[0] if match else None


def _is_option(token: str) -> bool:
    return token.startswith("-") and token != "-" and not _NUMBER.match(token)


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    return [s for action in parser._actions for s in action.option_strings]


def unknown_command(value: str, commands: Iterable[str]) -> tuple[str, bool]:
    """The message for a command that is none of ``commands``, and whether it needs a pointer to --help (no
    command is close to it)."""
    commands = list(commands)
    hint = closest(value, commands)
    if hint:
        return f"unknown command {value} (did you mean {hint}?)", False
    return f"unknown command {value} (choose from {', '.join(commands)})", True


def unknown_arguments(command: str, parser: argparse.ArgumentParser, extras: list[str],
                      commands: Mapping[str, argparse.ArgumentParser]) -> tuple[str, bool]:
    """The message for the arguments ``parser`` (command ``command``) did not take: each unknown option with
    the option of its own it is likely a typo of (compared without the dashes, so ``--abc`` is not taken for
    ``--amp``), else the other commands that have it; then the positional arguments left over. Also whether the
    message needs a pointer to --help (some option with no suggestion, or a positional left over)."""
    own = _option_strings(parser)
    names: dict[str, str] = {}
    for option in sorted(own, key=lambda s: not s.startswith("--")):  # --help before -h where both strip alike
        names.setdefault(option.lstrip("-"), option)
    options, positionals, see_help = [], [], False
    value_of_option = False
    for token in extras:
        if _is_option(token):
            name = token.split("=", 1)[0]
            value_of_option = "=" not in token
            hint = closest(name.lstrip("-"), names)
            if hint:
                options.append(f"{name} (did you mean {names[hint]}?)")
                continue
            see_help = True
            elsewhere = [other for other, p in commands.items() if other != command and name in _option_strings(p)]
            options.append(f"{name} (an option of {', '.join(elsewhere)})" if elsewhere else name)
        elif value_of_option:  # `--inventry dc-2019`: dc-2019 is the mistyped option's value
            value_of_option = False
        else:
            positionals.append(token)
    parts = []
    if options:
        parts.append(f"unknown option{'s' if len(options) > 1 else ''} {', '.join(options)}")
    if positionals:
        see_help = True
        takes = [a.metavar or a.dest for a in parser._actions if not a.option_strings]
        parts.append(f"unexpected argument{'s' if len(positionals) > 1 else ''} {' '.join(positionals)}: "
                     f"{command} takes " + (f"only {', '.join(takes)} besides options" if takes else "options only"))
    return "; ".join(parts), see_help
