"""The per-bridge network fitted to the ``lagrangian`` planner's benefits (``teacher: lagrangian``).

config → one simulator of :func:`teacher_paths` fleets at each of the ``teacher_levels`` → each year the planner's
benefit of every action of every bridge (the teacher; :meth:`bridgefleet.planning.planner.LagrangianPlanner.benefits`)
→ rows (the bridge's features, its benefits per cost-equivalent USD, the teacher's margin) → fit (Adam, Huber on the
differences z_a − z_0) → DAgger rounds: the network decides, the teacher labels the states it reaches, the network
is fitted again on every row so far (Ross, Gordon & Bagnell, AISTATS 2011) → an evaluation on the validation fleets
after each fit (a curve; the network after the last fit is kept) → final.pt + summary.json, which every command
reads as a per-bridge run.

Why: the planner, within 1 % of the bound, decides by a knapsack on its DP benefits; the SARSA-trained agent's
benefits sat where 30 % noise on the planner's would (docs/decisions.md, "How precise the agent's benefits must
be"). The network learns the planner's benefit per USD (:func:`bridgefleet.agents.bridge.scaled_benefit`) at
several budget levels, so one run decides at any of them, in milliseconds and without a DP.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from bridgefleet.agents.bridge import (
    BridgePolicy,
    BridgeQNetwork,
    action_costs,
    agency_of,
    bridge_features,
    decide,
    n_features,
    scaled_benefit,
    unscaled_benefit,
)
from bridgefleet.agents.learner import resolve_device
from bridgefleet.config import FleetConfig
from bridgefleet.config.seeds import TRAINING_STRIDE
from bridgefleet.config.training import TrainConfig, cosine_share
from bridgefleet.evaluation.evaluate import best_heuristic, evaluate_heuristics, evaluate_policy
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.planning.columns import ColumnPool
from bridgefleet.planning.exact_planner import ExactPlanner
from bridgefleet.planning.planner import LagrangianPlanner
from bridgefleet.progress import Work, command_bar
from bridgefleet.runs.checkpoints import save_rolling
from bridgefleet.runs.log import Metrics, tensorboard
from bridgefleet.sim.simulator import FleetSimulator
from bridgefleet.training.hardware import HardwareChoice, choose, time_updates
from bridgefleet.training.loop import OnEval, write_final

# The progress bar's weights of the run's work (bridgefleet.progress), from the default preset's 274-second run on
# the default fleet (100 bridges, 2-core EPYC, 2026-12-07): each budget level's first labels, with its planner's price
# search, took 41-89 s; a DAgger round's labels of a level under 2 s; a fit 5 microseconds a row a pass; an
# evaluation of the network or of the rules of thumb a few seconds. One unit is about 3 seconds there.
SEARCH_LABELS_WEIGHT = 20.0
"""A budget level's first labels (its price search) on the bar."""
LABELS_WEIGHT = 0.5
"""A budget level's labels in a DAgger round (no new price search)."""
FIT_ROWS_PER_UNIT = 600_000.0
"""Rows fitted (rows × passes) for one unit of the bar."""
EVALUATION_WEIGHT = 1.0
"""An evaluation on the evaluation fleets (the rules of thumb for the target, or the network)."""

TEACHER_MAX_ITER = 20
"""DP solves of the teacher's price search (the planner's default is 80): on the default fleet's validation fleets
the network fitted to a search of 20 solves within 1 % decided as well as to one of 80 within 0.2 %, in a quarter
of the time (docs/decisions.md, "The planner distilled into the network")."""
TEACHER_TOL = 0.01
"""The teacher's price search stops within this share of its LP's value."""
MARGIN_WIDTH = 0.3
"""Scale of the margin weighting (``margin_weight``), in asinh(benefit per USD) units."""
UNAVAILABLE_GAP = 3.0
"""An action the teacher may not take (−inf benefit) is pushed this far below doing nothing in asinh units (a
benefit of −10 × its cost-equivalent), by a hinge weighed :data:`UNAVAILABLE_WEIGHT` against the fit."""
UNAVAILABLE_WEIGHT = 0.1


def warmup_cosine(step: int, steps: int, warmup: int) -> float:
    """The learning rate of a fit's ``step`` (0-based, of ``steps``) as a share of ``lr``: (step + 1) / ``warmup``
    over the first ``warmup`` steps (a linear warm-up: Goyal et al., "Accurate, large minibatch SGD", arXiv
    1706.02677, 2017), then a cosine from 1 to 0 over the rest (:func:`bridgefleet.config.training.cosine_share`)."""
    if step < warmup:
        return (step + 1) / warmup
    return cosine_share((step - warmup) / max(steps - warmup, 1))


@dataclass
class Rows:
    """The teacher's labels, one row per bridge and year: features float32 (N, n_in), scaled benefits float32
    (N, 5) (0 where unavailable), available bool (N, 5), margin float32 (N,) (the least scaled benefit the teacher
    funded that year in the bridge's fleet and agency)."""

    x: np.ndarray
    y: np.ndarray
    available: np.ndarray
    margin: np.ndarray

    @staticmethod
    def join(parts: list[Rows]) -> Rows:
        return Rows(*(np.concatenate([getattr(p, k) for p in parts]) for k in ("x", "y", "available", "margin")))

    def __len__(self) -> int:
        return len(self.x)


def teacher_margin(y: np.ndarray, actions: np.ndarray, agency: np.ndarray) -> np.ndarray:
    """float32 (E, B): for each bridge, the least scaled benefit y float32 (E, B, 5) (NaN: unavailable) among the
    treatments ``actions`` int (E, B) funds in its fleet and agency (``agency`` int (B,)), or, where it funds none,
    the largest available one (0 if none is)."""
    chosen = np.take_along_axis(y, actions[..., None], -1)[..., 0]
    out = np.zeros(actions.shape, dtype=np.float32)
    for g in np.unique(agency):  # each agency over all fleets and bridges at once
        sel = agency == g
        if not sel.any():
            continue
        least = np.where(actions[:, sel] > 0, chosen[:, sel], np.inf).min(1)
        treat = y[:, sel, 1:]
        best = np.where(np.isnan(treat), -np.inf, treat).max((1, 2))
        out[:, sel] = np.where(np.isfinite(least), least, np.where(np.isfinite(best), best, 0.0))[:, None]
    return out


def teacher_paths(cfg: TrainConfig, fleet_cfg: FleetConfig, fixed: bool) -> int:
    """Sample paths simulated at each budget level in a round: ``num_envs`` fleets of a fleet model (each costs the
    teacher a price search a level, in the first round only: later rounds revisit them on new paths); on a fixed
    fleet (an inventory: one price search a level, then only its noise differs) as many sample paths as label
    ``teacher_rows`` bridge-years a round, at least ``num_envs`` (dc-2019: 14)."""
    if not fixed:
        return cfg.num_envs
    per_path = len(cfg.teacher_levels) * fleet_cfg.n_bridges * fleet_cfg.horizon_years
    return max(cfg.num_envs, -(-cfg.teacher_rows // per_path))


class DistillTrainer:
    """One run fitting the per-bridge network to the lagrangian planner (``teacher``), writing into ``run_dir``
    what a SARSA run writes (final.pt, summary.json, metrics.csv, TensorBoard, checkpoints), so ``evaluate``,
    ``plan``, ``scenarios`` and ``report`` read it as any per-bridge run. An episode here is one fleet the teacher
    labels."""

    agent = "bridge"

    def __init__(self, cfg: TrainConfig, run_dir: Path, progress: bool = True, reprobe: bool = False):
        self.cfg = cfg
        self.run_dir = run_dir
        self.progress = progress
        (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        self.fleet_cfg, self.fleet = resolve_fleet(cfg.fleet)
        if not self.fleet_cfg.cost_lambda > 0:
            raise ValueError(f"cost_lambda = {self.fleet_cfg.cost_lambda}: a run with a teacher learns benefits per "
                             "cost-equivalent USD, so the fleet's cost_lambda must be > 0")
        self.n_in = n_features(cfg)
        self.device = resolve_device(cfg.device)
        torch.manual_seed(cfg.seed)
        self.net = BridgeQNetwork(cfg.bridge_hidden, cfg.dueling, self.n_in, cfg.rating_ramps,
                                  cfg.input_scaling).to(self.device)
        self.hardware = self._choose_hardware(reprobe)
        torch.set_num_threads(self.hardware.threads)
        self.amp = self.hardware.amp != "off"
        self.paths = teacher_paths(cfg, self.fleet_cfg, self.fleet is not None)
        cfg.check_training_seeds(self.paths)  # the config checked num_envs paths; an inventory's may be more
        self.sim = FleetSimulator(self.fleet_cfg, self.paths, self.fleet)
        # the same fleets in every round (new sample paths): each level's prices are computed once, each search
        # starting from the policies the searches at the other levels found (the pool)
        self.teachers: dict[float, LagrangianPlanner | ExactPlanner] = {}
        self.pool = ColumnPool()
        self.rng = np.random.default_rng(cfg.seed)
        self.episodes_done = 0
        """Fleet-episodes the teacher labelled (each fleet once at each level)."""
        self.rounds_done = 0
        self.steps = 0
        self.last_eval: float | None = None
        self.best_eval: float | None = None
        self.target_return: float | None = None
        self.target_policy = ""
        self.episodes_to_target: int | None = None
        self.seconds_to_target: float | None = None
        self.on_eval: OnEval | None = None
        self.purge_step: int | None = None
        self.metrics: Metrics | None = None
        self.bar: Work | None = None
        self.t0 = time.perf_counter()

    @property
    def update_step(self) -> int:
        """Optimizer steps so far."""
        return self.steps

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def _choose_hardware(self, reprobe: bool) -> HardwareChoice:
        """Precision and threads, probed on one fit step of the run's batch (as the SARSA trainer's probe)."""
        cfg = self.cfg
        rng = np.random.default_rng(0)
        rows = Rows(rng.random((cfg.batch_size, self.n_in), dtype=np.float32),
                    rng.random((cfg.batch_size, 5), dtype=np.float32), np.ones((cfg.batch_size, 5), dtype=bool),
                    np.zeros(cfg.batch_size, dtype=np.float32))

        def timed(amp: str, threads: int) -> float:
            net = copy.deepcopy(self.net)
            opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
            tensors = self._tensors(rows)
            idx = torch.arange(cfg.batch_size, device=self.device)
            return time_updates(lambda: self._step(net, opt, tensors, idx, amp != "off"), threads)

        key = f"distill {self.n_in}-{'-'.join(map(str, cfg.bridge_hidden))}-5 batch {cfg.batch_size}"
        return choose(cfg.amp, cfg.threads, self.device, timed, key, reprobe)

    # the teacher ----------------------------------------------------------------------------------------------
    def collect(self, student: bool) -> Rows:
        """:func:`teacher_paths` fleets (or paths of a fixed fleet), the same at each budget level (so the network
        sees how one bridge's benefit moves with the budget: on the default fleet's validation fleets, seed 0, distance
        to the bound per bridge at 0.5 × 1.12 with other fleets at each level, 0.80 with the same) and in every round
        (a DAgger round draws new deterioration noise: new paths, no new price search), every year labelled by the
        teacher; the teacher's knapsack decides (the first fit) or the network's (``student``, a DAgger round)."""
        cfg, sim = self.cfg, self.sim
        fleets = [cfg.seed + i for i in range(self.paths)]
        noise = [cfg.seed + self.rounds_done * self.paths * TRAINING_STRIDE + i for i in range(self.paths)]
        lam = self.fleet_cfg.cost_lambda
        agency = agency_of(sim)
        policy = BridgePolicy(self.net.eval(), self.device, distilled=True)
        parts = []
        for k, level in enumerate(cfg.teacher_levels):
            if self.bar is not None:
                self.bar.stage(f"planner labels, round {self.rounds_done + 1}, level {k + 1}/{len(cfg.teacher_levels)}"
                               + ("" if self.rounds_done else " (its price search first)"))
            if level not in self.teachers and self.fleet_cfg.component_model is not None:
                self.teachers[level] = ExactPlanner()  # the component model's planner: exact values, no grid
            elif level not in self.teachers:
                self.teachers[level] = LagrangianPlanner(max_iter=TEACHER_MAX_ITER, tol=TEACHER_TOL, pool=self.pool,
                                                         like=next(reversed(self.teachers.values()), None))
            teacher = self.teachers[level]
            sim.set_budget_scale(np.full(self.paths, level))
            sim.reset(None, fleets)
            if self.rounds_done:
                sim.redraw_noise(noise)
            cost = action_costs(sim)
            ret = np.zeros(self.paths)
            for year in range(self.fleet_cfg.horizon_years):
                feats = bridge_features(sim, cost, self.n_in)
                ben = teacher.benefits(sim)
                actions = decide(ben, cost, sim)
                y = scaled_benefit(ben, cost, lam)
                margin = teacher_margin(y, actions, agency)
                available = ~np.isnan(y)
                parts.append(Rows(feats.reshape(-1, self.n_in), np.where(available, y, np.float32(0)).reshape(-1, 5),
                                  available.reshape(-1, 5), margin.reshape(-1)))
                if student:
                    z = policy.q_values(feats)
                    actions = decide(unscaled_benefit(z, cost, lam), cost, sim)
                ret += self.fleet_cfg.discount ** year * sim.step_requests(actions).reward
            for r in ret:
                self.episodes_done += 1
                if self.metrics is not None:
                    self.metrics.train(self.episodes_done, self.elapsed(), float(r), 0.0)
            if self.bar is not None:
                self.bar.advance(LABELS_WEIGHT if self.rounds_done else SEARCH_LABELS_WEIGHT)
        sim.set_budget_scale(np.ones(self.paths))
        self.rounds_done += 1
        rows = Rows.join(parts)
        if len(rows) <= cfg.teacher_rows_kept:
            return rows
        keep = np.sort(self.rng.choice(len(rows), cfg.teacher_rows_kept, replace=False))
        return Rows(rows.x[keep], rows.y[keep], rows.available[keep], rows.margin[keep])

    # the fit --------------------------------------------------------------------------------------------------
    def _tensors(self, rows: Rows) -> tuple[torch.Tensor, ...]:
        return tuple(torch.from_numpy(np.ascontiguousarray(a)).to(self.device)
                     for a in (rows.x, rows.y, rows.available, rows.margin))

    def _step(self, net: torch.nn.Module, opt: torch.optim.Optimizer, tensors: tuple[torch.Tensor, ...],
              idx: torch.Tensor, amp: bool) -> float:
        """One Adam step on rows ``idx``: Huber (δ 1) between the network's differences z_a − z_0 and the teacher's
        scaled benefits where available, each row weighed by its nearness to the teacher's margin; a hinge keeps
        unavailable actions :data:`UNAVAILABLE_GAP` below doing nothing. Returns the fit's loss."""
        x, y, available, margin = (t[idx] for t in tensors)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=amp):
            z = net(x).float()
        b = z[:, 1:] - z[:, :1]
        ok = available[:, 1:]
        target = y[:, 1:]
        per = F.smooth_l1_loss(b, target, beta=1.0, reduction="none")  # target 0 where unavailable: weight 0 there
        w = (1.0 + self.cfg.margin_weight * torch.exp(-(target - margin[:, None]).abs() / MARGIN_WIDTH)) * ok
        fit = (per * w).sum() / w.sum().clamp_min(1e-12)
        hinge = torch.relu(b + UNAVAILABLE_GAP)[~ok]
        loss = fit + UNAVAILABLE_WEIGHT * hinge.mean() if hinge.numel() else fit
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return float(fit.detach())

    def fit(self, rows: Rows, epochs: int, writer: Any) -> None:
        """``epochs`` passes over ``rows`` in shuffled batches of ``batch_size``, the learning rate warmed up over
        ``fit_warmup`` of the steps, then on a cosine from ``lr`` to 0 (:func:`warmup_cosine`; a fresh Adam each fit:
        the rows have changed)."""
        cfg = self.cfg
        tensors = self._tensors(rows)
        per_epoch = max(1, len(rows) // cfg.batch_size)
        opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr)
        steps = epochs * per_epoch
        warmup = int(cfg.fit_warmup * steps)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: warmup_cosine(k, steps, warmup))
        gen = torch.Generator().manual_seed(cfg.seed + self.steps)
        self.net.train()
        for epoch in range(epochs):
            if self.bar is not None:
                self.bar.stage(f"fit pass {epoch + 1}/{epochs}")
            perm = torch.randperm(len(rows), generator=gen).to(self.device)
            total = 0.0
            for i in range(per_epoch):
                total += self._step(self.net, opt, tensors, perm[i * cfg.batch_size:(i + 1) * cfg.batch_size],
                                    self.amp)
                sched.step()
                self.steps += 1
            writer.add_scalar("train/loss", total / per_epoch, self.steps)
            if self.bar is not None:
                self.bar.advance(len(rows) / FIT_ROWS_PER_UNIT)
        self.net.eval()
        if self.bar is not None:
            self.bar.stage("evaluate")

    # evaluation, state ----------------------------------------------------------------------------------------
    def evaluate(self) -> float:
        res = evaluate_policy(BridgePolicy(self.net.eval(), self.device, distilled=True), self.fleet_cfg,
                              self.cfg.eval_episodes, self.cfg.eval_seed, self.agent)
        return res.mean_return

    def record_evaluation(self, writer: Any) -> None:
        self.last_eval = self.evaluate()
        if self.bar is not None:
            self.bar.advance(EVALUATION_WEIGHT)
        if self.best_eval is None or self.last_eval > self.best_eval:
            self.best_eval = self.last_eval
        if self.episodes_to_target is None and self.last_eval >= self.target_return:
            self.episodes_to_target, self.seconds_to_target = self.episodes_done, self.elapsed()
        writer.add_scalar("eval/return", self.last_eval, self.episodes_done)
        writer.add_scalar("eval/target_return", self.target_return, self.episodes_done)
        self.metrics.eval(self.episodes_done, self.elapsed(), self.last_eval, self.target_return)
        if self.on_eval is not None:
            self.save_checkpoint()
            self.on_eval(self.episodes_done, self.elapsed(), self.last_eval)

    def run(self) -> dict[str, Any]:
        with command_bar(self.work(), "train", "step", self.progress) as self.bar:
            return self._run()

    def work(self) -> float:
        """The run's work in the bar's units: each level's labels in each round, the fits' passes over their rows
        (a DAgger round adds its rows to the last), the evaluations (the target's and one after each fit)."""
        cfg, f = self.cfg, self.fleet_cfg
        levels = len(cfg.teacher_levels)
        round_rows = self.paths * levels * f.horizon_years * f.n_bridges
        passes = cfg.fit_epochs * min(round_rows, cfg.teacher_rows_kept) + sum(
            cfg.refit_epochs * min((r + 2) * round_rows, cfg.teacher_rows_kept) for r in range(cfg.dagger_rounds))
        return (levels * (SEARCH_LABELS_WEIGHT + cfg.dagger_rounds * LABELS_WEIGHT) + passes / FIT_ROWS_PER_UNIT
                + (cfg.dagger_rounds + 2) * EVALUATION_WEIGHT)

    def _run(self) -> dict[str, Any]:
        cfg = self.cfg
        self.t0 = time.perf_counter()
        if self.bar is not None:
            self.bar.stage("the rules of thumb (the target)")
        best = best_heuristic(evaluate_heuristics(self.fleet_cfg, episodes=cfg.eval_episodes, seed=cfg.eval_seed))
        self.target_return, self.target_policy = best.mean_return, best.policy
        if self.bar is not None:
            self.bar.advance(EVALUATION_WEIGHT)
        writer = tensorboard(self.run_dir, self.purge_step)
        self.metrics = Metrics(self.run_dir / "metrics.csv")
        rows = self.collect(student=False)
        if cfg.input_scaling:  # on the first round's rows; the DAgger rounds' fits keep it
            self.net.set_input_scale(torch.from_numpy(rows.x))
        self.fit(rows, cfg.fit_epochs, writer)
        self.record_evaluation(writer)
        for _ in range(cfg.dagger_rounds):
            rows = Rows.join([rows, self.collect(student=True)])
            self.fit(rows, cfg.refit_epochs, writer)
            self.record_evaluation(writer)
            if self.bar is not None:
                self.bar.note(f"eval={self.last_eval:.0f}, target={self.target_return:.0f}")
        self.save_checkpoint()
        writer.close()
        self.metrics.close()
        return self.finish()

    def state_dict(self) -> dict[str, Any]:
        """A checkpoint as the SARSA trainer's reads for its policy (the network under ``bridge``/``online``)."""
        return {"bridge": {"online": self.net.state_dict(), "step": self.steps}, "episodes_done": self.episodes_done,
                "updates": self.steps, "best_eval": self.best_eval, "last_eval": self.last_eval,
                "config": self.cfg.to_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        raise ValueError("a run fitted to a teacher is not resumed (it takes minutes): train it again")

    def load_replay_state(self, states: dict[str, dict[str, Any]]) -> None:
        raise ValueError("a run fitted to a teacher has no replay")

    def save_checkpoint(self) -> Path | None:
        """A checkpoint of the network and the run state; None (nothing written) before the first fit, whose
        network is untrained (Ctrl-C then leaves a folder ``train --out`` starts over)."""
        if self.metrics is not None:
            self.metrics.flush()
        if self.steps == 0:
            return None
        return save_rolling(self.run_dir, self.episodes_done, self.state_dict())

    def finish(self) -> dict[str, Any]:
        """final.pt (the network after the last fit: each DAgger round fits on every row so far, and the evaluations
        see only the sized budget of a network fitted at several) and summary.json, with the fields a SARSA run
        writes."""
        return write_final(self, {"bridge": self.net.state_dict()}, str(self.device), self.hardware,
                           teacher=self.cfg.teacher)
