"""Budgets in an agency's terms (evaluation/budget_terms.py, next_million.py, budget_words.py): the rule first at every
budget, the least budget for the chance of a penalty, the plain line on a worse figure, by hand; and on a small fleet
of the component model, the next million against two planner runs, the penalty's least budget on fresh paths and
plans that do not get worse with more money."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bridgefleet.config import FleetConfig
from bridgefleet.evaluation.budget_terms import (
    aims_for,
    chance_upper,
    penalty_least,
    penalty_paths,
    rule_first,
    worse_lines,
)
from bridgefleet.evaluation.budget_words import budget_terms
from bridgefleet.evaluation.evaluate import EvalResult
from bridgefleet.evaluation.next_million import three_running
from bridgefleet.evaluation.scenarios import Level

AIMS = (1.0, 0.9, 0.75, 0.5)


def _level(scale: float, poor: np.ndarray, aim: float, ret: float = 0.0, user: float = 0.0,
           good: float = 0.2) -> Level:
    """A level whose paths' share of deck area poor is ``poor`` (E, T) (good ``good``), return ``ret``, users' cost
    ``user`` USD a year on every path."""
    e, t = poor.shape
    deck = np.stack([np.full_like(poor, good), 1.0 - good - poor, poor], axis=-1)
    result = EvalResult("lagrangian", e, ret, 0.0, 0.0, 0.0, 0.0, np.full(e, ret), np.zeros(2), np.zeros(t),
                        np.zeros(5), deck, np.zeros((e, t)), np.full((e, t), user), 0.95)
    return Level(scale, scale * 1e6, result, bound=ret + 1.0, rule_met_by_bound=True, aim=aim)


def test_penalty_paths_are_the_fewest_that_show_the_chance_with_no_penalty_seen():
    assert penalty_paths(0.05) == 59 and penalty_paths(0.10) == 29
    assert chance_upper(0, 59) == pytest.approx(1 - 0.05 ** (1 / 59)) and chance_upper(0, 59) <= 0.05
    assert chance_upper(0, 58) > 0.05 and chance_upper(1, 59) > 0.05 and chance_upper(3, 3) == 1.0
    with pytest.raises(ValueError, match=r"max-penalty-chance 0\.005"):
        penalty_paths(0.005)


def test_three_running_counts_runs_of_three_years_above_the_rule():
    share = np.array([[0.11, 0.12, 0.13, 0.0], [0.11, 0.12, 0.05, 0.12], [0.0, 0.2, 0.2, 0.2]])
    np.testing.assert_array_equal(three_running(share, 0.10), [True, False, True])


def test_a_higher_budget_that_aims_looser_and_shows_more_poor_runs_again_at_the_lower_budgets_aim():
    # 0.5 ×: aimed at 5 %, worst year 4 %; 1 ×: aimed at 10 %, worst 8 % (worse with more money): run again at 5 %,
    # which keeps 3 %; 2 ×: aimed at 10 % but worst 2.5 %, no worse than either: kept.
    t = np.linspace(0.02, 1.0, 5)
    low = _level(0.5, np.tile(0.04 * t, (4, 1)), 0.05)
    mid = _level(1.0, np.tile(0.08 * t, (4, 1)), 0.10)
    high = _level(2.0, np.tile(0.025 * t, (4, 1)), 0.10)
    calls = []

    def rerun(scale, aims):
        calls.append((scale, aims))
        return _level(scale, np.tile(0.03 * t, (4, 1)), 0.10 * aims[0], ret=-5.0)

    out = rule_first([high, low, mid], 0.10, rerun, AIMS)
    assert calls == [(1.0, (0.5,))]
    assert [lv.scale for lv in out] == [0.5, 1.0, 2.0]
    assert out[1].tightened and out[1].aim == pytest.approx(0.05) and out[1].bound == mid.bound  # bound at the rule
    assert out[1].deck[..., 2].max() == pytest.approx(0.03) and out[2] is high
    assert aims_for(out, 3.0, 0.10, AIMS) == (0.5,) and aims_for(out, 0.4, 0.10, AIMS) == AIMS


def test_the_penalty_search_brackets_with_the_levels_confirms_then_bisects():
    # The planner's plan has three years running above 10 % on a quarter of its paths below 1.3 × and on none from
    # 1.3 ×. Levels on 16 paths at 0.5, 1 and 2 ×: 1 × misses (4 of 16), 2 × saw none, so it is judged on 59 paths
    # first; 1.5 × keeps it, 1.25 × does not (14 of 59), and 1.5 × is judged again on 59 fresh paths (none of 118).
    def run(scale, n):
        poor = np.zeros((n, 6))
        if scale < 1.3:
            poor[: n // 4, 1:4] = 0.15
        return _level(scale, poor, 0.10)

    probes = []

    def probe(scale, fresh):
        probes.append((scale, fresh))
        return run(scale, 59)

    pen = penalty_least([run(0.5, 16), run(1.0, 16), run(2.0, 16)], 0.10, 0.05, probe, 4, 10.0)
    assert probes == [(2.0, False), (1.5, False), (1.25, False), (1.5, True)]
    assert pen.scale == 1.5 and pen.counts == (0, 118) and pen.missed == 1.25 and pen.paths == 59
    assert pen.runs == [(0.5, 4, 16), (1.0, 4, 16), (1.25, 14, 59), (1.5, 0, 118), (2.0, 0, 16), (2.0, 0, 59)]
    assert pen.as_dict()["at_upper"] == pytest.approx(1 - 0.05 ** (1 / 118))
    # with three probes the last one goes to the second set of paths: 1.5 × is the answer, 1 × the miss below it
    probes.clear()
    pen = penalty_least([run(0.5, 16), run(1.0, 16), run(2.0, 16)], 0.10, 0.05, probe, 3, 10.0)
    assert probes == [(2.0, False), (1.5, False), (1.5, True)] and pen.scale == 1.5 and pen.missed == 1.0


def test_a_budget_its_second_set_of_paths_does_not_confirm_is_not_the_answer():
    # 59 paths clear at 2 ×, then 3 of 59 fresh ones with three years running: 3 of 118 shows no chance below 5 %
    def probe(scale, fresh):
        poor = np.zeros((59, 6))
        if fresh:
            poor[:3, 1:4] = 0.15
        return _level(scale, poor, 0.10)

    pen = penalty_least([_level(1.0, np.full((16, 6), 0.2), 0.10), _level(2.0, np.zeros((16, 6)), 0.10)], 0.10,
                        0.05, probe, 2, 10.0)
    assert pen.scale is None and pen.tried_to == 2.0 and pen.runs[-1] == (2.0, 3, 118)


def test_the_penalty_search_goes_beyond_the_levels_and_says_where_it_stopped():
    def probe(scale, fresh):
        return _level(scale, np.pad(np.full((59, 3), 0.2), ((0, 0), (0, 3))), 0.10)  # every path: 3 years running

    pen = penalty_least([_level(1.0, np.full((16, 6), 0.2), 0.10)], 0.10, 0.05, probe, 2, 10.0)
    assert pen.scale is None and pen.tried_to == pytest.approx(2.25)  # 1.5 ×, then 2.25 ×


def test_a_worse_figure_at_a_higher_budget_gets_a_line_saying_why():
    # 1 × and 2 × on the same 8 paths: year 1 poor 5.0 % at both; year 2 poor 6 % at 1 ×, 8 % at 2 × on every path
    # (no noise: the planner traded it, its return 30 higher = USD 3,000,000 at λ = 1e-5); 3 × shows 8.1 % ± noise.
    rng = np.random.default_rng(0)
    one = _level(1.0, np.tile([0.05, 0.06], (8, 1)), 0.10, ret=0.0)
    two = _level(2.0, np.tile([0.05, 0.08], (8, 1)), 0.10, ret=30.0)
    noisy = np.tile([0.05, 0.06], (8, 1)) + np.r_[0.03, -0.03, 0.03, -0.03, 0.03, -0.03, 0.03, -0.02][:, None] * [0, 1]
    three = _level(3.0, noisy + 0 * rng.random(), 0.10, ret=40.0)
    lines = worse_lines([one, two, three], 0.10, [1, 2], 1e-5)
    assert len(lines) == 2
    assert lines[0] == ("At 2 × the budget: poor deck area in year 2 8.0% against 6.0% at 1 × — the planner keeps the "
                        "poor share within its aim, 10 % of deck area poor, and puts the rest of the money where its "
                        "return (condition, road users' and agency cost together) gains most: USD 3,000,000 of value "
                        "more than at 1 ×.")
    assert lines[1].startswith("At 3 × the budget: poor deck area in year 2 6.1% against 6.0% at 1 × — within the "
                               "sampling noise of 8 paths")
    assert worse_lines([one, _level(2.0, np.tile([0.05, 0.06], (8, 1)), 0.10)], 0.10, [1, 2], 1e-5) == []


def test_the_report_and_scenarios_md_words_from_the_json():
    data = {"rule": 0.10, "sized_usd": 2e6, "certified_least_scale": 0.4,
            "levels": [{"scale": 0.5, "budget_usd": 1e6}, {"scale": 1.0, "budget_usd": 2e6}],
            "next_million": {"0.5": None, "1": {"out_of_poor_m2": 636.9, "penalty_before": 0.25,
                                                 "penalty_after": 0.0625, "user_usd": 12_590_937.0,
                                                 "worth_usd": 11_279_866.0}},
            "penalty_least": {"alpha": 0.05, "paths": 59, "scale": 0.75, "missed_scale": 0.625, "tried_to_scale": None,
                              "at_paths_running": 0, "at_paths": 59, "at_upper": 0.0495},
            "million_check": None, "worse_lines": [], "tightened": [1.0]}
    terms = budget_terms(data)
    assert terms.rows == [["0.5", "1,000,000", "—", "—", "—", "—"],
                          ["1", "2,000,000", "637", "25% → 6%", "12,590,937", "11,279,866"]]
    assert terms.lines[0] == (
        "Least budget that keeps the chance of a penalty (three consecutive years above 10% of deck area poor, 23 "
        "U.S.C. 119(f)(2)) below 5%: USD 1,500,000 a year (0.750 × the sized budget), where the least budget, USD "
        "800,000 a year, is the floor: below it no plan keeps the rule even on average. At it the planner's plan had "
        "three years running above the rule on 0 of 59 sampled paths: the chance is below 5.0% with 95 % confidence; "
        "at USD 1,250,000 a year the planner did not show it.")
    assert terms.lines[1].startswith("At 1 × the planner was run again aimed as tight as a lower budget needed")
    assert terms.lines[2] == "No higher budget shows a worse figure in the table than a lower one."
    assert budget_terms({k: v for k, v in data.items() if k in ("rule", "sized_usd", "levels")}) == ([], terms.head, [])
    none = {**data, "penalty_least": {"alpha": 0.05, "paths": 59, "scale": None, "missed_scale": 3.0,
                                      "tried_to_scale": 3.0, "runs": [[1.0, 9, 16], [3.0, 36, 59]]}}
    assert budget_terms(none).lines[0] == (
        "No budget up to USD 6,000,000 a year was shown to keep the chance of a penalty (three consecutive years above "
        "10% of deck area poor, 23 U.S.C. 119(f)(2)) below 5% (with 95 % confidence on 59 sampled paths a budget: 36 "
        "of 59 paths three years running at USD 6,000,000); the least budget, USD 800,000 a year, is the floor: below "
        "it no plan keeps the rule even on average.")


SMALL = {"n_urban": 12, "n_rural": 8, "horizon_years": 15}


@pytest.fixture(scope="module")
def small():
    from bridgefleet.inventory.fleet import one_fleet

    cfg, fleet = one_fleet(FleetConfig.named("components-2026", **SMALL), 1_000_000_000)
    return cfg, fleet, sum(cfg.budgets_usd)


def test_the_next_million_agrees_with_two_planner_runs_a_step_apart(small):
    # 20 bridges, 15 years, 16 paths at the sized budget (USD 519,376 a year): the step is a quarter of it.
    from bridgefleet.evaluation.next_million import check
    from bridgefleet.evaluation.scenarios import exact_level

    cfg, fleet, sized = small
    step = 0.25 * sized
    lv = exact_level(cfg, fleet, 1.0, 16, 7, 0.10, sized, step_usd=step)
    up = exact_level(cfg, fleet, 1.25, 16, 7, 0.10, sized)
    rows, _ = check(lv.margin, lv.result, up.result, (lv.bound, up.bound), cfg.cost_lambda, 0.10)
    value, area, users, _ = rows
    assert lv.margin.worth_usd > 0 and area.estimate > 0 and users.estimate > 0  # the money buys something
    assert value.measured > 0 and users.measured > 0
    assert all(r.agrees for r in rows), [(r.name, r.estimate, r.measured, r.tolerance) for r in rows]
    assert value.tolerance < 4 * abs(value.measured)  # the tolerance does not swallow the figure


def test_the_penalty_least_budget_keeps_the_chance_on_fresh_paths(small):
    from bridgefleet.evaluation.component_scenarios import PENALTY_AIMS
    from bridgefleet.evaluation.scenarios import exact_level

    cfg, fleet, sized = small
    levels = [exact_level(cfg, fleet, s, 16, 7, 0.10, sized) for s in (0.5, 1.0)]
    def probe(s, fresh):  # as scenarios probes: aimed as tight as the budget allows
        return exact_level(cfg, fleet, s, 59, 7 + 59 * fresh, 0.10, sized, PENALTY_AIMS, penalty=True)

    pen = penalty_least(levels, 0.10, 0.05, probe, 3, 20.0, misses=lambda lv: lv.aim <= 0.025 + 1e-12)
    assert pen.scale is not None
    fresh = exact_level(cfg, fleet, pen.scale, 100, 10_007, 0.10, sized, PENALTY_AIMS, penalty=True)
    k = int(three_running(fresh.deck[..., 2], 0.10).sum())
    assert k / 100 <= 0.05
    if pen.missed is not None:  # below it the planner was seen to miss: the search did not stop at any budget
        assert math.isfinite(pen.missed) and pen.missed < pen.scale


def test_scenarios_and_plan_say_it_in_the_agencys_terms(tmp_path, capsys):
    import csv
    import json

    from bridgefleet.cli import main

    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("model: components-2026\nfixed_fleet: true\nn_urban: 3\nn_rural: 2\n", encoding="utf-8")
    out = tmp_path / "scn"
    assert main(["scenarios", "--config", str(fleet), "--budgets", "1;2", "--years", "6", "--episodes", "4",
                 "--bisect", "0", "--max-penalty-chance", "0.1", "--quiet", "--out", str(out)]) == 0
    data = json.loads((out / "scenarios.json").read_text(encoding="utf-8"))
    assert set(data["next_million"]) == {"1", "2"} and data["penalty_least"]["alpha"] == 0.1
    assert data["penalty_least"]["paths"] == 29 and data["million_check"]["scale"] == 1.0
    assert len(data["million_check"]["rows"]) == 4 and isinstance(data["worse_lines"], list)
    text = (out / "scenarios.md").read_text(encoding="utf-8")
    assert "What the next USD 1 million a year buys at each budget" in text
    assert "Checked at 1 × the sized budget against two planner runs USD 1 million apart on the same 4" in text
    plan = tmp_path / "plan.csv"
    assert main(["plan", "--policy", "lagrangian", "--config", str(fleet), "--years", "6", "--samples", "4",
                 "--out", str(plan)]) == 0
    said = capsys.readouterr().out
    assert "chance of a penalty (three consecutive years above 10% of deck area poor" in said
    assert "The next USD 1 million a year" in said
    rows = list(csv.DictReader((tmp_path / "plan_summary.csv").open(encoding="utf-8")))
    assert len(rows) == 6 and all(float(r["next_million_user_usd"]) >= -1e9 for r in rows)
    assert "next_million_poor_m2" in rows[0]


@pytest.mark.parametrize(("field", "value"), [("next_million", {"1": {"out_of_poor_m2": "many"}}),
                                              ("penalty_least", {"alpha": 0.05, "paths": 59, "scale": float("nan")}),
                                              ("million_check", {"rows": "x"}), ("worse_lines", [3]),
                                              ("penalty_least", {"alpha": 0.05, "paths": 59, "scale": None,
                                                                 "tried_to_scale": 2.0, "runs": [[1.0, 2]]})])
def test_the_report_refuses_agency_terms_it_cannot_read_in_one_line(field, value):
    from bridgefleet.evaluation.budget_words import check_terms

    with pytest.raises(ValueError, match=f"scn.json: field '{field}") as err:
        check_terms({field: value}, "scn.json")
    assert "\n" not in str(err.value)
    check_terms({}, "scn.json")  # a file written before the terms: nothing to refuse


def test_the_reports_budget_section_gives_the_terms_of_its_scenarios(tmp_path):
    import json

    import markupsafe

    from bridgefleet.cli import main
    from bridgefleet.config.training import TrainConfig
    from bridgefleet.report import build_report
    from bridgefleet.training.runner import train

    run = tmp_path / "run"
    train(TrainConfig.from_dict({"agent": "bridge", "bridge_hidden": [16], "batch_size": 64, "learning_starts": 50,
                                 "buffer_capacity": 2_000, "num_envs": 2, "episodes": 4, "eval_every": 4,
                                 "eval_episodes": 2, "checkpoint_every": 4, "threads": 1, "amp": False,
                                 "fleet": {"model": "components-2026", "horizon_years": 6, "n_urban": 3,
                                           "n_rural": 2}}), run, progress=False)
    fleet = tmp_path / "fleet.yaml"  # the run's fleet, without its agent at every level
    fleet.write_text("model: components-2026\nhorizon_years: 6\nn_urban: 3\nn_rural: 2\n", encoding="utf-8")
    scn = tmp_path / "scn"
    assert main(["scenarios", "--config", str(fleet), "--budgets", "1;2", "--years", "6", "--episodes", "4",
                 "--bisect", "0", "--quiet", "--max-penalty-chance", "0.1", "--out", str(scn)]) == 0
    data = json.loads((scn / "scenarios.json").read_text(encoding="utf-8"))
    page = build_report(run, tmp_path / "r.html", episodes=2, samples=2, bound=False, scenarios=scn,
                        plan_policy="lagrangian").read_text(encoding="utf-8")
    assert '<table id="next-million">' in page and page.count("<tr>", page.index('id="next-million"')) >= 3
    words = budget_terms(data)
    assert words.lines and all(str(markupsafe.escape(line)) in page for line in words.lines)


def test_a_higher_budget_aimed_tighter_or_with_no_better_return_says_so():
    one = _level(1.0, np.tile([0.05, 0.06], (8, 1)), 0.10, ret=0.0)
    tight = _level(2.0, np.tile([0.05, 0.05], (8, 1)), 0.075, ret=-10.0, good=0.15)
    worse = _level(3.0, np.tile([0.05, 0.08], (8, 1)), 0.10, ret=-10.0)
    a, = worse_lines([one, tight], 0.10, [1, 2], 1e-5)
    assert a.startswith("At 2 × the budget: good deck area in year 1 15.0% against 20.0% at 1 ×; good deck area in "
                        "year 2 15.0% against 20.0% at 1 × — the planner aims tighter")
    assert a.endswith("— the planner aims tighter here (7.5 % of deck area poor against 10 % at 1 ×: the rule first), "
                      "and the money that takes comes from the rest.")
    b, = worse_lines([one, worse], 0.10, [1, 2], 1e-5)
    assert b.endswith("— the planner's own return is no better either (USD 1,000,000 of value less than at 1 ×): its "
                      "yearly choice of whole treatments is not always better with more money.")


def test_on_a_small_fleet_more_money_keeps_the_rule_figures_or_a_line_says_why(small):
    # 20 bridges, 15 years, 16 paths at 0.5, 1, 1.5 and 2 × the sized budget, the rule first: every level that met
    # the rule aims no looser than a lower one needed unless its rule figures are no worse; every figure of the table
    # worse at a higher budget (as the table rounds it) has its level's line.
    from bridgefleet.evaluation.component_scenarios import AIMS as EXACT_AIMS
    from bridgefleet.evaluation.scenarios import exact_level

    cfg, fleet, sized = small
    levels = [exact_level(cfg, fleet, s, 16, 7, 0.10, sized) for s in (0.5, 1.0, 1.5, 2.0)]
    out = rule_first(levels, 0.10, lambda s, aims: exact_level(cfg, fleet, s, 16, 7, 0.10, sized, aims), EXACT_AIMS)

    def rule_figures(lv):
        b = lv.result.breaches(0.10)
        return b["worst_year_poor"], b["any_year"], b["three_consecutive"]

    met = [lv for lv in out if (lv.deck[..., 2].mean(0) <= 0.10 + 1e-12).all()]
    for i, low in enumerate(met):
        for high in met[i + 1:]:
            assert high.aim <= low.aim + 1e-12 or all(
                h <= x + 1e-9 for h, x in zip(rule_figures(high), rule_figures(low), strict=True))
    lines = worse_lines(out, 0.10, [1, 5, 10], cfg.cost_lambda)
    for i, high in enumerate(out):
        poor = [round(float(high.deck[:, y - 1, 2].mean()), 3) for y in (1, 5, 10)]
        worse = any(round(float(low.deck[:, y - 1, 2].mean()), 3) < p
                    for low in out[:i] for y, p in zip((1, 5, 10), poor, strict=True))
        if worse:
            assert any(line.startswith(f"At {high.scale:g} × the budget:") for line in lines)
    assert all(line.startswith("At ") and line.endswith(".") and "\n" not in line for line in lines)


def test_a_level_aimed_looser_than_the_probes_does_not_say_its_budget_misses():
    # 1 × and 2 × aimed at the rule itself see three years running on half their paths; the probes, aimed as tight
    # as the budget allows, see none from 0.9 ×. From the least budget (0.5 ×): 0.75 × misses, 1.125 × keeps it,
    # confirmed on fresh paths: the answer lies below both levels.
    half = np.zeros((16, 6))
    half[:8, 1:4] = 0.15

    def probe(scale, fresh):
        poor = np.zeros((59, 6))
        if scale < 0.9:
            poor[:14, 1:4] = 0.15
        return _level(scale, poor, 0.05)

    pen = penalty_least([_level(1.0, half, 0.10), _level(2.0, half, 0.10)], 0.10, 0.05, probe, 3, 10.0, floor=0.5,
                        misses=lambda lv: lv.aim <= 0.025 + 1e-12)
    assert pen.scale == pytest.approx(1.125) and pen.missed == pytest.approx(0.75) and pen.counts == (0, 118)


def test_the_penalty_probes_aim_tightest_first_and_a_level_aimed_looser_does_not_count_as_a_miss():
    # the component model's probes try PENALTY_AIMS, tightest (25 % of the rule) first; a probe's plan aimed at 2.5 %
    # keeps every path clear, one aimed looser puts 3 years above the rule on every path (dc-2019 at 4.6 ×)
    from bridgefleet.evaluation.budget_terms import agency_terms
    from bridgefleet.evaluation.component_scenarios import AIMS, PENALTY_AIMS

    t = 6
    clear, running = np.full((59, t), 0.05), np.full((59, t), 0.12)
    calls = []

    def level_at(scale, aims, paths, fresh, quick):
        calls.append((scale, aims, paths, fresh, quick))
        return _level(scale, clear[:paths] if aims[0] == 0.25 else running[:paths], 0.10 * aims[0])

    # one level at 2 × aimed at 5 % whose 16 paths all ran 3 years above: aimed looser than a probe, it is no miss
    levels = [_level(2.0, np.full((16, t), 0.12), 0.05)]
    _, pen, _ = agency_terms(levels, level_at, 0.10, 0.05, 16, 1e6, 1.0, AIMS, [], 10.0, 1e6, 0.5, PENALTY_AIMS)
    assert PENALTY_AIMS[0] == 0.25 and list(PENALTY_AIMS) == sorted(PENALTY_AIMS)
    assert all(aims == PENALTY_AIMS and quick for _, aims, _, _, quick in calls)
    # up from the floor (0.5 ×) by 1.5, bisected, confirmed on fresh paths; the level at 2 × bounds nothing
    assert [(c[0], c[3]) for c in calls] == [(0.75, False), (0.625, False), (0.625, True)]
    assert pen.scale == 0.625 and pen.counts == (0, 118) and pen.missed is None
    # aimed as the levels are (the default: AIMS reversed, 5 % first), every probe's paths run 3 years above
    calls.clear()
    _, pen, _ = agency_terms(levels, level_at, 0.10, 0.05, 16, 1e6, 1.0, AIMS, [], 10.0, 1e6, 0.5)
    assert calls[0][1] == AIMS[::-1] and pen.scale is None


def test_a_penalty_probe_keeps_the_aim_with_the_fewest_paths_three_years_above():
    from types import SimpleNamespace

    from bridgefleet.evaluation.component_scenarios import try_for_penalty

    clear, one = np.full((4, 5), 0.05), np.full((4, 5), 0.05)
    one[2, 1:4] = 0.11  # one path three years running above 10 %
    planner = SimpleNamespace(aim=None, bound=None)
    tried = []

    def attempt(outcomes):
        def run():
            tried.append(planner.aim)
            planner.bound = SimpleNamespace(mean=-float(len(tried)), meets_rule=True)
            return outcomes[len(tried) - 1]
        return run

    # 25 % of the rule runs one path three years above, 50 % none: the second kept, with its own aim and bound
    out, mean, met, _ = try_for_penalty(planner, 0.10, attempt([one, clear]), lambda x: x, (0.25, 0.5))
    assert out is clear and tried == [0.025, 0.05] and planner.aim == 0.05 and mean == -2.0 and met
    # the tighter aim keeps every path clear: the looser one is not run
    tried.clear()
    out, mean, *_ = try_for_penalty(planner, 0.10, attempt([clear, one]), lambda x: x, (0.25, 0.5))
    assert out is clear and tried == [0.025] and planner.aim == 0.025 and mean == -1.0
    # both run a path above: the tighter kept (ties go to the lower worst-year mean, then the first)
    tried.clear()
    out, *_ = try_for_penalty(planner, 0.10, attempt([one, one.copy()]), lambda x: x, (0.25, 0.5))
    assert out is one and planner.aim == 0.025
