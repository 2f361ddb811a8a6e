"""The command line speaks to a person: every subcommand's --help says what it does under the usage, and a mistyped
option or command is refused in one line naming the command and what the typo is likely of (issue 80 item 5)."""

import pytest

from bridgefleet.cli import build_parser, main


def _commands() -> dict:
    parser = build_parser()
    return parser._commands.choices


def _refused(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "usage:" not in err and "unrecognized" not in err
    return err


def test_the_command_line_has_every_command_the_readme_names():
    assert {"evaluate", "bound", "train", "plan", "report", "scenarios", "sweep", "bench", "calibrate",
            "inventory"} <= set(_commands())


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_command_help_has_a_description_under_its_usage(capsys, command):
    description = _commands()[command].description
    assert description and description.strip().endswith("."), f"bridgefleet {command} has no description="
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: bridgefleet {command}")
    # the paragraph after the usage block is the description, rewrapped (lines may break after a hyphen)
    after_usage = "".join(out.split("\n\n", 1)[1].split("\n\n", 1)[0].split())
    assert after_usage == "".join(description.split())


@pytest.mark.parametrize("argv", [["plan", "--inventry", "dc-2019"], ["plan", "--inventry=dc-2019"],
                                  ["plan", "--policy", "lagrangian", "--inventry=dc-2019", "--years", "5"]])
def test_a_mistyped_option_names_the_command_and_the_option_it_is_a_typo_of(capsys, argv):
    err = _refused(capsys, argv)
    assert err == "bridgefleet plan: error: unknown option --inventry (did you mean --inventory?)\n"


def test_every_mistyped_option_is_named_with_its_own_suggestion(capsys):
    err = _refused(capsys, ["bound", "--inventry", "dc-2019", "--seeed", "3"])
    assert err.startswith("bridgefleet bound: error: unknown options ")
    assert "--inventry (did you mean --inventory?)" in err and "--seeed (did you mean --seed?)" in err


@pytest.mark.parametrize("option", ["--xyzzy", "--abc", "--qqqq=1"])
def test_an_option_like_none_of_the_command_s_gets_no_suggestion_but_a_pointer_to_help(capsys, option):
    err = _refused(capsys, ["plan", option])
    assert "did you mean" not in err
    assert err == f"bridgefleet plan: error: unknown option {option.split('=')[0]} (see bridgefleet plan --help)\n"


def test_an_option_of_another_command_says_which(capsys):
    err = _refused(capsys, ["inventory", "dc-2019", "--budget-usd", "5"])
    assert err.startswith("bridgefleet inventory: error: unknown option --budget-usd (an option of plan)")


@pytest.mark.parametrize("argv, says", [
    (["bound", "foo", "bar"], "unexpected arguments foo bar: bound takes options only"),
    (["plan", "runs/a", "runs/b"], "unexpected argument runs/b: plan takes only run_dir besides options")])
def test_arguments_left_over_are_named(capsys, argv, says):
    assert _refused(capsys, argv) == f"bridgefleet {argv[0]}: error: {says} (see bridgefleet {argv[0]} --help)\n"


def test_a_mistyped_command_suggests_the_command(capsys):
    assert _refused(capsys, ["plna"]) == "bridgefleet: error: unknown command plna (did you mean plan?)\n"


def test_a_command_like_none_lists_the_commands(capsys):
    err = _refused(capsys, ["frobnicate", "--x"])
    assert "did you mean" not in err
    assert err.startswith("bridgefleet: error: unknown command frobnicate (choose from evaluate, bound, ")
    assert err.endswith("(see bridgefleet --help)\n")


def test_a_negative_number_is_a_value_not_an_unknown_option(capsys):
    err = _refused(capsys, ["plan", "--policy", "lagrangian", "--samples", "2", "--xyzzy", "-5"])
    assert err == "bridgefleet plan: error: unknown option --xyzzy (see bridgefleet plan --help)\n"
