"""`bridgefleet report`: a self-contained page, rendered in headless Chromium, and its refusals."""

import html
import json
import re
import shutil
import subprocess

import markupsafe
import pytest

from bridgefleet.cli import main
from bridgefleet.config.training import TrainConfig
from bridgefleet.evaluation.scenario_tables import RULE_SENTENCE, lumps_sentence
from bridgefleet.inventory.load import load_inventory
from bridgefleet.report import build_report, read_scenarios
from bridgefleet.training.runner import train

BRIDGE = {"agent": "bridge", "bridge_hidden": [32, 32], "batch_size": 256, "learning_starts": 500,
          "buffer_capacity": 20_000, "num_envs": 8, "episodes": 16, "eval_every": 8, "eval_episodes": 4,
          "checkpoint_every": 8, "reward_scale": 1.0, "lr": 3e-3, "threads": 1, "amp": False,
          "fleet": {"horizon_years": 8}}
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.fixture(scope="module")
def dc_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("dc") / "run"
    train(TrainConfig.from_dict({**BRIDGE, "fleet": {**BRIDGE["fleet"], "inventory": "dc-2019"}}), out,
          progress=False)
    return out


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("default") / "run"
    train(TrainConfig.from_dict(BRIDGE), out, progress=False)
    return out


def _render(page, tmp_path):
    """DOM after the page's scripts ran, and the browser's console lines (errors show there)."""
    proc = subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                           "--v=0", "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    shot = tmp_path / f"{page.stem}.png"
    subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1200,2400", f"--screenshot={shot}", page.as_uri()], capture_output=True,
                   timeout=120)
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc.stdout, console, shot


def _render_checked(page, tmp_path, sections):
    """Render ``page``; assert no console line, the table script ran to its end and every section is there.
    Returns (DOM, screenshot path)."""
    dom, console, shot = _render(page, tmp_path)
    assert console == []
    assert 'data-ready="yes"' in dom  # the table script ran to its end
    for section in sections:
        assert f'<section id="{section}">' in dom
    return dom, shot


def test_the_report_is_one_self_contained_file_with_every_section(default_run, tmp_path, capsys):
    out = build_report(default_run, tmp_path / "r.html", episodes=4, samples=2, bound=True)
    assert "never updated" not in capsys.readouterr().err  # a trained run (the untrained: test_outputs.py)
    text = out.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)  # nothing fetched from a network
    for section in ("fleet", "policies", "plan", "training"):
        assert f'<section id="{section}">' in text
    assert 'id="map"' not in text  # the synthetic fleet has no coordinates
    for row in ("trained agent (this run)", "worst first <code>worst_first</code>", "planner <code>lagrangian</code>",
                "upper bound: no plan within the budgets can do better"):
        assert f"<td>{row}" in text
    assert "<code>random</code>" not in text  # no agency decides at random
    assert "rural agency: repair fair <code>rural_2_repair_fair</code>" in text  # 80 rural bridges: their rules kept
    assert "Over 4 simulated fleets of the model, 8 years each: at year 8 the trained agent leaves" in text
    assert "of deck area poor against" in text
    assert ("The plan is for one fleet of the continuous-2026 fleet model (fleet seed 0), the mean of 2 simulated "
            "futures (as plan.csv's); section 2's\nfigures are means over 4 simulated fleets") in text
    assert "<th>deck area poor, worst year</th>" in text
    assert text.count("today's best rule of thumb") == 2  # the sentence and its row: one best rule of thumb
    for jargon in ("return unit", "mean discounted return", "do-nothing", "greedy", "evaluation fleets",
                   "cost-equivalent", "thousand USD"):
        assert jargon not in text, jargon
    assert 'id="trained-elsewhere"' not in text  # reported on the fleet it was trained on
    # how the run learned, and at which budgets (BRIDGE: SARSA at the sized budget alone)
    assert "<td>how it learned</td><td>reinforcement learning (SARSA targets)</td>" in text
    assert "<td>budgets learned at</td><td>1 × the sized budget</td>" in text
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (.ci/run installs Debian's chromium)")
def test_dc_report_renders_in_headless_chromium_without_console_errors(dc_run, tmp_path):
    out = build_report(dc_run, tmp_path / "dc.html", episodes=4, samples=2, bound=False)
    dom, shot = _render_checked(out, tmp_path, ("fleet", "policies", "plan", "bridges", "map", "training"))
    # FHWA's measure today first: 12.1 % of DC's NHS deck area poor (inventory dc-2019 prints the same), rule broken
    today = re.search(r'<p class="headline breach" id="fhwa-today"><span class="big">([\d.]+) %</span>\s*of the NHS '
                      r"deck area is poor today, against FHWA's limit of 10 %:\s*<strong>the rule is not met today",
                      dom)
    assert today and today.group(1) == "12.1"
    assert dom.index('id="fhwa-today"') < dom.index('<section id="policies">')
    assert 'id="trained-elsewhere"' not in dom  # trained on dc-2019
    # a run of the continuous model (this fixture's): its bridges by its urban and rural agencies
    agencies = re.findall(r"<tr><td>([^<]+)</td><td>(\d+)</td><td>\d+ \(", dom)
    assert agencies == [("urban", "243"), ("rural", "1"), ("all", "244")]
    assert "District of Columbia" in dom  # the state outline's name, drawn under the bridges
    assert "<code>rural_" not in dom  # DC's one rural bridge: no rural fleet strategies
    ids = set(load_inventory("dc-2019").bridge_id)
    shown = [html.unescape(s) for s in re.findall(r"<tr><td>\d+</td><td>([^<]+)</td><td>(?:urban|rural)</td>", dom)]
    assert len(shown) == 50 and set(shown) <= ids  # first page of the plan, structure numbers as in the file
    assert re.search(r"\d+ bridges with coordinates \(NBI items 16/17\)", dom)
    assert shot.stat().st_size > 50_000


def test_refusals_are_one_line_and_leave_nothing(default_run, tmp_path, capsys):
    unfinished = tmp_path / "unfinished"
    shutil.copytree(default_run, unfinished)
    (unfinished / "final.pt").unlink()
    assert main(["report", str(unfinished), "--episodes", "2", "--no-bound", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no final.pt (training has not finished)" in err and len(err.splitlines()) == 1
    assert not (unfinished / "report.html").exists()
    (tmp_path / "notarun").mkdir()
    assert main(["report", str(tmp_path / "notarun"), "--quiet"]) == 2
    assert "not a bridgefleet run directory (no config.yaml)" in capsys.readouterr().err
    assert main(["report", str(default_run), "--out", str(tmp_path / "missing" / "r.html"), "--quiet"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["report", str(default_run), "--out", str(tmp_path), "--quiet"]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_an_inventory_that_does_not_match_a_fleet_agent_run_is_refused(tmp_path, capsys):
    run = tmp_path / "fleet"
    train(TrainConfig.from_dict({"urban_hidden": [16], "rural_hidden": [16], "batch_size": 8, "num_envs": 4,
                                 "learning_starts": 8, "episodes": 8, "eval_every": 8, "eval_episodes": 2,
                                 "threads": 1,
                                 "fleet": {"horizon_years": 3}}), run, progress=False)
    capsys.readouterr()
    assert main(["report", str(run), "--inventory", "dc-2019", "--episodes", "2", "--no-bound", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "trained urban agent expects 20: keep 20 under it (--max-urban 20)" in err and len(err.splitlines()) == 1
    assert not (run / "report.html").exists()
    assert main(["report", str(run), "--inventory", "dc-2019", "--max-urban", "20", "--episodes", "2", "--no-bound",
                 "--samples", "1", "--quiet"]) == 0  # the option the message names works
    assert (run / "report.html").is_file()


def test_the_report_shows_what_each_budget_buys_from_a_scenarios_folder(default_run, tmp_path, capsys):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("n_urban: 3\nn_rural: 3\n")
    scn = tmp_path / "scn"
    assert main(["scenarios", "--config", str(fleet), "--budgets", "0.5,1", "--years", "5", "--episodes", "3",
                 "--bisect", "0", "--out", str(scn), "--quiet"]) == 0
    data = json.loads((scn / "scenarios.json").read_text())
    out = build_report(default_run, tmp_path / "r.html", episodes=2, samples=2, bound=False, scenarios=scn,
                       plan_policy="lagrangian")
    text = out.read_text()
    assert '<section id="scenarios">' in text and "What each budget buys" in text
    assert RULE_SENTENCE in text and RULE_SENTENCE in (scn / "scenarios.md").read_text()  # one sentence, both places
    assert "3. The plan of the planner" in text
    cert = data["certified_least_scale"] * data["sized_usd"]
    assert f"Certified least budget: USD {cert:,.0f} a" in text
    lumps = lumps_sentence(data["treatment_in_annual_budgets"])  # the floor and its lumps, both places
    assert str(markupsafe.escape(lumps)) in text and lumps in (scn / "scenarios.md").read_text()
    breaches = data["planner_least_breaches"]  # at the planner's least budget: here the lowest level, 0.5
    assert data["planner_least_scale"] == 0.5 and breaches is not None
    assert f"the probability of a breach in some year is {breaches['any_year']:.0%}" in text
    assert text.count("<svg") >= 3  # the scenarios chart beside the others
    assert main(["report", str(default_run), "--scenarios", str(tmp_path), "--quiet"]) == 2
    assert "no scenarios.json" in capsys.readouterr().err
    other = tmp_path / "other"  # levels of an inventory beside a fleet model's run: refused before any work
    other.mkdir()
    (other / "scenarios.json").write_text(json.dumps({**data, "fleet": "dc-2019"}))
    assert main(["report", str(default_run), "--scenarios", str(other / "scenarios.json"), "--quiet"]) == 2
    assert "its levels are of dc-2019, this report is of the run’s fleet model" in capsys.readouterr().err  # the file
    damaged = tmp_path / "damaged"  # a damaged scenarios.json: one line naming the file and the field, no report
    damaged.mkdir()
    bad = damaged / "scenarios.json"
    level = data["levels"][0]
    for text, says in [("[1, 2]", "is not an object"), ('{"levels": ', "not the JSON bridgefleet scenarios writes"),
                       (json.dumps({k: v for k, v in data.items() if k != "levels"}), "field 'levels' is missing"),
                       (json.dumps({**data, "levels": []}), "no budget levels"),
                       (json.dumps({**data, "levels": "x"}), "field 'levels' is missing or not a list"),
                       (json.dumps({**data, "sized_usd": None}), "field 'sized_usd' is missing or not a number"),
                       (json.dumps({**data, "levels": [{}]}), "level 1: field 'scale' is missing"),
                       (json.dumps({**data, "treatment_in_annual_budgets": {"replacement_max": "x"}}),
                        "treatment_in_annual_budgets: field 'rehabilitation_median' is missing or not a number"),
                       (json.dumps({**data, "levels": [level, {**level, "deck_poor_by_year": [0.1]}]}),
                        "level 2: deck_poor_by_year is not one share (0 to 1) a year for every level"),
                       ('[' * 100_000 + ']' * 100_000, "not the JSON bridgefleet scenarios writes (nested too deep)"),
                       (json.dumps({**data, "rule": float("nan")}), "field 'rule' is nan, not a finite number ≥ 0"),
                       (json.dumps({**data, "rule": 1.5}), "the rule 1.5 is not a share in (0, 1]"),
                       (json.dumps({**data, "sized_usd": -1}), "field 'sized_usd' is -1, not a finite number ≥ 0"),
                       (json.dumps({**data, "episodes": 16.0}), "field 'episodes' is missing or not a whole number"),
                       (json.dumps({**data, "planner_least_breaches": "x"}),
                        "field 'planner_least_breaches' is missing or not an object or null"),
                       (json.dumps({**data, "treatment_in_annual_budgets": {
                           **data["treatment_in_annual_budgets"], "rehabilitation_median": -5}}),
                        "treatment_in_annual_budgets: field 'rehabilitation_median' is -5, not a finite number ≥ 0")]:
        bad.write_text(text)
        assert main(["report", str(default_run), "--scenarios", str(damaged), "--out", str(damaged / "r.html"),
                     "--quiet"]) == 2
        err = capsys.readouterr().err
        assert f"{bad}: " in err and says in err and err.count("\n") == 1, err
        assert not (damaged / "r.html").exists()
    bad.write_text(json.dumps({k: v for k, v in data.items() if k != "treatment_in_annual_budgets"}))
    assert read_scenarios(bad)["levels"]  # written before the lumps were: still read (the report leaves them out)


def _result(name, ret, cost, poor_count, poor_deck, slide=0.0, user=0.0, returns=None):
    import numpy as np

    from bridgefleet.evaluation.evaluate import EvalResult

    deck = np.zeros((2, 10, 3))
    deck[:, :, 2] = poor_deck
    deck[:, 6, 2] += slide  # year 7 the worst
    rets = np.array([ret, ret]) if returns is None else np.asarray(returns, dtype=float)
    return EvalResult(name, 2, float(rets.mean()), 1.0, cost, 0.0, 0.0, rets, np.array([cost, 0.0]),
                      np.full(10, poor_count), np.zeros(5), deck, np.zeros((2, 10)), np.full((2, 10), user), 0.95,
                      "NHS bridges")


def test_the_plain_words_put_fhwas_deck_area_first_and_say_when_the_count_goes_the_other_way():
    from bridgefleet.report.policies import TRAINED, best_rule, plain_words

    # 100 bridges: the trained policy leaves 2 % of them poor (2 bridges) but 0.2 % of deck area; the best rule
    # of thumb 1 % (1 bridge) and 4.6 %; it spends 10 % more; road users lose USD 2.5 million a year under it
    # against 4 million under the rule. In year 7 the trained policy leaves 0.2 + 12 = 12.2 % poor, its worst
    # year; the rule of thumb's worst is its first (every year alike). Doing nothing scores higher than the rule
    # here, yet it is no rule of thumb: the best is worst_first.
    results = [_result(TRAINED, 450.0, 1.1e6, 0.02, 0.002, slide=0.12, user=2.5e6),
               _result("worst_first", 400.0, 1.0e6, 0.01, 0.046, user=4e6), _result("do_nothing", 420.0, 0.0, 0.5, 0.5)]
    best = best_rule(results)
    assert best.policy == "worst_first"
    sentence = plain_words(results, best, 100, inventory=True)
    assert sentence == ("Over 2 simulated 10-year futures of this fleet: at year 10 the trained agent leaves 0.2% of "
                        "NHS deck area poor against 4.6% under today's best rule of thumb (worst first) with the same "
                        "annual budgets, and 12.2% (year 7) against 4.6% (year 1) in each one's worst year (FHWA's "
                        "limit is 10 %), with 1.0 more bridges poor (smaller ones); it spends 10% more a year than the "
                        "rule of thumb (each within the budgets), and road users' cost of poor bridges (detours and "
                        "delay) is USD 1.50 million a year lower (USD 2.50 million against USD 4.00 million).")
    nothing_spent = _result("worst_first", 400.0, 0.0, 0.01, 0.046, user=2.5e6)
    free = plain_words([results[0], nothing_spent], nothing_spent, 100, inventory=False)  # no percentage of nothing
    assert "it spends USD 1.10 million a year where the rule of thumb spends nothing, and road users' cost of poor " \
           "bridges is the same." in free and free.startswith("Over 2 simulated fleets of the model, 10 years each")


def test_the_score_runs_from_doing_nothing_to_the_bound_and_identical_rules_show_once():
    from bridgefleet.report.policies import collapse, money, owner_rules, plain_name, scale

    # do nothing 400, bound 500: a policy at 450 scores 50, a CI of 2 units is 2 points
    results = [_result("do_nothing", 400.0, 0.0, 0.5, 0.5), _result("worst_first", 450.0, 1e6, 0.1, 0.1)]
    sc = scale(results, (500.0, 0.0))
    assert sc.score(450.0) == 50.0 and sc.points(2.0) == 2.0 and sc.top_is_bound
    no_bound = scale(results, None)  # the best policy is 100 where the bound was not computed
    assert no_bound.score(450.0) == 100.0 and not no_bound.top_is_bound
    twins = [*results, _result("rural_0_do_nothing", 400.0, 0.0, 0.5, 0.5), _result("x", 400.0, 0.0, 0.5, 0.5,
                                                                                      returns=[399.0, 401.0])]
    kept, same = collapse(twins)  # the same returns and deck area every episode: one row; the same mean only: two
    assert [r.policy for r in kept] == ["do_nothing", "worst_first", "x"]
    assert same == {"do_nothing": ["rural_0_do_nothing"], "worst_first": [], "x": []}
    assert not any(n.startswith("rural_") or n == "random" for n in owner_rules(1))  # DC's one rural bridge
    assert "rural_6_aadt_risk_weighted" in owner_rules(2) and "random" not in owner_rules(80)
    assert plain_name("rural_6_aadt_risk_weighted") == "rural agency: aadt risk weighted"
    assert plain_name("lagrangian") == "planner" and plain_name("worst_first") == "worst first"
    assert money(18_770_000) == "USD 18.77 million" and money(520_000.4) == "USD 520,000"


def test_the_warning_for_a_run_trained_elsewhere_gives_its_distance_to_the_planner():
    from bridgefleet.report.policies import TRAINED, elsewhere_warning, scale

    # do nothing 0, bound 1000: the planner at 900 and the trained agents at 342 are 55.8 points apart; they spend
    # USD 18.77 and 8.05 million a year and leave 12.2 % and 4.6 % of NHS deck area poor in their worst years
    results = [_result("do_nothing", 0.0, 0.0, 0.5, 0.5), _result("lagrangian", 900.0, 8.05e6, 0.01, 0.046),
               _result(TRAINED, 342.0, 18.77e6, 0.02, 0.002, slide=0.12)]
    words = elsewhere_warning("a synthetic fleet of bridgefleet's model", "dc-2019", results, scale(results, (1e3, 0)))
    assert words == ("This run was trained on a synthetic fleet of bridgefleet's model, not on dc-2019: its decisions "
                     "were never trained or checked on this fleet. Here it scores 55.8 points below the planner (0: do "
                     "nothing, 100: the upper bound), spends USD 18.77 million a year against the planner's USD 8.05 "
                     "million, and leaves 12.2% of NHS deck area poor in its worst year against the planner's 4.6%. "
                     "Use the planner's plan here (bridgefleet report RUN --policy lagrangian, bridgefleet plan "
                     "--policy lagrangian), or train on this fleet.")


def test_a_run_is_trained_elsewhere_unless_on_the_same_inventory_file(default_run, dc_run):
    from bridgefleet.config import FleetConfig
    from bridgefleet.inventory.load import bundled_path
    from bridgefleet.report.data import trained_elsewhere

    synthetic = FleetConfig.from_dict({"horizon_years": 8})
    dc = synthetic.with_inventory("dc-2019", None)
    assert trained_elsewhere(default_run, synthetic, synthetic) is None
    assert trained_elsewhere(default_run, synthetic, dc) == "a synthetic fleet of bridgefleet's model"  # the run's
    assert trained_elsewhere(dc_run, dc, synthetic) == "dc-2019"
    assert trained_elsewhere(dc_run, dc, dc) is None
    by_path = synthetic.with_inventory(str(bundled_path("dc-2019")), None)  # the same file by its path
    assert trained_elsewhere(dc_run, dc, by_path) is None


def test_a_run_reported_on_another_fleet_warns_at_the_top(default_run, tmp_path):
    out = build_report(default_run, tmp_path / "dc.html", inventory="dc-2019", episodes=2, samples=1, bound=False)
    text = out.read_text()
    warning = text.index('<div class="warning" id="trained-elsewhere"><strong>Trained on another fleet.</strong>')
    assert warning < text.index('<section id="fleet">')
    assert ("This run was trained on a synthetic fleet of bridgefleet&#39;s model, not on dc-2019: its decisions were "
            "never trained or checked on this fleet. Its distance to the planner is not measured") in text


def test_the_report_and_plan_csv_average_the_same_deterioration_samples():
    import inspect

    from bridgefleet.cli.parser import build_parser
    from bridgefleet.config.seeds import PLAN_SAMPLES
    from bridgefleet.evaluation.work_plan import compute_plan, make_plan

    parser = build_parser()
    assert parser.parse_args(["report", "RUN"]).samples == parser.parse_args(["plan", "RUN"]).samples == PLAN_SAMPLES
    for f in (build_report, compute_plan, make_plan):
        assert inspect.signature(f).parameters["samples"].default == PLAN_SAMPLES


def test_the_state_outlines_are_bundled_and_hold_dcs_bridges():
    import numpy as np
    from matplotlib.path import Path as Outline

    from bridgefleet.report.basemap import outlines_within, state_outlines

    states = dict(state_outlines())
    assert len(states) == 56 and all(np.array_equal(r[0], r[-1]) for rings in states.values() for r in rings)
    inv = load_inventory("dc-2019")
    ok = np.isfinite(inv.latitude) & np.isfinite(inv.longitude)
    points = np.c_[inv.longitude[ok], inv.latitude[ok]]
    inside = np.zeros(len(points), dtype=bool)
    for ring in states["District of Columbia"]:
        inside |= Outline(ring).contains_points(points)
    assert inside.mean() > 0.9  # the rest on the Potomac, the 1:10,000,000 outline's edge
    box = (points[:, 0].min(), points[:, 0].max()), (points[:, 1].min(), points[:, 1].max())
    assert {name for name, _ in outlines_within(*box)} == {"District of Columbia", "Maryland", "Virginia"}


@pytest.mark.parametrize("curve", [[(200, 3.5, 41.0, 40.0)], [(100, 1.0, 39.0, 40.0), (200, 2.0, 41.5, 40.0)]])
def test_the_training_chart_draws_one_evaluation_or_many_without_numerical_warnings(curve):
    import warnings

    from bridgefleet.report.charts import training_chart

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one point used to give a singular x-axis (divide by zero in matplotlib)
        svg = training_chart(curve, "worst_first")
    assert svg is not None and svg.lstrip().startswith(("<?xml", "<svg"))
    assert ("seconds of training" in svg) == (len(curve) > 1)


def test_scenarios_of_the_bundled_inventory_match_a_report_that_names_it_either_way():
    from bridgefleet.report import _check_same_fleet

    _check_same_fleet("/somewhere/src/bridgefleet/data/DC19.txt", "dc-2019", "sc")  # the name against the path
    _check_same_fleet("dc-2019", "/elsewhere/DC19.txt", "sc")
    _check_same_fleet("one fleet of the default fleet model (fleet seed 1)", None, "sc")
    for scenario_fleet, inventory in [("/data/INDIANA2019.csv", "dc-2019"), ("one fleet of the default fleet model",
                                                                            "dc-2019"), ("dc-2019", None)]:
        with pytest.raises(ValueError, match="run bridgefleet scenarios on the same fleet"):
            _check_same_fleet(scenario_fleet, inventory, "sc")


def test_the_settings_say_a_default_run_was_fitted_to_the_planner_across_budgets(tmp_path):
    from bridgefleet.config.presets import resolve_config
    from bridgefleet.report.data import settings

    rows = settings(tmp_path, resolve_config("default", None, {}))  # no summary.json: its rows are empty
    assert rows["how it learned"].startswith("fitted to the lagrangian planner's benefit of each action")
    assert rows["budgets learned at"] == "0.25 to 2 × the sized budget"
    assert rows["episodes"] is None and rows["training fleet"] == "synthetic, bridgefleet's default model"


@pytest.mark.parametrize(("episodes", "running"), [(16, None), (200, "running mean of 4 episodes")])
def test_training_curve_png_draws_a_running_mean_only_over_several_episodes(tmp_path, monkeypatch, episodes, running):
    from bridgefleet.runs import log

    rows = ["kind,episode,wall_seconds,train_return,epsilon,eval_return,target_return"]
    rows += [f"train,{e},{e},{-100 + e},0,," for e in range(1, episodes + 1)] + [f"eval,{episodes},1,,,-50,-60"]
    (tmp_path / "metrics.csv").write_text("\n".join(rows) + "\n")
    seen = []
    monkeypatch.setattr(log, "save_figure", lambda fig, out, dpi: seen.append(fig))
    log.plot_training_curve(tmp_path)
    labels = [t.get_text() for t in seen[0].axes[0].get_legend().get_texts()]
    assert labels[0] == "training episode return" and "mean of 1" not in " ".join(labels)
    assert (running in labels) if running else not any("mean" in label for label in labels)  # 200 // 50 = 4


def test_the_scenarios_chart_draws_today_as_year_0():
    from bridgefleet.evaluation.scenario_figure import plot_scenarios

    levels = [{"budget_usd": usd, "deck_poor_by_year": [0.12, 0.11]} for usd in (1e6, 2e6)]
    data = {"levels": levels, "sized_usd": 2e6, "rule": 0.1, "certified_least_scale": 0.5,
            "planner_least_scale": None, "basis": "NHS bridges"}
    assert "today (year 0): 12.1%" in plot_scenarios(data, today=0.121)  # DC's NHS deck area poor today
    assert "today (year 0)" not in plot_scenarios(data)


def test_the_bridge_panel_gives_the_plans_reasons_and_the_planners_exact_values():
    import numpy as np

    from bridgefleet.config import FleetConfig
    from bridgefleet.evaluation.evaluate import evaluate_with_bound
    from bridgefleet.evaluation.explain import FirstYear
    from bridgefleet.evaluation.work_plan import policy_plan
    from bridgefleet.report.bridges import year_one_panel
    from bridgefleet.report.data import plan_fleet

    # One fixed fleet of 5 bridges: the planner's plan beside the planner of the comparison, on the same fleet,
    # must agree on every bridge, and the panel's figures are the plan's (plan.csv's) and the planner's own.
    cfg = FleetConfig.named("components-2026", n_urban=3, n_rural=2, horizon_years=10, fixed_fleet=True,
                            fleet_seed=0, annual_budget_usd=4e6)  # the plan's fleet: seed 0 (policy_plan's)
    plan = policy_plan(cfg, "lagrangian", 10, samples=2)
    kept = []
    evaluate_with_bound(cfg, ["do_nothing"], 2, 0, watch=lambda p: kept.append(FirstYear(p)) or kept[-1])
    panel = year_one_panel(plan, kept[0], plan_fleet(cfg))
    treated = np.flatnonzero(plan.action[0] > 0)
    assert panel.treated == len(treated) > 0 and panel.planner_treated == len(treated) and panel.disagree == 0
    assert {r.bridge_id for r in panel.rows} == {str(plan.bridge_id[j]) for j in treated}
    for row in panel.rows:
        j = list(plan.bridge_id).index(row.bridge_id)
        assert row.planner == "the same" and row.agree
        assert row.waiting_usd == pytest.approx(plan.reasons.waiting_usd[0, j])
        assert row.cost_usd == pytest.approx(plan.cost_usd[0, j])
        chosen = [t for t in row.treatments if t.chosen]
        assert [t.name for t in chosen] == [row.action]  # the planner's exact values mark the plan's treatment
        assert chosen[0].waiting_usd == pytest.approx(row.waiting_usd, rel=1e-6)  # one figure, two paths
        assert chosen[0].cost_usd == pytest.approx(row.cost_usd)
        assert chosen[0].per_usd == pytest.approx(chosen[0].waiting_usd / chosen[0].cost_usd)
        assert row.why.startswith(f"funded: waiting a year would lose {row.per_usd:.2f} USD of value a USD")
    assert year_one_panel(plan, kept[0], plan_fleet(cfg), compare=False).rows[0].planner is None


def test_fleet_today_counts_the_bridges_by_the_owners_that_hold_the_budgets():
    # dc-2019 on the default (component) model: budgets held by its six owners (NBI item 22), each a row, then all
    from types import SimpleNamespace

    from bridgefleet.config import FleetConfig
    from bridgefleet.report.data import fleet_today, plan_fleet

    cfg = FleetConfig.named("components-2026").with_inventory("dc-2019")
    sim = plan_fleet(cfg)
    today = fleet_today(cfg, SimpleNamespace(bridge_id=sim.profile.bridge_id), sim)
    rows = {r["agency"]: r for r in today.agencies}
    assert list(rows)[:1] == ["01 state highway agency"] and list(rows)[-1] == "all" and len(rows) == 7
    assert rows["01 state highway agency"]["bridges"] == 205 and rows["66 National Park Service"]["bridges"] == 33
    assert sum(r["bridges"] for k, r in rows.items() if k != "all") == rows["all"]["bridges"] == 244
    assert "urban" not in rows
