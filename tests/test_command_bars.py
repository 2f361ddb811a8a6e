"""One progress bar per command (issue 80 item 5) for `plan`, `plan --explain`, `bound` and `sweep`: the command
opens one bar, declares its work before doing it, and ends with all of it done (units: 10,000 bridge-years of the
planner's DP, :data:`bridgefleet.progress.BRIDGE_YEARS_PER_UNIT`; `sweep`'s: trials)."""

from __future__ import annotations

import io
from types import SimpleNamespace

import numpy as np
import pytest

from bridgefleet import progress
from bridgefleet.cli import main

SMALL = "model: components-2026\nn_urban: 3\nn_rural: 3\nhorizon_years: 5\nfixed_fleet: true\n"


@pytest.fixture
def bars(monkeypatch):
    """Every bar a command opens, drawn into a string (a test's stderr is no terminal), with its advances."""
    opened = []

    class Seen(progress.Work):
        def __init__(self, total, desc, unit, file=None):
            super().__init__(total, desc, unit, io.StringIO())
            self.desc, self.steps = desc, []
            opened.append(self)

        def advance(self, units: float = 1.0) -> None:
            self.steps.append(units)
            super().advance(units)

        update = advance

    monkeypatch.setattr(progress, "Work", Seen)
    return opened


def _solves(work) -> int:
    """The DP solves of the last price search, from the bar's postfix ('price search (6 bridges): 12 DP solves')."""
    return int(work.bar.postfix.split(": ")[-1].split(" DP")[0])


def test_plan_opens_one_bar_declares_its_work_and_ends_with_it_all_done(tmp_path, bars, capsys):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(SMALL)
    assert main(["plan", "--policy", "lagrangian", "--config", str(fleet), "--years", "4", "--samples", "2",
                 "--out", str(tmp_path / "p.csv")]) == 0
    assert [b.desc for b in bars] == ["plan"]
    work = bars[0]
    # 6 bridges × 4 years = 24 bridge-years: 2 samples at 0.6, the files at 3.0, the next million at 2.0 = 148.8
    # bridge-years; the search's 24 bridge-years a solve
    solves = _solves(work)
    assert 1 <= solves <= 200
    assert np.isclose(work.total, (148.8 + 24 * solves) / 10_000)
    assert np.isclose(work.bar.n, work.total)  # all of it done
    year = 0.6 * 2 * 6 / 10_000  # a year of the plan's 2 samples × 6 bridges
    assert sum(np.isclose(s, year) for s in work.steps) == 4
    assert "plan (lagrangian)" in capsys.readouterr().out  # printed once the bar is gone
    assert progress.current() is None


def test_a_rule_of_thumbs_plan_counts_its_years_and_files_and_quiet_opens_no_bar(tmp_path, bars):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(SMALL)
    assert main(["plan", "--policy", "do_nothing", "--config", str(fleet), "--years", "2", "--samples", "3",
                 "--out", str(tmp_path / "p.csv")]) == 0
    (work,) = bars
    # 6 bridges × 2 years = 12 bridge-years: 3 samples at 0.02 and the files at 3.0 = 36.72 bridge-years
    assert np.isclose(work.total, 36.72 / 10_000) and np.isclose(work.bar.n, work.total)
    assert main(["plan", "--policy", "do_nothing", "--config", str(fleet), "--years", "2", "--samples", "3",
                 "--out", str(tmp_path / "q.csv"), "--quiet"]) == 0
    assert len(bars) == 1  # --quiet: none


def test_plan_explain_and_bound_count_their_price_search(tmp_path, bars, capsys):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(SMALL)
    assert main(["bound", "--config", str(fleet), "--episodes", "1"]) == 0
    assert main(["plan", "--config", str(fleet), "--years", "5", "--explain", "U001"]) == 0
    assert "U001" in capsys.readouterr().out
    assert [b.desc for b in bars] == ["bound", "plan --explain"]
    for work in bars:  # one fixed fleet: 6 bridges × 5 years = 30 bridge-years a solve, each solve done
        assert np.isclose(work.total, 30 * _solves(work) / 10_000) and np.isclose(work.bar.n, work.total)


def test_a_sweeps_bar_counts_episodes_in_trials_and_takes_off_what_asha_stopped():
    from bridgefleet.sweep.ray_run import trials_counted

    tune = SimpleNamespace(Callback=object)
    counter = trials_counted(tune, max_episodes=40)
    a, b = SimpleNamespace(trial_id="a"), SimpleNamespace(trial_id="b")
    with progress.command_bar(2, "sweep", "trial", file=io.StringIO()) as work:
        counter.on_trial_result(0, [], a, {"episodes": 10})
        counter.on_trial_result(0, [], b, {"episodes": 10})
        counter.on_trial_result(0, [], a, {"episodes": 30})
        assert np.isclose(work.bar.n, 1.0)  # (30 + 10) / 40 episodes a trial
        counter.on_trial_complete(0, [], b)  # ASHA stopped b at 10: its 30 left come off the total
        assert np.isclose(work.total, 2 - 30 / 40)
        counter.on_trial_result(0, [], a, {"episodes": 40, "done_training": True})
        counter.on_trial_complete(0, [], a)
        assert np.isclose(work.bar.n, work.total) and np.isclose(work.total, 1.25)
        assert work.bar.postfix == "2 trial(s) ended"
    counter.on_trial_result(0, [], SimpleNamespace(trial_id="c"), {"episodes": 5})  # no bar: nothing, no error
    asha = trials_counted(tune, max_episodes=40, expected=0.5)  # under ASHA a trial holds half a trial
    with progress.command_bar(2 * 0.5, "sweep", "trial", file=io.StringIO()) as work:
        asha.on_trial_result(0, [], a, {"episodes": 10})
        asha.on_trial_result(0, [], b, {"episodes": 10})
        assert (work.total, work.done) == (1.0, 0.5)  # within what each holds
        asha.on_trial_result(0, [], a, {"episodes": 30})  # 0.75 of a trial: 0.25 past its half
        assert (work.total, work.done) == (1.25, 1.0)
        asha.on_trial_complete(0, [], b)  # stopped at 0.25: the other 0.25 it held comes off
        assert work.total == 1.0
        asha.on_trial_result(0, [], a, {"episodes": 40})
        asha.on_trial_complete(0, [], a)
        assert (work.total, work.done) == (1.25, 1.25)



def test_a_search_over_several_fleets_counts_its_first_solves_most():
    # 5 solves expected of 2 units each, falling over 0.6 × 5 = 3 of them to 0.08: 2, 4/3, 2/3, 0.16, 0.16 (4.32)
    with progress.command_bar(0, "bound", "unit", file=io.StringIO()) as work:
        share = progress.Share(10.0, expected=5, front=True)
        share.step()
        assert np.isclose(work.bar.n, 2) and np.isclose(work.total, 4.32)
        share.step()
        share.step()
        share.finish()  # stopped after 3: the last two steps' 0.32 come off
        assert np.isclose(work.total, 4) and np.isclose(work.bar.n, work.total)
        more = progress.Share(5.0, expected=5, front=True)  # 1 a solve: 2.16 in all
        for _ in range(6):  # one past those expected: the last step's 0.08 more
            more.step()
        assert np.isclose(work.total, 4 + 2.16 + 0.08) and np.isclose(work.bar.n, work.total)


def test_scenarios_weighs_its_levels_by_their_price_searches():
    from bridgefleet.evaluation import scenario_work as work

    # 4 aims, 16 paths (0.24 searches): below 1.5 × the least budget 0.4 all four, above it one
    assert np.isclose(work.level(0.3, 0.4, 4, 16), 4.24)
    assert np.isclose(work.level(0.59, 0.4, 4, 16), 4.24)
    assert np.isclose(work.level(0.61, 0.4, 4, 16), 1.24)
    assert np.isclose(work.level(1.0, None, 4, 16), 4.24)  # least budget not known yet: near it
    assert np.isclose(work.penalty(59), 1 + 0.885)
    with progress.command_bar(10, "scenarios", "search", file=io.StringIO()) as bar:
        probes = work.Counted(bar, 2.0)  # items of 2 searches, as _planner_least counts its probes
        probes.update(1)
        probes.total -= 2  # two probes not needed
        assert (bar.done, bar.total) == (2, 6)


def test_scenarios_on_the_component_model_opens_one_bar_and_ends_with_its_work_done(tmp_path, bars):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(SMALL)
    assert main(["scenarios", "--config", str(fleet), "--budgets", "0.5,1", "--episodes", "2", "--bisect", "1",
                 "--years", "5", "--max-penalty-chance", "0.5", "--out", str(tmp_path / "s")]) == 0
    (work,) = bars
    assert work.desc == "scenarios" and work.bar.unit == "search"
    assert work.steps[0] == 4.5  # the least budget first, 4.5 searches
    assert np.isclose(work.bar.n, work.total) and np.isclose(sum(work.steps), work.total)
