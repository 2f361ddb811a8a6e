"""One progress bar per command over its whole work (issue 80 item 5): the bar's units, a price search that notes
its solves in the command's bar instead of opening one of its own, probes not needed taken off the total, and the
default preset's work in the bar's units."""

from __future__ import annotations

import io
from types import SimpleNamespace

import numpy as np

from bridgefleet import progress
from bridgefleet.config import FleetConfig
from bridgefleet.config.training import TrainConfig
from bridgefleet.evaluation.evaluate import evaluate_with_bound
from bridgefleet.planning.planner import LagrangianPlanner
from bridgefleet.sim.simulator import FleetSimulator
from bridgefleet.training.distill_run import DistillTrainer


def test_a_bar_is_current_while_open_and_its_total_never_falls_below_the_work_done():
    out = io.StringIO()
    assert progress.current() is None
    with progress.command_bar(0, "scenarios", "level", file=out) as work:
        assert progress.current() is work
        work.total += 12
        progress.advance(9)
        work.total -= 3  # three probes not needed: off the bar, not done
        assert (work.bar.n, work.total) == (9, 9)
        work.total -= 5
        assert work.total == 9  # never below the work done
    assert progress.current() is None
    assert "scenarios" in out.getvalue()
    with progress.command_bar(5, "quiet", "policy", enabled=False) as work:  # --quiet: no bar
        assert work is None and progress.current() is None
        progress.advance(1)  # nothing to move, and no error


def test_the_policies_compared_and_the_planners_search_are_weighed_by_their_work():
    # 2 fleets × 3 bridges × 3 years = 18 fleet-bridge-years = 0.0018 units (10,000 bridge-years of DP each)
    cfg = FleetConfig(n_urban=1, n_rural=2, horizon_years=3, fixed_fleet=True, fleet_seed=7)
    with progress.command_bar(0, "evaluate", "policy", file=io.StringIO()) as work:
        evaluate_with_bound(cfg, ["do_nothing", "worst_first"], 2, 0, planner=False, progress=True)
        assert np.isclose(work.total, 2 * 0.02 * 0.0018) and np.isclose(work.bar.n, work.total)
        evaluate_with_bound(cfg, ["do_nothing"], 2, 0, planner=True, progress=True, max_iter=5)
        solves = int(work.bar.postfix.split(": ")[1].split(" DP")[0])
        assert 1 <= solves <= 5
        # one more rule, the planner's 3 years (5.5 a fleet-bridge-year) and its search: the one fixed fleet's
        # 3 bridges × 3 years a solve, 20 solves expected, the ones not needed taken off the total
        assert np.isclose(work.total, 3 * 0.02 * 0.0018 + 5.5 * 0.0018 + solves * 9 / 10_000)
        assert np.isclose(work.bar.n, work.total)  # all of it done
        before = work.total  # without progress (the rules of thumb a training run's target is) the bar is left alone
        evaluate_with_bound(cfg, ["do_nothing"], 2, 0, planner=False)
        assert work.total == before


def test_a_price_search_notes_its_solves_in_the_commands_bar_and_opens_none(monkeypatch):
    import tqdm

    opened = []
    real = tqdm.tqdm

    def counting(*args, **kwargs):
        opened.append(kwargs.get("desc"))
        return real(*args, **kwargs)

    cfg = FleetConfig(n_urban=1, n_rural=2, horizon_years=3, fixed_fleet=True, fleet_seed=7)
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    with progress.command_bar(0, "bound", "policy", file=io.StringIO()) as work:
        monkeypatch.setattr(tqdm, "tqdm", counting)
        LagrangianPlanner(max_iter=4, progress=True).prepare(sim)
    assert opened == []  # no bar of its own
    assert work.bar.postfix.startswith("price search (3 bridges): ")
    assert " DP solves" in work.bar.postfix


def test_the_default_presets_work_in_the_bars_units_by_hand():
    cfg = TrainConfig.from_dict({"preset": "default"})
    fleet = SimpleNamespace(horizon_years=30, n_bridges=100)
    me = SimpleNamespace(cfg=cfg, fleet_cfg=fleet, paths=4)
    assert (len(cfg.teacher_levels), cfg.dagger_rounds, cfg.fit_epochs, cfg.refit_epochs) == (4, 1, 30, 20)
    # 4 levels × (20 + 0.5 for the DAgger round's labels) = 82; rows a round 4 paths × 4 levels × 30 years × 100
    # bridges = 48,000: (30 × 48,000 + 20 × 96,000) / 600,000 = 5.6; three evaluations (target, two fits) = 3
    assert np.isclose(DistillTrainer.work(me), 82 + 5.6 + 3)


def test_a_search_longer_or_shorter_than_expected_moves_the_total_not_the_work_done():
    with progress.command_bar(10, "report", "policy", file=io.StringIO()) as work:
        short = progress.Share(4.0, expected=4)  # 4 units over 4 solves: 1 a solve
        assert work.total == 14
        short.step()
        short.finish()  # stopped after 1 solve: 3 units not needed
        assert (work.bar.n, work.total) == (1, 11)
        long = progress.Share(2.0, expected=2)
        for _ in range(5):
            long.step()
        long.finish()  # 5 solves of 1 unit: 3 past those expected added as they were done
        assert (work.bar.n, work.total) == (6, 16)
