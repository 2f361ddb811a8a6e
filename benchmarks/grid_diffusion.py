"""How the DP's rating grid moves a policy's treatments in time: one bridge under a rule of thumb, the grid's
Markov chain (the hat weights of ``planning/transitions.py``, the exact push of sudden damage of ``planning/dp.py``)
against Monte Carlo of the simulator's model, at two grid steps.

The planner's price search counts each policy's expected spend per year on the 0.05-point grid. A year's drop is
often less than a grid step there (rate 0.04 × factor 0.615 in band 7: 0.025 points a year, half a step), and a
chain on a lattice cannot move a mass by half a step without splitting it: the split adds at least 0.25 steps² of
variance a year, where the Gamma drop has (0.5 × 0.5)² = 0.0625. So the grid spreads a cohort's arrival at a
treatment threshold over more years than the simulator does: the same treatments in all, in a flatter wave.

    python benchmarks/grid_diffusion.py [--start 7.5] [--ysm 10] [--threshold 6] [--action 2] [--paths 200000]
"""

from __future__ import annotations

import argparse

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.planning.dp import _shock_push
from bridgefleet.planning.transitions import deterioration_weights, shock_weights
from bridgefleet.sim import model
from bridgefleet.sim.model import RATING_GAIN

RATE = 0.04  # rating points a year: the middle of the default model's RATE_RANGE


def chain(cfg: FleetConfig, h: float, start: float, ysm0: float, threshold: float, action: int,
          years: int) -> tuple[np.ndarray, np.ndarray]:
    """Expected treatments and P(poor at the year's end) by year, float64 (years,) each, on the grid of step h."""
    g_n = round(9.0 / h) + 1
    x = np.arange(g_n) * h
    factors = np.asarray(cfg.rating_rate_factors)[model.factor_index(x)]
    shock = shock_weights(cfg.shock_probability, cfg.shock_mean_drop, h)
    top, up = round(cfg.new_structure_rating / h), round(float(RATING_GAIN[action]) / h)
    treat = x < threshold - 1e-9
    dist = {float(ysm0): np.zeros(g_n)}
    dist[float(ysm0)][round(start / h)] = 1.0
    treated, poor = np.zeros(years), np.zeros(years)
    for t in range(years):
        after: dict[float, np.ndarray] = {}
        for y, d in dist.items():
            treated[t] += d[treat].sum()
            moved = np.zeros(g_n)
            j = np.nonzero(treat & (d > 0))[0]
            np.add.at(moved, np.maximum(np.minimum(j + up, top), j), d[j])
            for y_after, mass in ((y, np.where(treat, 0.0, d)), (0.0, moved)):
                if mass.sum() == 0:
                    continue
                w = deterioration_weights(RATE * factors * (1 + cfg.ysm_acceleration * y_after),
                                          cfg.deterioration_cv, h)
                out = np.zeros(g_n)
                for k in range(w.shape[1]):
                    np.add.at(out, np.maximum(np.arange(g_n) - k, 0), mass * w[:, k])
                shocked = np.empty(g_n)
                _shock_push(out, shock, shocked)
                after[y_after + 1] = after.get(y_after + 1, 0.0) + shocked
        dist = after
        at5 = round(5.0 / h)
        poor[t] = sum(d[:at5].sum() + 0.5 * d[at5] for d in dist.values())  # the hat at 5.0 is half below it
    return treated, poor


def monte_carlo(cfg: FleetConfig, start: float, ysm0: float, threshold: float, action: int, years: int,
                paths: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The same by the simulator's own year (:func:`bridgefleet.sim.model.maintain_and_deteriorate`, its noise and
    sudden damage), ``paths`` copies of the bridge as one fleet."""
    rng = np.random.default_rng(seed)
    state = model.FleetState(*(np.full((1, paths), v, dtype=np.float32) for v in (start, 0.0, ysm0, RATE)))
    treated, poor = np.zeros(years), np.zeros(years)
    for t in range(years):
        actions = np.where(state.condition < threshold, action, 0).astype(np.int64)
        treated[t] = (actions > 0).mean()
        model.maintain_and_deteriorate(state, actions, model.standard_gamma_noise(rng, cfg.deterioration_cv,
                                                                                  (1, paths)),
                                       cfg, model.draw_shocks(rng, cfg, (1, paths)))
        poor[t] = (state.condition < model.POOR_BELOW).mean()
    return treated, poor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--start", type=float, default=7.5, help="rating at year 0")
    ap.add_argument("--ysm", type=float, default=10.0, help="years since maintenance at year 0")
    ap.add_argument("--threshold", type=float, default=6.0, help="treat when the rating is below it")
    ap.add_argument("--action", type=int, default=2, choices=(1, 2, 3), help="the treatment (rating gain 1, 2, 4)")
    ap.add_argument("--paths", type=int, default=200_000, help="Monte Carlo paths")
    ap.add_argument("--steps", default="0.05,0.01", help="grid steps, rating points")
    args = ap.parse_args()
    cfg = FleetConfig()
    years = cfg.horizon_years
    rows = {"Monte Carlo": monte_carlo(cfg, args.start, args.ysm, args.threshold, args.action, years, args.paths)}
    for h in (float(s) for s in args.steps.split(",")):
        rows[f"grid {h:g}"] = chain(cfg, h, args.start, args.ysm, args.threshold, args.action, years)
    print(f"one bridge, rating {args.start:g} at year 0, {args.ysm:g} years since maintenance, rate {RATE} a year, "
          f"action {args.action} below {args.threshold:g} (the default fleet model)")
    print("| year | " + " | ".join(f"{k}: treated / poor" for k in rows) + " |")
    print("|---:|" + "---|" * len(rows))
    for t in range(years):
        print(f"| {t + 1} | " + " | ".join(f"{tr[t]:.3f} / {po[t]:.3f}" for tr, po in rows.values()) + " |")
    mc = rows["Monte Carlo"][0]
    for k, (tr, _) in rows.items():
        if k != "Monte Carlo":
            print(f"{k}: treatments in 30 years {tr.sum():.3f} (Monte Carlo {mc.sum():.3f}); largest yearly "
                  f"difference {np.abs(tr - mc).max():.3f} (year {int(np.abs(tr - mc).argmax()) + 1}); "
                  f"peak year {int(tr.argmax()) + 1} with {tr.max():.3f} (Monte Carlo {int(mc.argmax()) + 1}, "
                  f"{mc.max():.3f})")


if __name__ == "__main__":
    main()
