"""The yardstick commands: ``evaluate`` (policies beside the planner and the bound), ``bound`` and ``scenarios``
(what each budget buys, the least budget for FHWA's rule)."""

from __future__ import annotations

import argparse

from bridgefleet.cli.args import check_grid_step, files_read, fleet_config, fleet_options_given, write_json_said
from bridgefleet.paths import check_writable_file, check_writable_folder
from bridgefleet.progress import command_bar
from bridgefleet.typed_numbers import BUDGET_MULTIPLE, BUDGET_USD, numbers


def cmd_evaluate(args: argparse.Namespace) -> int:
    from bridgefleet.evaluation.evaluate import (
        best_heuristic,
        evaluate_with_bound,
        format_fhwa_table,
        format_table,
        to_json,
    )
    from bridgefleet.sim.heuristics import HEURISTICS, get_policy

    check_grid_step(args)
    if args.json is not None:
        check_writable_file(args.json, "--json", reads=files_read(args))
    extra = {}
    if args.run_dir:
        from bridgefleet.runs.load import load_policy, warn_untrained_budget

        given = fleet_options_given(args)
        if given:
            raise ValueError(f"evaluate {args.run_dir} evaluates on the run's own fleet (its config.yaml); "
                             f"{', '.join(given)} cannot change it (bridgefleet report RUN --inventory PATH "
                             "evaluates a run on another inventory)")
        cfg, policy = load_policy(args.run_dir, args.device)
        fleet = cfg.fleet
        extra = {"trained": policy}
        warn_untrained_budget(cfg, args.budget_scale, args.run_dir)
    else:
        fleet = fleet_config(args)
    if args.policy == "all":
        names = list(HEURISTICS)
    elif args.policy == "lagrangian":
        names = ["do_nothing"]
    else:
        get_policy(args.policy)
        names = ["do_nothing", args.policy] if args.policy != "do_nothing" else ["do_nothing"]
    planner = not args.no_bound
    with command_bar(0, "evaluate", "policy", not args.quiet):  # the policies add themselves
        results, bound = evaluate_with_bound(fleet, names, args.episodes, args.seed, extra, planner=planner,
                                             step=args.grid_step, max_iter=args.bound_iters, progress=not args.quiet,
                                             max_poor_deck_area=args.max_poor_deck_area,
                                             budget_scale=args.budget_scale)
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
    at_level = set_budget(resolved, args.budget_scale)
    budgets = dict(zip(at_level.agency_labels, at_level.budgets_usd, strict=True))
    print(f"annual budget: USD {sum(budgets.values()):,.0f} ("
          + ", ".join(f"{name} {usd:,.0f}" for name, usd in budgets.items()) + "), "
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
        write_json_said(args.json, {"fleet_model": model, "budget_scale": scale,
                                "annual_budget_usd": budgets,
                                **to_json(results, bound, rule, n_bridges, fleet.cost_lambda)})
    return 0



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
    check_grid_step(args)  # before any file is read
    if args.certify_step is not None:
        grid_points(args.certify_step, "--certify-step")
    if args.json is not None:
        check_writable_file(args.json, "--json", reads=files_read(args))
    if args.inventory and any(c in args.inventory for c in GLOB_CHARS):  # several files: one problem each
        if args.certify_step is not None:
            raise ValueError("--certify-step: the certified bound is for one inventory; with several files "
                             "(--inventory with a pattern) each row gives the grid bound")
        rows = run_files(fleet_config(args), args.inventory, args.episodes, args.seed, args.max_poor_deck_area,
                         ray=args.ray_address, progress=not args.quiet, step=args.grid_step,
                         max_iter=args.bound_iters)
        rule = ("no poor deck-area rule" if args.max_poor_deck_area is None else
                f"rule: at most {args.max_poor_deck_area:.0%} of deck area poor in expectation every year, priced")
        print(f"each inventory its own problem (its agencies and sized budgets), {args.episodes} sample(s) each "
              f"from seed {args.seed}; {rule}; bound and planner: expected discounted return, reward units; "
              "deck area: FHWA's (NHS where coded; 'bridges' counts all)")
        print(national_markdown(rows))
        if args.json:
            write_json_said(args.json, national_json(rows, {"episodes": args.episodes, "seed": args.seed,
                                                        "max_poor_deck_area": args.max_poor_deck_area,
                                                        "bound_units": "expected discounted return, reward units",
                                                        "money_units": "USD a year"}))
        return 0
    cfg, fleet = resolve_fleet(fleet_config(args))
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
    with command_bar(0, "bound", "unit", not args.quiet):  # the price search adds its part (bridgefleet.progress)
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
        write_json_said(args.json, {"bound": {"mean": b.mean, "ci95": b.ci95, "per_fleet": b.values.tolist(),
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
    with command_bar(0, "bound", "unit", not args.quiet):  # each group's price search adds its part
        b = ExactPlanner(max_iter=args.bound_iters, max_poor_deck_area=args.max_poor_deck_area,
                         progress=not args.quiet).prepare(sim)
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
    names = cfg.agency_labels
    price = b.parts[0].row_price[: len(names)]  # the first fleet's agencies (priced alone, the others from it)
    price = np.cumsum(price[:, ::-1], axis=1)[:, ::-1] if cfg.carry_over_budget else price
    print("\nprices of money (the first fleet, per year, undiscounted): reward units per USD 1,000")
    heads = ("urban", "rural") if names == ("urban", "rural") else tuple(f"agency {g + 1}" for g in range(len(names)))
    for g, name in enumerate(names if heads != ("urban", "rural") else ()):
        print(f"  agency {g + 1}: {name}")
    w = 12 if heads == ("urban", "rural") else 15
    print(f"{'year':>4} " + " ".join(f"{h + ' /kUSD':>{w}}" for h in heads))
    for t in range(cfg.horizon_years):
        print(f"{t + 1:>4} " + " ".join(f"{price[g, t] / disc[t] * 1e3:>{w}.3f}" for g in range(len(names))))
    if args.json:
        write_json_said(args.json, {"bound": {"mean": b.mean, "ci95": ci95(b.values), "per_fleet": b.values.tolist(),
                                          "dp_solves": iters, "seconds": b.seconds, "exact": True},
                                "component_model": cfg.component_model})
    return 0



def cmd_scenarios(args: argparse.Namespace) -> int:
    from bridgefleet.evaluation.scenario_tables import SCENARIO_FILES, write_scenarios
    from bridgefleet.evaluation.scenarios import DEFAULT_SCALES, run_scenarios

    scales = numbers(args.budgets, "--budgets", BUDGET_MULTIPLE)  # before any work
    usd = numbers(args.budgets_usd, "--budgets-usd", BUDGET_USD)
    out = check_writable_folder(args.out, "--out")  # before minutes of work
    reads = files_read(args)
    for name in SCENARIO_FILES:  # none of them may replace what the command reads
        if (out / name).is_dir():
            raise IsADirectoryError(f"--out {out}: {out / name} is a folder where scenarios writes its file {name}: "
                                    "move it, or give another --out")
        check_writable_file(out / name, "--out", create=True, reads=reads)
    agent, fleet = None, None
    if args.run_dir:
        from bridgefleet.inventory.fleet import resolve_fleet
        from bridgefleet.runs.load import load_policy, warn_untrained_budget

        given = fleet_options_given(args)
        if given:
            raise ValueError(f"scenarios {args.run_dir} runs on the run's own fleet; {', '.join(given)} cannot "
                             "change it")
        cfg, agent = load_policy(args.run_dir, "cpu")
        fleet = cfg.fleet
        resolved = resolve_fleet(fleet)[0]
        levels = usd or scales or list(DEFAULT_SCALES)
        for level in sorted({min(levels), max(levels)}):  # the lowest and the highest
            warn_untrained_budget(cfg, None if usd else level, args.run_dir, level if usd else None, resolved)
    sc = run_scenarios(fleet or fleet_config(args), scales, usd, rule=args.rule, years=args.years,
                       episodes=args.episodes, seed=args.seed, bisect=args.bisect, progress=not args.quiet,
                       ray=args.ray_address or ("local" if args.ray else None), certify_step=args.certify_step,
                       agent=agent, max_penalty_chance=args.max_penalty_chance)
    print(write_scenarios(sc, out))
    print(f"written: {', '.join(str(out / name) for name in SCENARIO_FILES)}")
    return 0
