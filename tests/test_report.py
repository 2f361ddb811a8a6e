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
    for row in ("trained policy", "worst_first", "lagrangian", "upper bound (budgets relaxed)"):
        assert f"<td>{row}</td>" in text
    assert "Averaged over the 4 evaluation fleets: at year 8 the trained policy leaves" in text
    assert "of deck area poor against" in text
    assert "The plan is for one fleet of the continuous-2026 fleet model (fleet seed 0); section 2" in text
    assert "<th>deck area poor, worst year</th>" in text and "one unit is worth USD 100,000" in text
    # how the run learned, and at which budgets (BRIDGE: SARSA at the sized budget alone)
    assert "<td>how it learned</td><td>reinforcement learning (SARSA targets)</td>" in text
    assert "<td>budgets learned at</td><td>1 × the sized budget</td>" in text
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (.ci/run installs Debian's chromium)")
def test_dc_report_renders_in_headless_chromium_without_console_errors(dc_run, tmp_path):
    out = build_report(dc_run, tmp_path / "dc.html", episodes=4, samples=2, bound=False)
    dom, shot = _render_checked(out, tmp_path, ("fleet", "policies", "plan", "map", "training"))
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
    assert "3. The plan of the lagrangian policy" in text
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


def test_the_plain_words_put_fhwas_deck_area_first_and_say_when_the_count_goes_the_other_way():
    import numpy as np

    from bridgefleet.evaluation.evaluate import EvalResult
    from bridgefleet.report.data import TRAINED, plain_words

    def result(name, ret, cost, poor_count, poor_deck, slide=0.0):
        deck = np.zeros((2, 10, 3))
        deck[:, :, 2] = poor_deck
        deck[:, 6, 2] += slide  # year 7 the worst
        return EvalResult(name, 2, ret, 1.0, cost, 0.0, 0.0, np.array([ret, ret]), np.zeros(2),
                          np.full(10, poor_count), np.zeros(5), deck, np.zeros((2, 10)), np.zeros((2, 10)), 0.95)

    # 100 bridges: the trained policy leaves 2 % of them poor (2 bridges) but 0.2 % of deck area; the best rule
    # of thumb 1 % (1 bridge) and 4.6 %; it spends 10 % more; 50 return units at λ = 1e-5 are USD 5,000,000.
    # In year 7 the trained policy leaves 0.2 + 12 = 12.2 % poor, its worst year; the rule of thumb's worst is
    # its first (every year alike).
    sentence = plain_words([result(TRAINED, 450.0, 1.1e6, 0.02, 0.002, slide=0.12),
                            result("worst_first", 400.0, 1.0e6, 0.01, 0.046)], 100, 1e-5)
    assert sentence == ("Averaged over the 2 evaluation fleets: at year 10 the trained policy leaves 0.2% of deck area "
                        "poor against 4.6% for today's best "
                        "rule of thumb (worst_first) under the same annual budgets, and 12.2% (year 7) against 4.6% "
                        "(year 1) in each one's worst year (FHWA's limit is 10 %), with 1.0 "
                        "more bridges poor (smaller ones); it spends 10% more a year than the rule of thumb (each "
                        "within the budgets) and is worth USD 5,000,000 "
                        "of cost-equivalent more than the rule of thumb over the horizon (present value: condition, "
                        "traffic and cost, at USD 100,000 a return unit).")
    worse = plain_words([result(TRAINED, 380.0, 1.1e6, 0.02, 0.002), result("worst_first", 400.0, 1.0e6, 0.01, 0.046)],
                        100, 1e-5)  # 20 units below it: worth less, said as such (not "worth USD -2,000,000")
    assert "is worth USD 2,000,000 of cost-equivalent less than the rule of thumb" in worse


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
