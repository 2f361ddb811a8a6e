"""Does the per-bridge agent learn the same on any fleet with one preset? Reward scales compared across fleets.

For each fleet and each ``reward_scale`` (a number, or ``auto``: 1 / the standard deviation of a bridge's yearly
reward when nothing is done, measured on the run's first training fleets) the ``--preset`` (default: ``default``,
the network fitted to the lagrangian planner, which has no reward scale; ``sarsa``: the network learned by SARSA,
the ``default`` preset until 2026-12-06) is trained with no other change (training evaluations on the validation
fleets), then its kept best model, the ``lagrangian`` planner and the bound are evaluated on test fleets nothing was
tuned on (seeds from ``bridgefleet.config.seeds.TEST_SEED``). Printed per run: the best and the final validation
return and how far the final one fell below the best (a collapse when more than 2 %), and on the test fleets the
agent's and the planner's distance to the bound per bridge, in return units and USD a year, the planner's with its
95 % confidence interval and the ratio of the two with its bootstrap interval (:func:`gap_ratio`: the planner's
distance has its own sampling error, which on 20 fleets of the default fleet at the sized budget is about three
times the distance), and how far the agent is below the planner per bridge with its 95 % confidence interval
(paired: both on the same fleets and deterioration draws, :func:`below_planner`), which is defined where the ratio
is not. 100 test fleets by default (``--test-episodes``), as issue 27 measures. ``--split validation``
scores on validation fleets instead (seeds from ``VALIDATION_SEED`` + 500,000, apart from the ones a run's
evaluations keep its best model on): the split to choose a setting on, which ``--set key=value`` changes (e.g.
``greedy_bootstrap=0``). With ``--levels`` every run (trained across budget levels: the preset's
``budget_scale_range`` [0.25, 2], or ``--budget-range``) is scored at each budget level (a multiple of the sized
budget, as ``bridgefleet evaluate --budget-scale``) beside the planner and the bound at that level: one training run
per fleet and seed for every budget (issue 27).

    python benchmarks/learner_scale.py --fleets default,dc-2019 --seeds 0,1,2 --levels 0.5,1,2
    python benchmarks/learner_scale.py --preset sarsa --fleets default,dc-2019 --scales 1,auto --seeds 0
    python benchmarks/learner_scale.py --preset sarsa --fleets default --scales auto --seeds 0 --split validation \
        --set greedy_bootstrap=0 --set greedy_bootstrap=0.5
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml
from scipy import stats

from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.config.fleet import DEFAULT_FLEET_MODEL
from bridgefleet.config.presets import PRESETS, resolve_config
from bridgefleet.config.seeds import TEST_SEED, VALIDATION_SEED
from bridgefleet.evaluation.evaluate import BoundEstimate, EvalResult, bound_gap, evaluate_with_bound
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.planning.planner import PLANNER_STEP
from bridgefleet.runs.load import load_policy
from bridgefleet.stats import ci95
from bridgefleet.training.runner import train


def fleet_config(name: str, mapping: str | None, model: str = DEFAULT_FLEET_MODEL) -> FleetConfig:
    """The fleet model ``model`` (the preset trains on the default one), on inventory ``name`` unless "default"."""
    changes = {} if name == "default" else {"inventory": name, "inventory_mapping": mapping}
    return FleetConfig.named(model, **changes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fleets", default="default,dc-2019", help="comma-separated: default (the fleet model) or "
                    "inventories (bundled name or path)")
    ap.add_argument("--fleet-model", default=DEFAULT_FLEET_MODEL, help="the fleet model runs train and are scored "
                    f"on (default {DEFAULT_FLEET_MODEL}; continuous-2026 for the figures of before 2026-12-07)")
    ap.add_argument("--mapping", default=None, help="inventory mapping for the inventories given (e.g. indiana)")
    ap.add_argument("--scales", default="1,auto", help="comma-separated reward_scale values (numbers or auto)")
    ap.add_argument("--seeds", default="0", help="comma-separated training seeds")
    ap.add_argument("--episodes", type=int, default=None, help="training episodes (default: the preset's)")
    ap.add_argument("--test-episodes", type=int, default=100, help="test fleets for the final comparison (100, as "
                    "issue 27 measures: with 20 the planner's distance to the bound on the default fleet has a 95 %% "
                    "CI of ± 0.41 per bridge at the sized budget, about three times its value)")
    ap.add_argument("--budget-range", default=None, help="lo,hi: every run trains across these budget levels "
                    "(budget_scale_range; default: the preset's, 0.25,2)")
    ap.add_argument("--user-cost-feature", default="on", help="comma-separated off/on: the network also sees the "
                    "bridge's user cost while poor (user_cost_feature)")
    ap.add_argument("--levels", default="1", help="comma-separated budget levels (multiples of the sized budget) the "
                    "agent, the planner and the bound are scored at (default 1)")
    ap.add_argument("--split", choices=("test", "validation"), default="test", help="fleets the runs, the planner and "
                    "the bound are scored on: test (to publish) or validation (to choose a setting on)")
    ap.add_argument("--bound-step", type=float, default=None, help="rating grid step of the bound the distances are "
                    f"measured to (default: the planner's, {PLANNER_STEP:g}); the grid bound's error has no sign and "
                    "shrinks with the step, so where the planner is within it of the bound use 0.01 (on dc-2019 a few "
                    "seconds a level, Indiana about 5 min, 100 fleets of the default fleet about 16 min)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a training option over the "
                    "preset (YAML value); repeat the same key to compare values, one run each")
    ap.add_argument("--preset", default="default", help="training preset (default: default, the network fitted to "
                    "the lagrangian planner, which has no reward_scale: --scales is then not read; sarsa: the network "
                    "learned by SARSA)")
    ap.add_argument("--out", default=None, help="folder for the runs and learner_scale.csv (default: a temp dir)")
    args = ap.parse_args()
    variants = settings(args.set, ap, args.preset)
    taught = PRESETS[args.preset].get("teacher") is not None
    if taught:
        args.scales = "auto"
    first_seed = TEST_SEED if args.split == "test" else VALIDATION_SEED + 500_000
    out = Path(args.out or tempfile.mkdtemp(prefix="learner-scale-"))
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    # Each level as evaluate's budget_scale; 1 is the fleet as configured (as before --levels).
    levels = {lv: (None if lv == 1 else lv) for lv in map(float, args.levels.split(","))}
    head = ("| fleet | reward_scale | seed | scale used | best val | final val | final below best | train s "
            "| budget × sized | agent below bound / bridge | USD / bridge / yr "
            "| planner below bound / bridge | ± 95 % CI | USD / bridge / yr | agent / planner | its 95 % CI "
            "| agent below planner / bridge | ± 95 % CI |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for fleet_name in args.fleets.split(","):
        fc = fleet_config(fleet_name, args.mapping, args.fleet_model)
        resolved = resolve_fleet(fc)[0]
        n_bridges = resolved.n_urban + resolved.n_rural
        at_level = {}  # level → (the bound, the planner's result, its distance to the bound per bridge and in USD)
        for level, budget_scale in levels.items():
            (planner,), bound = evaluate_with_bound(fc, [], args.test_episodes, first_seed, budget_scale=budget_scale,
                                                    bound_step=args.bound_step)
            at_level[level] = (bound, planner, *bound_gap(planner, bound.mean, n_bridges, fc.cost_lambda))
        runs = ((s, u, v) for s in args.scales.split(",") for u in args.user_cost_feature.split(",") for v in variants)
        for scale, ucf, variant in runs:
            for seed in map(int, args.seeds.split(",")):
                over = {**variant, "seed": seed, "reward_scale": scale if scale == "auto" else float(scale),
                        "user_cost_feature": ucf == "on",
                        "inventory": fc.inventory, "inventory_mapping": fc.inventory_mapping,
                        "fleet": {"model": args.fleet_model}}
                if args.episodes:
                    over["episodes"] = args.episodes
                if args.budget_range:
                    over["budget_scale_range"] = [float(x) for x in args.budget_range.split(",")]
                if taught:  # no reward, no scale
                    del over["reward_scale"]
                cfg = resolve_config(args.preset, None, over)
                t0 = time.perf_counter()
                tag = "".join(f"-{k}{v}" for k, v in variant.items())
                name = f"{Path(fleet_name).stem}-{scale}-u{ucf}{tag}-s{seed}"
                run, summary = train(cfg, out / name, progress=False)
                secs = time.perf_counter() - t0
                _, policy = load_policy(run, "cpu")
                best, final = summary["best_eval_return"], summary["final_eval_return"]
                drop = (best - final) / max(abs(best), 1e-9)
                used = float("nan") if taught else summary.get("reward_scale", cfg.reward_scale)
                for level, budget_scale in levels.items():
                    (agent,), _ = evaluate_with_bound(fc, [], args.test_episodes, first_seed, extra={"agent": policy},
                                                      planner=False, budget_scale=budget_scale)
                    b, planner, p_units, p_usd = at_level[level]
                    a_units, a_usd = bound_gap(agent, b.mean, n_bridges, fc.cost_lambda)
                    below, half = below_planner(planner, agent, n_bridges)
                    p_half, ratio, (r_lo, r_hi) = gap_ratio(b, planner, agent, n_bridges)
                    setting = ", ".join([f"{scale}, user cost {ucf}", *(f"{k} {v}" for k, v in variant.items())])
                    row = [fleet_name, setting, seed, f"{used:.4g}", f"{best:.2f}",
                           f"{final:.2f}", f"{drop:.1%}", f"{secs:.0f}", f"{level:g}", f"{a_units:.3f}",
                           f"{a_usd:,.0f}", f"{p_units:.3f}", f"{p_half:.3f}", f"{p_usd:,.0f}", f"{ratio:.2f}",
                           f"{r_lo:.2f}–{r_hi:.2f}", f"{below:.3f}", f"{half:.3f}"]
                    rows.append(row)
                    print("| " + " | ".join(map(str, row)) + " |", flush=True)
    with (out / "learner_scale.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["fleet", "reward_scale", "seed", "scale_used", "best_val", "final_val", "final_below_best",
                    "train_seconds", "budget_scale", "agent_gap_per_bridge", "agent_gap_usd_bridge_year",
                    "planner_gap_per_bridge", "planner_gap_ci95", "planner_gap_usd_bridge_year",
                    "agent_over_planner", "agent_over_planner_ci95", "agent_below_planner_per_bridge",
                    "agent_below_planner_ci95", "bound_step"])
        step = PLANNER_STEP if args.bound_step is None else args.bound_step
        w.writerows([*row, f"{step:g}"] for row in rows)
    grid = f"the planner's ({PLANNER_STEP:g})" if args.bound_step is None else f"{args.bound_step:g}"
    print(f"\nruns and learner_scale.csv in {out}; {args.split} fleets: {args.test_episodes} from seed {first_seed:,}; "
          f"the bound on a rating grid of step {grid}")


def below_planner(planner: EvalResult, agent: EvalResult, n_bridges: int) -> tuple[float, float]:
    """How far the agent's return is below the planner's, per bridge (return units), and the half-width of its 95 %
    confidence interval (:func:`bridgefleet.planning.bound.ci95` of the per-fleet differences: both policies ran on
    the same seeded fleets and deterioration draws, so the difference is paired)."""
    d = (np.asarray(planner.returns) - np.asarray(agent.returns)) / n_bridges
    return float(d.mean()), ci95(d)


def gap_ratio(bound: BoundEstimate, planner: EvalResult, agent: EvalResult, n_bridges: int,
              resamples: int = 9999) -> tuple[float, float, tuple[float, float]]:
    """The planner's distance to the bound per bridge has its own sampling error (the fleets' and the deterioration
    draws'), which the ratio of the agent's distance to it inherits, most where the planner is near the bound.
    Returns the half-width of the 95 % CI of the planner's distance (paired with each fleet's bound,
    :func:`bridgefleet.planning.bound.ci95`), the ratio (agent's mean distance / planner's; NaN where the planner's
    is not > 0) and its 95 % percentile bootstrap interval over the fleets (both distances resampled together;
    SciPy's ``stats.bootstrap``, Efron & Tibshirani 1993, ch. 13; seeded), NaN where the ratio is."""
    d_planner = (bound.values - planner.returns) / n_bridges
    d_agent = (bound.values - agent.returns) / n_bridges
    half = ci95(d_planner)
    if not d_planner.mean() > 0 or len(d_planner) < 2:
        return half, float("nan"), (float("nan"), float("nan"))
    res = stats.bootstrap((d_agent, d_planner), lambda a, p, axis=-1: a.mean(axis) / p.mean(axis), paired=True,
                          vectorized=True, n_resamples=resamples, confidence_level=0.95, method="percentile",
                          random_state=np.random.default_rng(0))
    ci = res.confidence_interval
    return half, float(d_agent.mean() / d_planner.mean()), (float(ci.low), float(ci.high))


def settings(given: list[str], ap: argparse.ArgumentParser, preset: str = "default") -> list[dict]:
    """``--set`` values as one override dict per run: a key given once holds for every run; a key given n times
    makes n runs (one per value; at most one key may repeat)."""
    values: dict[str, list] = {}
    for item in given:
        key, sep, text = item.partition("=")
        if not sep or not key:
            ap.error(f"--set {item!r}: expected KEY=VALUE")
        values.setdefault(key.strip(), []).append(yaml.safe_load(text))
    swept = [k for k, v in values.items() if len(v) > 1]
    if len(swept) > 1:
        ap.error(f"--set repeats {', '.join(swept)}: only one option may take several values")
    fixed = {k: v[0] for k, v in values.items() if len(v) == 1}
    variants = [{**fixed, swept[0]: v} for v in values[swept[0]]] if swept else [fixed]
    for variant in variants:  # checked before the planner's minutes, not after them
        try:
            resolve_config(preset, None, variant)
        except ConfigError as err:
            ap.error(f"--set: {err}")
    return variants


if __name__ == "__main__":
    main()
