"""What each ``bridgefleet`` command does with its parsed arguments (:mod:`bridgefleet.cli.parser` defines them)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from bridgefleet.cli.numbers import numbers
from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.paths import check_writable_file, check_writable_folder


def _fleet_config(args: argparse.Namespace) -> FleetConfig:
    """The fleet of --config (a YAML file or a fleet model's name) and --fleet-model (which wins over the
    file's ``model:``), with the inventory options applied."""
    path, name = getattr(args, "config", None), getattr(args, "fleet_model", None)
    if path and name and not os.path.exists(path):
        raise ConfigError(f"--config {path}: no such file (give a fleet model by --fleet-model alone)")
    if path:
        cfg = FleetConfig.from_yaml(path, name)
    else:
        cfg = FleetConfig.named(name) if name else FleetConfig.default_model()
    changes = {}
    if getattr(args, "inventory", None):
        changes["inventory"] = args.inventory
    for name in ("max_urban", "county", "owner"):
        if getattr(args, name, None):
            changes[name] = getattr(args, name)
    if getattr(args, "mapping", None):
        changes["inventory_mapping"] = args.mapping
    return cfg.replace(**changes) if changes else cfg


def _reads(args: argparse.Namespace) -> list[tuple[str | Path, str]]:
    """(path, what it is) of the files a command reads: the run folder's (``run_dir``, where it has one), its
    --config and the inventory and mapping of its fleet (given or in the config file; a pattern of several files
    names no file); an output must not replace them."""
    from bridgefleet.inventory.fleet import input_files
    from bridgefleet.runs.folder import run_inputs

    reads = _config_read(args) + input_files(_fleet_config(args))
    if getattr(args, "run_dir", None):
        reads += run_inputs(args.run_dir)
    return reads


def _config_read(args: argparse.Namespace) -> list[tuple[str | Path, str]]:
    """--config's file, where a command has one, as :func:`_reads` gives it."""
    config = getattr(args, "config", None)
    return [(config, "the config file")] if config and os.path.isfile(config) else []


def _check_grid_step(args: argparse.Namespace) -> None:
    """--grid-step of ``evaluate`` and ``bound``, where given (None: the planner's default for the fleet).

    Raises:
        ValueError: a step outside (0, 1] rating points, named by its option.
    """
    from bridgefleet.planning.transitions import grid_points

    if args.grid_step is not None:
        grid_points(args.grid_step, "--grid-step")


def cmd_evaluate(args: argparse.Namespace) -> int:
    from bridgefleet.evaluation.evaluate import (
        best_heuristic,
        evaluate_with_bound,
        format_fhwa_table,
        format_table,
        to_json,
    )
    from bridgefleet.sim.heuristics import HEURISTICS, get_policy

    _check_grid_step(args)
    if args.json is not None:
        check_writable_file(args.json, "--json", reads=_reads(args))
    extra = {}
    if args.run_dir:
        from bridgefleet.runs.load import load_policy, warn_untrained_budget

        given = _fleet_options_given(args)
        if given:
            raise ValueError(f"evaluate {args.run_dir} evaluates on the run's own fleet (its config.yaml); "
                             f"{', '.join(given)} cannot change it (bridgefleet report RUN --inventory PATH "
                             "evaluates a run on another inventory)")
        cfg, policy = load_policy(args.run_dir, args.device)
        fleet = cfg.fleet
        extra = {"trained": policy}
        warn_untrained_budget(cfg, args.budget_scale, args.run_dir)
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
    from bridgefleet.inventory.fleet import resolve_fleet, set_budget

    resolved = resolve_fleet(fleet)[0]
    n_bridges = resolved.n_urban + resolved.n_rural
    print(format_table(results, bound, n_bridges, fleet.cost_lambda))
    print()
    print(format_fhwa_table(results, rule, fleet.cost_lambda))
    model = fleet.model_name()
    print(f"fleet model: {model}")
    scale = 1.0 if args.budget_scale is None else args.budget_scale
    urban, rural = set_budget(resolved, args.budget_scale).budgets_usd
    print(f"annual budget: USD {urban + rural:,.0f} (urban {urban:,.0f}, rural {rural:,.0f}), "
          + ("the sized budget" if args.budget_scale is None else f"{scale:g} × the sized budget"))
    if args.run_dir:
        agents = next(r for r in results if r.policy == "trained")
        best = best_heuristic([r for r in results if r.policy in HEURISTICS])
        gain = agents.mean_return - best.mean_return
        print(f"\ntrained agents vs best heuristic ({best.policy}): {gain:+.2f} reward units = USD "
              f"{gain / fleet.cost_lambda:+,.0f} of cost-equivalent (PV), {gain / fleet.cost_lambda / n_bridges:+,.0f} "
              f"per bridge ({agents.mean_return:.2f} vs {best.mean_return:.2f}, {args.episodes} episodes, "
              f"seed {args.seed})")
    if bound is not None and fleet.component_model is not None:
        print(f"\nupper bound (exact on the component model's finite states): no budget-feasible policy can expect "
              f"more than {bound[0]:.2f} on these fleets (Lagrangian relaxation of the budgets, every bridge's DP "
              "exact; `bridgefleet bound` gives the prices of money); a policy above it by more than its 95 % CI "
              "would be a defect")
    elif bound is not None:
        print(f"\nupper bound (grid estimate): no budget-feasible policy can expect much more than {bound[0]:.2f} on "
              "these fleets (Lagrangian relaxation of the budgets on a rating grid, whose error has no sign; "
              "`bridgefleet bound --certify-step 0.02` gives a bound that holds for the simulator's model, and the "
              "prices)")
        for r in results:
            if r.mean_return > bound[0]:
                noise = "within" if r.mean_return - r.ci95 <= bound[0] else "beyond"
                print(f"  {r.policy} scores {r.mean_return:.2f} ± {r.ci95:.2f}, above this estimate: {noise} its "
                      f"95 % CI over {args.episodes} episodes" + ("" if noise == "within" else
                                                                  ", so the grid's error") + "; more episodes or "
                      "--certify-step settle it")
    if args.json:
        _write_json(args.json, {"fleet_model": model, "budget_scale": scale,
                                "annual_budget_usd": {"urban": urban, "rural": rural},
                                **to_json(results, bound, rule, n_bridges, fleet.cost_lambda)})
    return 0


def _fleet_options_given(args: argparse.Namespace, names: tuple[str, ...] = (
        "config", "fleet_model", "inventory", "max_urban", "mapping", "county", "owner")) -> list[str]:
    """The fleet options given on the command line (which a run's own fleet overrides), as flags."""
    return [f"--{k.replace('_', '-')}" for k in names if getattr(args, k, None) is not None]


def _write_json(path: str, data: dict) -> None:
    from bridgefleet.outputs import write_json

    write_json(path, data)
    print(f"written: {path}")


def cmd_bound(args: argparse.Namespace) -> int:
    import numpy as np

    from bridgefleet.evaluation.national import GLOB_CHARS, run_files
    from bridgefleet.evaluation.national import markdown as national_markdown
    from bridgefleet.evaluation.national import to_json as national_json
    from bridgefleet.inventory.fleet import resolve_fleet
    from bridgefleet.planning.planner import LagrangianPlanner
    from bridgefleet.planning.transitions import check_certify_step, grid_points
    from bridgefleet.sim.simulator import FleetSimulator
    from bridgefleet.stats import ci95

    if args.episodes < 1:
        raise ValueError(f"--episodes {args.episodes}: must be at least 1")
    _check_grid_step(args)  # before any file is read
    if args.certify_step is not None:
        grid_points(args.certify_step, "--certify-step")
    if args.json is not None:
        check_writable_file(args.json, "--json", reads=_reads(args))
    if args.inventory and any(c in args.inventory for c in GLOB_CHARS):  # several files: one problem each
        if args.certify_step is not None:
            raise ValueError("--certify-step: the certified bound is for one inventory; with several files "
                             "(--inventory with a pattern) each row gives the grid bound")
        rows = run_files(_fleet_config(args), args.inventory, args.episodes, args.seed, args.max_poor_deck_area,
                         ray=args.ray_address, progress=not args.quiet, step=args.grid_step,
                         max_iter=args.bound_iters)
        rule = ("no poor deck-area rule" if args.max_poor_deck_area is None else
                f"rule: at most {args.max_poor_deck_area:.0%} of deck area poor in expectation every year, priced")
        print(f"each inventory its own problem (its agencies and sized budgets), {args.episodes} sample(s) each "
              f"from seed {args.seed}; {rule}; bound and planner: expected discounted return, reward units; "
              "deck area: FHWA's (NHS where coded; 'bridges' counts all)")
        print(national_markdown(rows))
        if args.json:
            _write_json(args.json, national_json(rows, {"episodes": args.episodes, "seed": args.seed,
                                                        "max_poor_deck_area": args.max_poor_deck_area,
                                                        "bound_units": "expected discounted return, reward units",
                                                        "money_units": "USD a year"}))
        return 0
    cfg, fleet = resolve_fleet(_fleet_config(args))
    if cfg.component_model is not None:
        return _exact_bound(args, cfg, fleet)
    if args.certify_step is not None:
        check_certify_step(cfg, args.certify_step)  # before the price search
    sim = FleetSimulator(cfg, args.episodes, fleet)
    sim.reset(None, [args.seed + i for i in range(args.episodes)])
    on_ray = {}
    if args.ray_address:  # the DP in chunks of bridges as Ray tasks
        from bridgefleet.planning.chunks import RaySolver

        on_ray["solver"] = RaySolver(args.ray_address)
    planner = LagrangianPlanner(step=args.grid_step, max_iter=args.bound_iters, progress=not args.quiet,
                                max_poor_deck_area=args.max_poor_deck_area, certify_step=args.certify_step, **on_ray)
    b = planner.prepare(sim)
    fleets = len(b.values)
    what = "the fixed fleet" if fleets == 1 else f"{fleets} fleets seeded {args.seed} …"
    print(f"best expected discounted return of a budget-feasible policy (γ {cfg.discount}, {cfg.horizon_years} years), "
          f"{what}, estimated on a rating grid:")
    sample = "" if b.sample is None else f" after {b.sample[1]} on a sample of {b.sample[0]:,} bridges a fleet"
    print(f"  {b.mean:.2f} ± {b.ci95:.2f} (95 % CI over fleets); "
          f"{b.iterations} DP solves{sample}, {b.seconds:.1f} s, grid step {planner.mdps.h:g} rating points")
    print(f"  per bridge: {b.mean / sim.n_bridges:.3f} reward units; one reward unit = USD "
          f"{1 / planner.mdps.cost_lambda:,.0f} of cost-equivalent (1/λ)")
    certified = None if b.certified is None else (float(b.certified.mean()), ci95(b.certified))
    if certified is None:
        print("  (an estimate: the grid's error has no sign; --certify-step gives a bound that holds)")
    else:
        print(f"  certified: {certified[0]:.2f} ± {certified[1]:.2f}, an upper bound of the simulator's model whatever "
              f"the grid (step {args.certify_step:g}; docs/planning.md)")
    if b.rule_met is not None:
        print(f"  over policies that keep ≤ {args.max_poor_deck_area:.0%} of deck area poor in expectation every year"
              + ("" if b.meets_rule else f": on {int((~b.rule_met).sum())} of {fleets} fleets no mix of the "
                 "policies found meets that rule, so the figure above is the rule's penalty, not a useful bound (at "
                 "this budget no policy may meet it; `bridgefleet scenarios` gives the least budget that can)"))
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
                                          "sample": None if b.sample is None else {
                                              "bridges": b.sample[0], "dp_solves": b.sample[1]},
                                          "certified": None if certified is None else {
                                              "mean": certified[0], "ci95": certified[1],
                                              "per_fleet": b.certified.tolist(), "grid_step": args.certify_step}},
                                "price_usd": b.price_cost.tolist(), "price_treatment": b.price_count.tolist()})
    return 0


def _exact_bound(args: argparse.Namespace, cfg, fleet) -> int:
    """``bound`` on the component model: the exact Lagrangian bound (no grid, no certificate needed)."""
    import numpy as np

    from bridgefleet.planning.exact_planner import ExactPlanner
    from bridgefleet.sim.simulator import FleetSimulator
    from bridgefleet.stats import ci95

    given = [f"--{k.replace('_', '-')}" for k in ("grid_step", "certify_step") if getattr(args, k, None) is not None]
    if given:
        raise ValueError(f"{' and '.join(given)}: the component model's bound is exact on its finite states (no grid, "
                         "no certificate); leave {}out".format("them " if len(given) > 1 else "it "))
    if getattr(args, "ray_address", None) is not None:
        raise ValueError("--ray-address: the component model's bound runs in this process (one DP over the fleet); "
                         "leave it out")
    sim = FleetSimulator(cfg, args.episodes, fleet)
    sim.reset(None, [args.seed + i for i in range(args.episodes)])
    b = ExactPlanner(max_iter=args.bound_iters, max_poor_deck_area=args.max_poor_deck_area).prepare(sim)
    iters = sum(p.iterations for p in b.parts)
    what = "the fixed fleet" if len(b.values) == 1 else f"{len(b.values)} fleets seeded {args.seed} …"
    print(f"upper bound on the expected discounted return (γ {cfg.discount}, {cfg.horizon_years} years), {what}, "
          f"component model {cfg.component_model}:")
    rule = ("" if args.max_poor_deck_area is None else f" that keeps the expected poor deck area ≤ "
            f"{args.max_poor_deck_area:.0%} every year" + ("" if b.meets_rule else " (no policy found meets it: the "
                                                            "bound then bounds none)"))
    print(f"  {b.mean:.2f} ± {ci95(b.values):.2f} (95 % CI over fleets); {iters} DP solves, {b.seconds:.1f} s; exact "
          f"on the model's finite states: every budget-feasible policy{rule}'s expected return is at most this")
    print(f"  per bridge: {b.mean / sim.n_bridges:.3f} reward units; one reward unit = USD "
          f"{1 / cfg.cost_lambda:,.0f} of cost-equivalent (1/λ)")
    disc = cfg.discount ** np.arange(cfg.horizon_years)
    price = b.parts[0].row_price[:2]  # the first fleet's two agencies (priced alone, the others from it)
    price = np.cumsum(price[:, ::-1], axis=1)[:, ::-1] if cfg.carry_over_budget else price
    print("\nprices of money (the first fleet, per year, undiscounted): reward units per USD 1,000")
    print(f"{'year':>4} {'urban /kUSD':>12} {'rural /kUSD':>12}")
    for t in range(cfg.horizon_years):
        print(f"{t + 1:>4} {price[0, t] / disc[t] * 1e3:>12.3f} {price[1, t] / disc[t] * 1e3:>12.3f}")
    if args.json:
        _write_json(args.json, {"bound": {"mean": b.mean, "ci95": ci95(b.values), "per_fleet": b.values.tolist(),
                                          "dp_solves": iters, "seconds": b.seconds, "exact": True},
                                "component_model": cfg.component_model})
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from bridgefleet.config.presets import resolve_config
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
        if args.out is not None:
            check_writable_folder(args.out, "--out")  # before minutes of training
        run_dir, summary = train(cfg, args.out, progress=not args.quiet, reprobe=args.reprobe,
                                 config_file=args.config)
    print(f"run directory: {run_dir}")
    hw = summary["hardware"]
    print(f"  precision            {hw['amp']} ({hw['amp_reason']})")
    print(f"  threads              {hw['threads']} ({hw['threads_reason']})")
    if summary.get("teacher"):
        print(f"  teacher              {summary['teacher']} (the network fitted to the planner's benefits; an "
              "episode is one fleet it labelled at one budget level)")
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
        given = _fleet_options_given(args, ("config", "fleet_model", "county", "owner"))
        if given:
            raise ValueError(f"plan {args.run_dir} plans on the run's own fleet; {', '.join(given)} cannot change it "
                             "(--inventory can)")
        _mapping_with_inventory(args)
    if args.explain:
        from bridgefleet.evaluation.explain_bridge import explain_plan

        print(explain_plan(args.explain, run_dir=args.run_dir, fleet=fleet, inventory=args.inventory,
                           mapping=args.mapping, years=args.years, seed=args.seed, budget_scale=args.budget_scale,
                           budget_usd=args.budget_usd, max_poor=args.max_poor_deck_area, max_urban=args.max_urban,
                           device=args.device))
        return 0
    make_plan(args.run_dir, args.out, years=args.years, inventory=args.inventory, mapping=args.mapping,
              samples=args.samples, seed=args.seed, device=args.device, max_urban=args.max_urban,
              policy=args.policy, fleet=fleet, budget_scale=args.budget_scale, budget_usd=args.budget_usd,
              max_poor=args.max_poor_deck_area, reads=_config_read(args),  # the run's and the fleet's: make_plan's
              works=args.plan_format == "snbi-works", start_year=args.start_year)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from bridgefleet.report import build_report

    _mapping_with_inventory(args)
    out = build_report(args.run_dir, args.out, inventory=args.inventory, mapping=args.mapping,
                       episodes=args.episodes, seed=args.seed, samples=args.samples, bound=not args.no_bound,
                       progress=not args.quiet, table=print, max_urban=args.max_urban, scenarios=args.scenarios,
                       plan_policy=args.policy)
    print(f"report: {out}")
    return 0


def _mapping_with_inventory(args: argparse.Namespace) -> None:
    """With a run, --mapping reads --inventory's table (the run's own fleet keeps its own mapping).

    Raises:
        ValueError: --mapping without --inventory.
    """
    if args.mapping and not args.inventory:
        raise ValueError(f"--mapping {args.mapping}: reads the table --inventory gives (the run {args.run_dir} keeps "
                         "its own fleet and mapping without it)")


def cmd_scenarios(args: argparse.Namespace) -> int:
    from bridgefleet.evaluation.scenario_tables import SCENARIO_FILES, write_scenarios
    from bridgefleet.evaluation.scenarios import DEFAULT_SCALES, run_scenarios

    scales, usd = numbers(args.budgets, "--budgets"), numbers(args.budgets_usd, "--budgets-usd")  # before any work
    out = check_writable_folder(args.out, "--out")  # before minutes of work
    reads = _reads(args)
    for name in SCENARIO_FILES:  # none of them may replace what the command reads
        if (out / name).is_dir():
            raise IsADirectoryError(f"--out {out}: {out / name} is a folder where scenarios writes its file {name}: "
                                    "move it, or give another --out")
        check_writable_file(out / name, "--out", create=True, reads=reads)
    agent, fleet = None, None
    if args.run_dir:
        from bridgefleet.inventory.fleet import resolve_fleet
        from bridgefleet.runs.load import load_policy, warn_untrained_budget

        given = _fleet_options_given(args)
        if given:
            raise ValueError(f"scenarios {args.run_dir} runs on the run's own fleet; {', '.join(given)} cannot "
                             "change it")
        cfg, agent = load_policy(args.run_dir, "cpu")
        fleet = cfg.fleet
        resolved = resolve_fleet(fleet)[0]
        levels = usd or scales or list(DEFAULT_SCALES)
        for level in sorted({min(levels), max(levels)}):  # the lowest and the highest
            warn_untrained_budget(cfg, None if usd else level, args.run_dir, level if usd else None, resolved)
    sc = run_scenarios(fleet or _fleet_config(args), scales, usd, rule=args.rule, years=args.years,
                       episodes=args.episodes, seed=args.seed, bisect=args.bisect, progress=not args.quiet,
                       ray=args.ray_address or ("local" if args.ray else None), certify_step=args.certify_step,
                       agent=agent)
    print(write_scenarios(sc, out))
    print(f"written: {', '.join(str(out / name) for name in SCENARIO_FILES)}")
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


def _inventory_files(patterns: list[str]) -> list[str]:
    """``--inventories``: the files named, a quoted pattern ('DIR/*.json') expanded as ``bound --inventory`` does
    (its files sorted by name)."""
    from bridgefleet.evaluation.national import GLOB_CHARS, inventory_files

    files: list[str] = []
    for p in patterns:
        if any(c in p for c in GLOB_CHARS):
            try:
                files += inventory_files(p)
            except ValueError:
                raise ConfigError(f"--inventories {p}: no file matches") from None
        else:
            files.append(p)
    return files


def _calibrate_panel(args: argparse.Namespace) -> int:
    """``calibrate --panel`` / ``--inventories``: the component model fitted to a yearly component-rating panel
    (and its work records), or to successive NBI / SNBI files of a state (``calibration.successive``); prints
    what was read and the observed-against-fitted tables; with --out writes the component model beside it and the
    fleet YAML (each atomically, after the fit and its check: nothing is written on a refusal)."""
    from bridgefleet.calibration.component_fit import dump_yaml, fit_files, fit_record, report
    from bridgefleet.outputs import write_text
    from bridgefleet.sim.components import from_mapping

    mode = "--panel" if args.panel is not None else "--inventories"
    for name, flag in (("history", "HISTORY.csv"), ("mapping", "--mapping"), ("gap", "--gap")):
        if getattr(args, name) is not None:
            raise ConfigError(f"{flag} fits the continuous model from inspection histories: not with {mode} (the "
                              "component model)")
    if args.panel is not None and args.inventories:
        raise ConfigError("--panel and --inventories: give one (a panel file, or the yearly inventory files)")
    if args.inventories and args.works:
        raise ConfigError("--works: not with --inventories (the SNBI files' Works entries are the work records)")
    if args.years is not None and not args.inventories:
        raise ConfigError("--years: give it with --inventories (each inventory file's inspection year)")
    files = _inventory_files(args.inventories) if args.inventories else []
    out = comp = None
    if args.out:
        reads = ([(f, "an inventory") for f in files] if files else
                 [(args.panel, "the panel")] + ([(args.works, "the works file")] if args.works else []))
        out = check_writable_file(args.out, "--out", reads=reads)
        if out.stem.endswith(".components"):
            raise ConfigError(f"--out {args.out}: give the fleet YAML's name (fleet.yaml); the component model is "
                              "written beside it as NAME.components.yaml, so a name ending in .components would write "
                              "a fleet file where a component model is read")
        comp = out.with_name(f"{out.stem}.components{out.suffix or '.yaml'}")
        check_writable_file(comp, f"--out's component model {comp}", reads=reads)
    if files:
        import shlex

        from bridgefleet.calibration.successive import fit_successive, read_successive

        if args.years is not None and len(args.years) != len(files):
            raise ConfigError(f"--years: {len(args.years)} years for {len(files)} files ({', '.join(files)}): give "
                              "one per file, in the same order")
        succ = read_successive(files, args.years)
        print("\n".join(succ.lines))
        fit = fit_successive(succ)
        model = {**fit.model, "fit": {"inventories": list(succ.files), "years": list(succ.years),
                                      **fit_record(fit)}}
        print(f"{len(files)} inventories: component model fitted" + (
            " with the SNBI files' Works as work records" if succ.works is not None else
            " without work records (every pair counts but rises of two levels or more)"))
        cmd = "bridgefleet calibrate --inventories " + shlex.join(args.inventories) + (
            " --years " + " ".join(map(str, args.years)) if args.years else "")
    else:
        fit = fit_files(args.panel, args.works)
        model = {**fit.model, "fit": {"panel": str(args.panel), "works": args.works, **fit_record(fit)}}
        print(f"{args.panel}: component model fitted" + (f" with the work records of {args.works}" if args.works else
                                                         " without work records (every pair counts)"))
        cmd = f"bridgefleet calibrate --panel {args.panel}" + (f" --works {args.works}" if args.works else "")
    print(report(fit))
    if out is None or comp is None:
        return 0
    from_mapping(model, str(comp))  # the model as written must load
    write_text(comp, f"# The component model fitted by `{cmd}`\n# (docs/fleet-model.md, 'Calibrating to your "
                     f"own panel'); {out.name} uses it.\n" + dump_yaml(model))
    write_text(out, f"# Fleet model fitted by `{cmd}`; use with --config on evaluate, plan, bound, train.\n"
                    "# component_model is read from this file's folder.\n"
               + dump_yaml({"model": "components-2026", "component_model": comp.name}))
    print(f"wrote {comp} (the component model) and {out} (the fleet, for --config)")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from bridgefleet.calibration.fit import check_table, fit_pairs, format_table
    from bridgefleet.calibration.histories import HistoryMapping, read_history

    if args.panel is not None or args.inventories:
        return _calibrate_panel(args)
    if args.works is not None:
        raise ConfigError("--works: give it with --panel (the work records of a component-rating panel)")
    if args.years is not None:
        raise ConfigError("--years: give it with --inventories (each inventory file's inspection year)")
    if args.history is None:
        raise ConfigError("give a HISTORY.csv (the continuous model) or --panel PANEL.csv or --inventories FILE FILE "
                          "... (the component model)")
    if args.out:
        reads = [(args.history, "the history table")] + ([(args.mapping, "the mapping")] if args.mapping else [])
        check_writable_file(args.out, "--out", reads=reads)  # before the fit
    pairs = read_history(args.history, HistoryMapping.load(args.mapping))
    if args.gap is not None:
        keep = pairs.years == args.gap
        if not keep.any():
            raise ConfigError(f"{args.history}: no do-nothing pair {args.gap} years apart (--gap)")
        pairs = pairs.select(keep)
    try:
        fit = fit_pairs(pairs)
    except ValueError as exc:  # too few pairs: say which table
        raise ConfigError(f"{args.history}: {exc}") from None
    fitted = FleetConfig().replace(**fit.fields())
    print(f"{args.history}: {len(pairs.rating0):,} do-nothing pairs of {pairs.n_bridges:,} bridges")
    print(format_table(check_table(pairs, {"continuous-2026": FleetConfig(), "fit": fitted})))
    if args.out:
        import yaml

        from bridgefleet.outputs import write_text

        head = (f"# Deterioration fitted by `bridgefleet calibrate {args.history}` to {len(pairs.rating0):,} "
                "do-nothing pairs\n# (docs/fleet-model.md); use with --config on train, evaluate, bound, plan.\n")
        write_text(args.out, head + yaml.safe_dump({"model": "continuous-2026", **fit.fields()}, sort_keys=False,
                                                   default_flow_style=None, allow_unicode=True))
        print(f"wrote {args.out}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from bridgefleet.bench.measure import run_from_args

    run_from_args(args)
    return 0
