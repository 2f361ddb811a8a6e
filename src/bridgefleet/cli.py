"""The ``bridgefleet`` command line: evaluate, bound, train, plan, report, scenarios, sweep, bench, calibrate,
inventory."""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.config.seeds import TEST_SEED
from bridgefleet.paths import check_writable_file

SEED_HELP = f"first evaluation seed (default {TEST_SEED:,}: the test fleets, which nothing is tuned on)"


def _fleet_config(args: argparse.Namespace) -> FleetConfig:
    """The fleet of --config (a YAML file or a fleet model's name) and --fleet-model (which wins over the
    file's ``model:``), with the inventory options applied."""
    path, name = getattr(args, "config", None), getattr(args, "fleet_model", None)
    if path and name and not os.path.exists(path):
        raise ConfigError(f"--config {path}: no such file (give a fleet model by --fleet-model alone)")
    cfg = FleetConfig.from_yaml(path, name) if path else FleetConfig.named(name) if name else FleetConfig()
    changes = {}
    if getattr(args, "inventory", None):
        changes["inventory"] = args.inventory
    for name in ("max_urban", "county", "owner"):
        if getattr(args, name, None):
            changes[name] = getattr(args, name)
    if getattr(args, "mapping", None):
        changes["inventory_mapping"] = args.mapping
    return cfg.replace(**changes) if changes else cfg


def cmd_evaluate(args: argparse.Namespace) -> int:
    from bridgefleet.evaluation.evaluate import (
        best_heuristic,
        evaluate_with_bound,
        format_fhwa_table,
        format_table,
        to_json,
    )
    from bridgefleet.sim.heuristics import HEURISTICS, get_policy

    if args.json is not None:
        check_writable_file(args.json, "--json")
    extra = {}
    if args.run_dir:
        from bridgefleet.runs.load import load_policy

        given = [f"--{k.replace('_', '-')}" for k in ("config", "fleet_model", "inventory", "max_urban", "mapping",
                                                       "county", "owner") if getattr(args, k, None) is not None]
        if given:
            raise ValueError(f"evaluate {args.run_dir} evaluates on the run's own fleet (its config.yaml); "
                             f"{', '.join(given)} cannot change it (bridgefleet report RUN --inventory PATH "
                             "evaluates a run on another inventory)")
        cfg, policy = load_policy(args.run_dir, args.device)
        fleet = cfg.fleet
        extra = {"trained": policy}
    else:
        fleet = _fleet_config(args)
    if args.policy == "all":
        names = list(HEURISTICS)
    elif args.policy == "lagrangian":
        names = ["do_nothing"]
    else:
        get_policy(args.policy)
        names = ["do_nothing", args.policy] if args.policy != "do_nothing" else ["do_nothing"]
    planner = not args.no_bound
    results, bound = evaluate_with_bound(fleet, names, args.episodes, args.seed, extra, planner=planner,
                                         step=args.grid_step, max_iter=args.bound_iters, progress=not args.quiet,
                                         max_poor_deck_area=args.max_poor_deck_area, budget_scale=args.budget_scale)
    rule = args.max_poor_deck_area if args.max_poor_deck_area is not None else 0.10
    from bridgefleet.inventory.fleet import resolve_fleet

    resolved = resolve_fleet(fleet)[0]
    n_bridges = resolved.n_urban + resolved.n_rural
    print(format_table(results, bound, n_bridges, fleet.cost_lambda))
    print()
    print(format_fhwa_table(results, rule, fleet.cost_lambda))
    model = fleet.model_name()
    print(f"fleet model: {model}")
    if args.run_dir:
        agents = next(r for r in results if r.policy == "trained")
        best = best_heuristic([r for r in results if r.policy in HEURISTICS])
        gain = agents.mean_return - best.mean_return
        print(f"\ntrained agents vs best heuristic ({best.policy}): {gain:+.2f} reward units = USD "
              f"{gain / fleet.cost_lambda:+,.0f} of cost-equivalent (PV), {gain / fleet.cost_lambda / n_bridges:+,.0f} "
              f"per bridge ({agents.mean_return:.2f} vs {best.mean_return:.2f}, {args.episodes} episodes, "
              f"seed {args.seed})")
    if bound is not None:
        print(f"\nupper bound: no budget-feasible policy can expect more than {bound[0]:.2f} on these fleets "
              f"(Lagrangian relaxation of the budgets; `bridgefleet bound` prints its prices)")
    if args.json:
        _write_json(args.json, {"fleet_model": model, **to_json(results, bound, rule, n_bridges, fleet.cost_lambda)})
    return 0


def _write_json(path: str, data: dict) -> None:
    from bridgefleet.outputs import write_json

    write_json(path, data)
    print(f"written: {path}")


def cmd_bound(args: argparse.Namespace) -> int:
    import numpy as np

    from bridgefleet.inventory.fleet import resolve_fleet
    from bridgefleet.planning.bound import ci95
    from bridgefleet.planning.planner import LagrangianPlanner
    from bridgefleet.sim.simulator import FleetSimulator

    if args.episodes < 1:
        raise ValueError(f"--episodes {args.episodes}: must be at least 1")
    if args.json is not None:
        check_writable_file(args.json, "--json")
    cfg, fleet = resolve_fleet(_fleet_config(args))
    sim = FleetSimulator(cfg, args.episodes, fleet)
    sim.reset(None, [args.seed + i for i in range(args.episodes)])
    planner = LagrangianPlanner(step=args.grid_step, max_iter=args.bound_iters, progress=not args.quiet,
                                max_poor_deck_area=args.max_poor_deck_area, certify_step=args.certify_step)
    b = planner.prepare(sim)
    fleets = len(b.values)
    what = "the fixed fleet" if fleets == 1 else f"{fleets} fleets seeded {args.seed} …"
    print(f"upper bound on the expected discounted return (γ {cfg.discount}, {cfg.horizon_years} years), {what}:")
    print(f"  {b.mean:.2f} ± {b.ci95:.2f} (95 % CI over fleets); "
          f"{b.iterations} DP solves, {b.seconds:.1f} s, grid step {planner.mdps.h:g} rating points")
    certified = None if b.certified is None else (float(b.certified.mean()), ci95(b.certified))
    if certified is None:
        print("  (an estimate: the grid's error has no sign; --certify-step gives a bound that holds)")
    else:
        print(f"  certified: {certified[0]:.2f} ± {certified[1]:.2f}, an upper bound of the simulator's model whatever "
              f"the grid (step {args.certify_step:g}; docs/planning.md)")
    if b.rule_met is not None:
        print(f"  over policies that keep ≤ {args.max_poor_deck_area:.0%} of deck area poor in expectation every year"
              + ("" if b.meets_rule else ": the relaxation could not meet that rule on every fleet (no policy found "
                 "does; `bridgefleet scenarios` gives the least budget that can)"))
    disc = cfg.discount ** np.arange(cfg.horizon_years)
    print("\nprices (mean over fleets, per year, undiscounted): reward units per USD 1,000 and per treatment")
    print(f"{'year':>4} {'urban /kUSD':>12} {'urban /treat':>13} {'rural /kUSD':>12} {'rural /treat':>13}")
    pc = b.price_cost.mean(0) / disc * 1e3
    pn = b.price_count.mean(0) / disc
    for t in range(cfg.horizon_years):
        print(f"{t + 1:>4} {pc[0, t]:>12.3f} {pn[0, t]:>13.3f} {pc[1, t]:>12.3f} {pn[1, t]:>13.3f}")
    if args.json:
        _write_json(args.json, {"bound": {"mean": b.mean, "ci95": b.ci95, "per_fleet": b.values.tolist(),
                                          "lp_gap": b.gap, "dp_solves": b.iterations, "seconds": b.seconds,
                                          "certified": None if certified is None else {
                                              "mean": certified[0], "ci95": certified[1],
                                              "per_fleet": b.certified.tolist(), "grid_step": args.certify_step}},
                                "price_usd": b.price_cost.tolist(), "price_treatment": b.price_count.tolist()})
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from bridgefleet.config.training import resolve_config
    from bridgefleet.training.runner import resume, train

    if args.out is not None and not args.out.strip():
        raise ValueError("--out '': give a folder name")
    if args.resume:
        ignored = [f"--{k.replace('_', '-')}" for k in ("preset", "config", "agent", "num_envs", "vector", "seed",
                                                         "inventory", "max_urban", "mapping", "county",
                                                         "owner", "amp", "threads", "out", "checkpoint_replay",
                                                         "fleet_model")
                   if getattr(args, k) not in (None, False)]
        if ignored:
            raise ValueError(f"--resume continues the run with its own config.yaml; {', '.join(ignored)} cannot "
                             "change it (only --episodes and --device can)")
        run_dir, summary = resume(args.resume, progress=not args.quiet, episodes=args.episodes,
                                  reprobe=args.reprobe, device=args.device)
    else:
        amp = {"auto": "auto", "on": True, "off": False, None: None}[args.amp]
        threads = args.threads if args.threads in (None, "auto") else _whole(args.threads, "--threads")
        overrides = {"episodes": args.episodes, "num_envs": args.num_envs, "vector": args.vector,
                     "device": args.device, "seed": args.seed, "inventory": args.inventory,
                     "max_urban": args.max_urban, "county": args.county, "owner": args.owner,
                     "inventory_mapping": args.mapping, "amp": amp, "threads": threads, "agent": args.agent,
                     "checkpoint_replay": True if args.checkpoint_replay else None,
                     "fleet": {"model": args.fleet_model} if args.fleet_model else None}
        cfg = resolve_config(args.preset, args.config, overrides)
        run_dir, summary = train(cfg, args.out, progress=not args.quiet, reprobe=args.reprobe)
    print(f"run directory: {run_dir}")
    hw = summary["hardware"]
    print(f"  precision            {hw['amp']} ({hw['amp_reason']})")
    print(f"  threads              {hw['threads']} ({hw['threads_reason']})")
    for key in ("episodes", "wall_seconds", "seconds_per_episode", "final_eval_return", "target_return",
                "target_policy", "episodes_to_target", "seconds_to_target", "device"):
        value = summary[key]
        print(f"  {key:<20} {value:.4g}" if isinstance(value, float) else f"  {key:<20} {value}")
    return 0


def _whole(text: str, option: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{option} {text!r}: must be a whole number or auto") from None


def cmd_plan(args: argparse.Namespace) -> int:
    from bridgefleet.evaluation.work_plan import make_plan

    fleet = None
    if args.run_dir is None:
        fleet = _fleet_config(args)
    else:
        given = [f"--{k.replace('_', '-')}" for k in ("config", "fleet_model", "mapping", "county", "owner")
                 if getattr(args, k, None) is not None]
        if given:
            raise ValueError(f"plan {args.run_dir} plans on the run's own fleet; {', '.join(given)} cannot change it "
                             "(--inventory can)")
    make_plan(args.run_dir, args.out, years=args.years, inventory=args.inventory, samples=args.samples,
              seed=args.seed, device=args.device, max_urban=args.max_urban, policy=args.policy, fleet=fleet,
              budget_scale=args.budget_scale, budget_usd=args.budget_usd, max_poor=args.max_poor_deck_area)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from bridgefleet.report import build_report

    out = build_report(args.run_dir, args.out, inventory=args.inventory, episodes=args.episodes, seed=args.seed,
                       samples=args.samples, bound=not args.no_bound, progress=not args.quiet, table=print,
                       max_urban=args.max_urban, scenarios=args.scenarios, plan_policy=args.policy)
    print(f"report: {out}")
    return 0


def _numbers(text: str | None, option: str) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{option} {text!r}: give numbers separated by commas, e.g. 0.5,1,1.5") from None


def cmd_scenarios(args: argparse.Namespace) -> int:
    from pathlib import Path

    from bridgefleet.evaluation.scenarios import run_scenarios, write_scenarios

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"--out {out}: not a folder")
    sc = run_scenarios(_fleet_config(args), _numbers(args.budgets, "--budgets"),
                       _numbers(args.budgets_usd, "--budgets-usd"), rule=args.rule, years=args.years,
                       episodes=args.episodes, seed=args.seed, bisect=args.bisect, progress=not args.quiet,
                       ray=args.ray_address or ("local" if args.ray else None), certify_step=args.certify_step)
    print(write_scenarios(sc, out))
    print(f"written: {out / 'scenarios.csv'}, {out / 'scenarios.md'}, {out / 'scenarios.png'}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from bridgefleet.sweep import run_sweep

    out = args.resume or args.out
    rows = run_sweep(args.space, out, ray_address=args.ray_address, samples=args.samples, seeds=args.seeds,
                     asha=not args.no_asha, resume=bool(args.resume))
    with open(os.path.join(out, "sweep.md"), encoding="utf-8") as f:
        print(f.read())
    print(f"{len(rows)} trial(s); written: {os.path.join(out, 'sweep.csv')}, {os.path.join(out, 'sweep.md')}")
    return 0


def cmd_inventory(args: argparse.Namespace) -> int:
    from bridgefleet.inventory.load import InventoryError, load_inventory, summarize

    inv = load_inventory(args.path, mapping=args.mapping)
    if args.county or args.owner:
        inv = inv.filter(county=args.county, owner=args.owner)
    if args.max_urban is not None:
        split = inv.to_fleet(args.max_urban)[:2]  # a bad --max-urban errors before any output
    else:
        try:  # the split train needs, checked here too so an accepted inventory does not fail there
            split = inv.to_fleet(None)[:2]
        except InventoryError as exc:
            print(summarize(inv))
            print(f"note: train refuses this inventory as it stands: {str(exc).split(': ', 1)[-1]}")
            return 0
    print(summarize(inv))
    if args.max_urban is not None:
        n_u, n_r = split
        print(f"fleet with --max-urban {args.max_urban}: {n_u} bridges under per-bridge control (urban agent), "
              f"{n_r} under the strategy-level (rural) agent")
        if args.max_urban > n_u:
            print(f"note: --max-urban {args.max_urban} exceeds the {n_u} urban bridges; all are kept")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from bridgefleet.calibration.fit import check_table, fit_pairs, format_table
    from bridgefleet.calibration.histories import HistoryMapping, read_history

    pairs = read_history(args.history, HistoryMapping.load(args.mapping))
    if args.gap is not None:
        keep = pairs.years == args.gap
        if not keep.any():
            raise ConfigError(f"{args.history}: no do-nothing pair {args.gap} years apart (--gap)")
        pairs = pairs.select(keep)
    fit = fit_pairs(pairs)
    fitted = FleetConfig().replace(**fit.fields())
    print(f"{args.history}: {len(pairs.rating0):,} do-nothing pairs of {pairs.n_bridges:,} bridges")
    print(format_table(check_table(pairs, {"default": FleetConfig(), "fit": fitted})))
    if args.out:
        import yaml

        from bridgefleet.outputs import write_text

        head = (f"# Deterioration fitted by `bridgefleet calibrate {args.history}` to {len(pairs.rating0):,} "
                "do-nothing pairs\n# (docs/fleet-model.md); use with --config on train, evaluate, bound, plan.\n")
        write_text(args.out, head + yaml.safe_dump({"model": "default", **fit.fields()}, sort_keys=False,
                                                   default_flow_style=None, allow_unicode=True))
        print(f"wrote {args.out}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from bridgefleet.bench.measure import run_from_args

    run_from_args(args)
    return 0


class _Defaults(argparse.ArgumentDefaultsHelpFormatter):
    """--help shows each option's default, where it has one worth showing."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default is None or action.default is False or action.default == argparse.SUPPRESS \
                or "(default" in text:
            return text
        return super()._get_help_string(action)


def _check_seed(args: argparse.Namespace) -> None:
    if getattr(args, "seed", None) is not None and args.seed < 0:
        raise ValueError(f"--seed {args.seed}: must be ≥ 0")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bridgefleet", description=(
        "Train deep-RL maintenance policies for a bridge fleet, compare them with today's rules of thumb, "
        "and write a multi-year maintenance plan."))
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("evaluate", help="evaluate heuristic policies, or a trained run against them",
                       formatter_class=_Defaults)
    e.add_argument("run_dir", nargs="?", help="a training run directory (omit to evaluate heuristics only)")
    e.add_argument("--policy", default="all", help="heuristic name, 'lagrangian' (the planner), or 'all' (default)")
    _evaluation_fleet_options(e, "evaluation episodes (default 100)")
    e.add_argument("--device", default="auto", help="cpu, cuda or auto")
    e.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    e.add_argument("--no-bound", action="store_true", help="skip the lagrangian planner and the upper bound")
    e.add_argument("--budget-scale", type=float, help="every policy (and the bound) at this multiple of the sized "
                   "annual budget (default 1; a run trained with budget_scale_range decides at any level)")
    _bound_options(e)
    e.set_defaults(func=cmd_evaluate)

    bd = sub.add_parser("bound", help="upper bound on what any budget-feasible policy can reach, with its prices",
                        formatter_class=_Defaults)
    _evaluation_fleet_options(bd, "evaluation fleets")
    bd.add_argument("--json", metavar="FILE", help="also write the bound and prices as JSON")
    _bound_options(bd)
    bd.set_defaults(func=cmd_bound)

    d = _preset_defaults()
    t = sub.add_parser("train", help="train a maintenance policy (default: the per-bridge agent)",
                       description="Train a maintenance policy. Options left out take the preset's value "
                       "(shown as 'default' for the default preset).")
    t.add_argument("--config", help="training config YAML (fleet options under 'fleet:')")
    t.add_argument("--preset", help="baseline, compile-amp, double, nstep, per, dueling, vectorized, all, fleet, "
                   "default (default: the config file's preset, else default)")
    t.add_argument("--agent", choices=["fleet", "bridge"],
                   help="fleet: the plan's urban and rural agents; bridge: one Q-network for every bridge "
                   f"(default: {d['agent']})")
    t.add_argument("--episodes", type=int, help=f"training episodes (default: {d['episodes']}; with --resume: "
                   "a new total, the ε and β schedules continue as they were)")
    t.add_argument("--num-envs", type=int, help=f"fleets simulated in parallel (default: {d['num_envs']})")
    t.add_argument("--vector", choices=["native", "sync", "async"],
                   help=f"vector env implementation (default: {d['vector']})")
    _fleet_model_option(t)
    t.add_argument("--inventory", help="bridge inventory file or bundled name (dc-2019)")
    t.add_argument("--max-urban", type=int, help="urban bridges under per-bridge control (inventories)")
    t.add_argument("--mapping", help="column-mapping YAML for a non-NBI inventory")
    t.add_argument("--county", help="keep one county (NBI item 3)")
    t.add_argument("--owner", help="keep one owner (NBI item 22)")
    t.add_argument("--device", help=f"cpu, cuda or auto (default: {d['device']})")
    t.add_argument("--seed", type=int, help=f"training seed (default: {d['seed']})")
    t.add_argument("--amp", choices=["auto", "on", "off"],
                   help="mixed precision: auto (bf16 on a CPU with native bf16, fp16 on CUDA, each only where a probe "
                   "finds it faster than fp32), on, off "
                   f"(default: {d['amp']})")
    t.add_argument("--threads", help="torch threads: a number, or auto (probed on the allowed cores) "
                   f"(default: {d['threads']})")
    t.add_argument("--reprobe", action="store_true", help="probe precision and threads again (not the cache)")
    t.add_argument("--checkpoint-replay", action="store_true",
                   help="also save the replay buffers with each checkpoint, so a resumed run equals the "
                   "uninterrupted one (costs their size on disk)")
    t.add_argument("--out", help="run directory (default runs/<preset>-<time>)")
    t.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its latest checkpoint")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.set_defaults(func=cmd_train)

    pl = sub.add_parser("plan", help="write a multi-year maintenance plan (a trained run's, or the planner's)",
                        formatter_class=_Defaults, description="Write a bridge × year maintenance plan with its "
                        "costs, a yearly summary (share of deck area and of bridges good and poor, spend against "
                        "the budget) and plan.png: a trained run's agents, or with --policy lagrangian the planner's "
                        "plan (no training run) at the budget you choose.")
    pl.add_argument("run_dir", nargs="?", help="training run directory (omit with --policy)")
    pl.add_argument("--policy", help="lagrangian (the planner) or a heuristic's name, instead of the trained agents")
    pl.add_argument("--config", help="fleet config YAML (without a run)")
    _fleet_model_option(pl)
    pl.add_argument("--mapping", help="column-mapping YAML for a non-NBI inventory (without a run)")
    pl.add_argument("--county", help="keep one county (NBI item 3; without a run)")
    pl.add_argument("--owner", help="keep one owner (NBI item 22; without a run)")
    budget = pl.add_mutually_exclusive_group()
    budget.add_argument("--budget-scale", type=float, help="with --policy: the annual budget as a multiple of the "
                        "sized budget (default 1)")
    budget.add_argument("--budget-usd", type=float, help="with --policy: the annual budget, USD a year (split "
                        "between the agencies as the sized one)")
    pl.add_argument("--out", help="plan CSV path, plan.png beside it (default: RUN_DIR/plan.csv, or plan.csv)")
    _rule_option(pl)
    pl.add_argument("--years", type=int, default=30, help="planning horizon, years")
    pl.add_argument("--inventory", help="plan for this inventory instead of the run's fleet")
    pl.add_argument("--max-urban", type=int, help="urban bridges under per-bridge control (default: as trained)")
    pl.add_argument("--samples", type=int, default=32, help="deterioration samples averaged")
    pl.add_argument("--seed", type=int, default=0, help="seed of the fleet and deterioration samples")
    pl.add_argument("--device", default="auto", help="cpu, cuda or auto")
    pl.set_defaults(func=cmd_plan)

    r = sub.add_parser("report", help="one self-contained HTML page: fleet, policies compared, plan, training",
                       formatter_class=_Defaults)
    r.add_argument("run_dir", help="a finished training run directory (with final.pt)")
    r.add_argument("--out", help="HTML file to write (default: RUN_DIR/report.html)")
    r.add_argument("--inventory", help="report on this inventory instead of the run's fleet")
    r.add_argument("--max-urban", type=int, help="urban bridges under per-bridge control (plan agents; default: as "
                   "trained)")
    r.add_argument("--episodes", type=int, default=100, help="evaluation fleets for the comparison")
    r.add_argument("--seed", type=int, default=TEST_SEED, help=SEED_HELP)
    r.add_argument("--samples", type=int, default=16, help="deterioration samples averaged in the plan")
    r.add_argument("--no-bound", action="store_true", help="skip the planner and the upper bound (faster)")
    r.add_argument("--policy", help="the plan section shows this policy's plan: lagrangian (the planner) or a "
                   "heuristic's name (default: the trained agents')")
    r.add_argument("--scenarios", metavar="DIR", help="a `bridgefleet scenarios` folder: adds 'What each budget buys'")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.set_defaults(func=cmd_report)

    scn = sub.add_parser("scenarios", help="what each budget buys on FHWA's measures, and the least budget for "
                         "the 10 %% poor rule", formatter_class=_Defaults, description="The lagrangian planner at "
                         "several annual budgets: share of deck area good and poor by year (95 % CIs), agency and "
                         "user cost in USD, breaches of the poor deck-area rule, the upper bound; the certified least "
                         "budget (below it no policy meets the rule in expectation) and the planner's least budget.")
    scn.add_argument("--budgets", help="budget levels, multiples of the sized budget (default 0.25,0.5,…,2)")
    scn.add_argument("--budgets-usd", help="budget levels, USD a year, comma-separated")
    scn.add_argument("--rule", type=float, default=0.10, help="most share of deck area poor in any year "
                     "(23 CFR 490.411)")
    scn.add_argument("--years", type=int, default=30, help="planning horizon, years")
    scn.add_argument("--episodes", type=int, default=16, help="deterioration samples per level")
    scn.add_argument("--seed", type=int, default=TEST_SEED,
                     help=f"first seed (and the fleet seed of a fleet model; default {TEST_SEED:,}: the test fleets)")
    scn.add_argument("--bisect", type=int, default=3, help="bisection steps for the planner's least budget")
    scn.add_argument("--certify-step", type=float, default=0.02, help="rating grid of the certified least budget "
                     "(it holds for the simulator's model whatever the step; finer is tighter and slower)")
    scn.add_argument("--config", help="fleet config YAML")
    _fleet_model_option(scn)
    scn.add_argument("--inventory", help="bridge inventory file or bundled name (dc-2019)")
    scn.add_argument("--mapping", help="column-mapping YAML for a non-NBI inventory")
    scn.add_argument("--county", help="keep one county (NBI item 3)")
    scn.add_argument("--owner", help="keep one owner (NBI item 22)")
    scn.add_argument("--ray-address", help="run the levels as Ray tasks on the cluster at host:port")
    scn.add_argument("--ray", action="store_true", help="run the levels as Ray tasks on this machine's cores")
    scn.add_argument("--out", default="scenarios", help="output folder")
    scn.add_argument("--quiet", action="store_true", help="no progress bar")
    scn.set_defaults(func=cmd_scenarios)

    sw = sub.add_parser("sweep", help="search TrainConfig fields on Ray Tune (pip install 'bridgefleet[ray]')",
                        formatter_class=_Defaults)
    sw.add_argument("space", nargs="?", help="search space YAML (docs/sweep.md)")
    sw.add_argument("--ray-address", help="join the Ray cluster at host:port (default: start Ray on this machine)")
    sw.add_argument("--samples", type=int, default=1, help="samples of the random choices (grids: all values)")
    sw.add_argument("--seeds", type=int, default=1, help="training seeds per configuration")
    sw.add_argument("--no-asha", action="store_true", help="run every trial to the end (no early stopping)")
    sw.add_argument("--out", default="sweep-out", help="sweep folder")
    sw.add_argument("--resume", metavar="DIR", help="resume the sweep in DIR (finished trials are kept)")
    sw.set_defaults(func=cmd_sweep)

    b = sub.add_parser("bench", help="measure what each acceleration buys: the plan's Benchmark Targets table")
    from bridgefleet.bench.measure import add_arguments

    add_arguments(b)
    b.set_defaults(func=cmd_bench)

    c = sub.add_parser("calibrate", help="fit the deterioration to an agency's inspection histories",
                       description="Fit the fleet model's deterioration (a rate per rating point, years since "
                       "maintenance, noise, sudden damage) to inspection histories by maximum likelihood; print "
                       "observed vs modelled; write a fleet-model YAML for --config (docs/fleet-model.md).")
    c.add_argument("history", help="CSV, one row per inspection: bridge, year, rating 0-9 (or an index with "
                   "--mapping); optional year built and work flag")
    c.add_argument("--mapping", help="column/scale mapping YAML, or a bundled name (ontario-bci)")
    c.add_argument("--gap", type=int, help="only pairs this many years apart (default: every gap)")
    c.add_argument("--out", help="write the fitted fleet model here (YAML)")
    c.set_defaults(func=cmd_calibrate)

    i = sub.add_parser("inventory", help="summarize a bridge inventory (NBI file or mapped CSV)")
    i.add_argument("path", help="inventory file, or a bundled name (dc-2019)")
    i.add_argument("--mapping", help="column-mapping YAML for non-NBI tables")
    i.add_argument("--county", help="keep one county (NBI item 3)")
    i.add_argument("--owner", help="keep one owner (NBI item 22)")
    i.add_argument("--max-urban", type=int, help="also show the fleet split for this many per-bridge urban bridges")
    i.set_defaults(func=cmd_inventory)
    return p


def _preset_defaults() -> dict:
    """The default preset's values, for --help."""
    from bridgefleet.config.training import resolve_config

    cfg = resolve_config("default")
    return {k: ("auto" if v == "auto" else v) for k, v in cfg.to_dict().items()}


def _evaluation_fleet_options(p: argparse.ArgumentParser, episodes_help: str) -> None:
    """Evaluation fleets: how many, their seeds, and the fleet (config file or inventory)."""
    p.add_argument("--episodes", type=int, default=100, help=episodes_help)
    p.add_argument("--seed", type=int, default=TEST_SEED, help=SEED_HELP)
    p.add_argument("--config", help="fleet config YAML")
    _fleet_model_option(p)
    p.add_argument("--inventory", help="bridge inventory file or bundled name (dc-2019)")
    p.add_argument("--max-urban", type=int, help="urban bridges under per-bridge control (inventories)")
    p.add_argument("--mapping", help="column-mapping YAML for a non-NBI inventory")
    p.add_argument("--county", help="keep one county (NBI item 3)")
    p.add_argument("--owner", help="keep one owner (NBI item 22)")


def _rule_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-poor-deck-area", type=float, metavar="F",
                   help="the planner and the bound also price 'at most F of deck area poor in any year' (0.10: "
                   "FHWA's minimum condition, 23 CFR 490.411); evaluation reports breaches of F (default 0.10)")


def _fleet_model_option(p: argparse.ArgumentParser) -> None:
    from bridgefleet.config import FLEET_MODELS

    p.add_argument("--fleet-model", choices=list(FLEET_MODELS),
                   help="named fleet model; wins over a config file's model: (default: the file's, else default; "
                        "plan-2025 = the model of the plan's published figures, docs/fleet-model.md)")


def _bound_options(p: argparse.ArgumentParser) -> None:
    _rule_option(p)
    p.add_argument("--grid-step", type=float, default=0.05, help="rating grid step of the DP, rating points")
    p.add_argument("--bound-iters", type=int, default=80,
                   help="most DP solves in the search for the prices (on a 0.2-point grid)")
    if p.prog.endswith(" bound"):
        p.add_argument("--certify-step", type=float, metavar="H",
                       help="also the certified bound on a grid of step H (holds for the simulator's model whatever "
                            "H; tighter and slower as H falls: 0.01 is 17× the time of 0.05)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      line: str | None = None) -> str:
    return f"bridgefleet: warning: {message}\n"


def _utf8_streams() -> None:
    """Under a C/POSIX locale without UTF-8 coercion Python's stdout is ASCII, and the tables' ×, –, ≥ (or a
    structure number such as MOST-Ł1) would stop a command: write UTF-8 there instead, as every file is."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "ascii"
        if codecs.lookup(encoding).name == "ascii" and hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    _utf8_streams()
    args = build_parser().parse_args(argv)
    warnings.formatwarning = _one_line_warning  # users see the message, not our source lines
    try:
        _check_seed(args)
        return args.func(args)
    except BrokenPipeError:  # e.g. `bridgefleet inventory … | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ConfigError, ValueError, FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError,
            PermissionError, ConnectionError, ModuleNotFoundError) as exc:
        print(f"bridgefleet {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path the system refuses (not a folder, read-only, …): one line, no traceback
        where = f": {exc.filename}" if exc.filename else ""
        print(f"bridgefleet {args.command}: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        # a newline first: the progress bar's line is not finished
        print(f"\nbridgefleet {args.command}: {str(exc) or 'interrupted'}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())



