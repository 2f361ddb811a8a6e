"""Numbers typed on the command line (issue 79, kinds 6 and 3): one parser for every numeric option of every
command; the ambiguous refused with both readings, Python's spellings refused, ranges said with the value as
typed (never ``inf`` or a 20-digit product), and running out of memory naming the command's own options."""

from __future__ import annotations

import argparse

import pytest

from bridgefleet.cli import build_parser, main
from bridgefleet.typed_numbers import Refused, number, numbers, whole


def _refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line ``argv`` is refused with (argparse's exit 2, or main's return 2)."""
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err.strip()


def test_one_comma_or_point_before_three_digits_reads_two_ways_in_every_option():
    # European 1,000 is 1.0 (a decimal comma), elsewhere a thousand: both readings, whatever the option
    with pytest.raises(Refused, match=r"^--budget-scale '1,000' reads two ways: 1 \(a decimal comma\) or 1,000 "
                                      r"\(a comma between thousands\); write 1 or 1000$"):
        number("1,000", "--budget-scale")
    with pytest.raises(Refused, match=r"^--samples '1,000' reads two ways: 1 \(a decimal comma\) or 1,000"):
        whole("1,000", "--samples")
    with pytest.raises(Refused, match=r"^--seed '1.000' reads two ways: 1 \(a decimal point\) or 1,000 \(a point"):
        whole("1.000", "--seed")
    with pytest.raises(Refused, match=r"'-12,500' reads two ways: -12.5 \(a decimal comma\) or -12,500"):
        number("-12,500", "--x")
    # where only one reading exists the number is taken
    assert [number(t, "--x") for t in ("1,000,000", "1,000.5", "0.250", "1.000e3", "12.5")] == [
        1e6, 1000.5, 0.25, 1000.0, 12.5]
    assert whole("20,251,101", "--seed") == 20_251_101 and whole("1000", "--samples") == 1000


def test_whole_number_options_take_digits_only():
    with pytest.raises(Refused, match=r"^--samples '1e9': give a whole number in digits \(1000000000 or "
                                      r"1,000,000,000\)$"):
        whole("1e9", "--samples")
    for text in ("1.5", "2.0", "1,000.0"):
        with pytest.raises(Refused, match=r"give a whole number in digits"):
            whole(text, "--episodes")
    with pytest.raises(Refused, match=r"^--years 0: at least 1 year$"):
        whole("0", "--years", 1, "at least 1 year")


@pytest.mark.parametrize(("text", "says"), [
    ("1_000_000", "'1_000_000': '_' is not a thousands separator here; write 1000000 or 1,000,000"),
    ("1_000", "'1_000': '_' is not a thousands separator here; write 1000"),  # 1,000 would read two ways
    ("+1000", "'+1000': write it without '+' (1000)"),
    ("1,5", "'1,5': a decimal comma? write 1.5 (a decimal point; commas go between thousands)"),
    ("1.000.000", "'1.000.000': points between thousands? write 1000000 or 1,000,000"),
    ("12.000.000,50", "'12.000.000,50': a decimal comma? write 12000000.5"),
    ("1e-400", "'1e-400': below the smallest number a 64-bit float holds (about 5e-324): it would be 0"),
    ("nan", "'nan': not a finite number"),
])
def test_pythons_spellings_and_the_decimal_comma_are_refused_naming_what_was_typed(text, says):
    with pytest.raises(Refused) as refused:
        number(text, "--budget-usd")
    assert str(refused.value).startswith(f"--budget-usd {says}")


def test_the_command_line_refuses_in_one_line_naming_the_option_and_what_was_typed(capsys):
    plan = ["plan", "--policy", "worst_first"]
    assert _refusal([*plan, "--budget-scale", "1,000"], capsys) == (
        "bridgefleet plan: error: argument --budget-scale: '1,000' reads two ways: 1 (a decimal comma) or 1,000 (a "
        "comma between thousands); write 1 or 1000 (see bridgefleet plan --help)")
    assert "argument --budget-usd: '1_000_000': '_' is not" in _refusal([*plan, "--budget-usd", "1_000_000"], capsys)
    assert "argument --budget-usd: '+1000': write it without '+'" in _refusal([*plan, "--budget-usd", "+1000"], capsys)
    assert "argument --seed: '1.000' reads two ways" in _refusal([*plan, "--seed", "1.000"], capsys)
    assert "argument --samples: '1,000' reads two ways" in _refusal([*plan, "--samples", "1,000"], capsys)
    assert "argument --threads: '2.0': give a whole number in digits (2)" in _refusal(
        ["train", "--threads", "2.0"], capsys)
    assert "argument --seeds: 0: at least 1 seed" in _refusal(["bench", "--seeds", "0"], capsys)
    assert build_parser().parse_args([*plan, "--budget-usd", "1,000,000"]).budget_usd == 1e6
    assert build_parser().parse_args(["train", "--threads", "auto"]).threads == "auto"


def test_a_budget_beyond_its_range_is_said_as_typed_never_as_inf_or_a_long_product(capsys):
    plan = ["plan", "--policy", "worst_first"]
    for typed in ("1e20", "1e300", "1e400"):
        err = _refusal([*plan, "--budget-scale", typed], capsys)
        assert err == (f"bridgefleet plan: error: argument --budget-scale: {typed}: must be in [0, 100] × the sized "
                       "budget (give --budget-usd for a budget in USD) (see bridgefleet plan --help)")
        err = _refusal([*plan, "--budget-usd", typed], capsys)
        assert err == (f"bridgefleet plan: error: argument --budget-usd: {typed}: must be in [0, 1e15] USD a year (a "
                       "thousand trillion is the most a budget may be) (see bridgefleet plan --help)")
    assert "inf" not in _refusal(["evaluate", "--budget-scale", "1e400"], capsys)
    assert _refusal(["scenarios", "--budgets-usd", "5e6;1e400"], capsys) == (
        "bridgefleet scenarios: error: --budgets-usd '5e6;1e400': level 1e400: must be in [0, 1e15] USD a year (a "
        "thousand trillion is the most a budget may be)")
    assert _refusal(["scenarios", "--budgets", "1e20"], capsys).endswith(
        "--budgets 1e20: must be in [0, 100] × the sized budget (give --budget-usd for a budget in USD)")


def test_a_comma_list_that_reads_as_a_decimal_comma_is_refused_with_both_readings():
    with pytest.raises(Refused, match=r"^--budgets '0,5' reads two ways: one level, 0.5 \(a decimal comma\), or 2 "
                                      r"levels, 0 and 5 \(commas between levels\); write 0.5 for the one level, "
                                      r"'0;5' for the 2 levels$"):
        numbers("0,5", "--budgets")
    assert numbers("0.5,1,2", "--budgets") == [0.5, 1.0, 2.0]
    assert numbers("0;5", "--budgets") == [0.0, 5.0]
    with pytest.raises(Refused, match=r"^--budgets-usd '5,000,000;1,500': level '1,500' reads two ways: 1.5 "):
        numbers("5,000,000;1,500", "--budgets-usd")


def test_every_numeric_option_of_every_command_goes_through_the_one_parser(capsys):
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    checked = []
    for name, command in commands.items():
        for action in command._actions:
            if action.type is None or not action.option_strings or action.dest == "fleet_model":
                continue
            option = action.option_strings[-1]
            err = _refusal([name, option, "1_000"], capsys)
            assert f"argument {option}: '1_000': '_' is not a thousands separator here" in err, err
            checked.append(f"{name} {option}")
    assert {"plan --budget-usd", "plan --samples", "scenarios --rule", "train --threads", "bound --certify-step",
            "evaluate --max-poor-deck-area", "calibrate --years", "bench --seeds"} <= set(checked)
    assert len(checked) >= 40


def test_running_out_of_memory_names_the_options_of_the_command_that_ran(monkeypatch, capsys):
    from bridgefleet.cli import parser

    def too_big(args):
        raise MemoryError("Unable to allocate 29.8 GiB for an array with shape (1000000000, 8) and data type float32")

    monkeypatch.setattr(parser, "cmd_plan", too_big)  # as `plan --samples 1000000000` did
    assert _refusal(["plan", "--policy", "worst_first", "--samples", "1000000000"], capsys) == (
        "bridgefleet plan: error: not enough memory (Unable to allocate 29.8 GiB for an array with shape "
        "(1000000000, 8) and data type float32): try fewer --samples or --years, or a smaller fleet")
    monkeypatch.setattr(parser, "cmd_scenarios", too_big)
    assert _refusal(["scenarios"], capsys).endswith(
        "try a coarser --certify-step, fewer --episodes or --years, or a smaller fleet")
