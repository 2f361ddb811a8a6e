"""What the learning and planning commands do with their parsed arguments: ``train``, ``plan``, ``report``,
``sweep`` and ``bench`` (:mod:`bridgefleet.cli.parser` defines every command's arguments; the yardstick commands are
in :mod:`bridgefleet.cli.yardstick`, the data commands in :mod:`bridgefleet.cli.data`)."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys

from bridgefleet.cli.args import config_read, fleet_config, fleet_options_given, mapping_with_inventory
from bridgefleet.paths import check_writable_folder
from bridgefleet.progress import command_bar


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
        overrides = {"episodes": args.episodes, "num_envs": args.num_envs, "vector": args.vector,
                     "device": args.device, "seed": args.seed, "inventory": args.inventory,
                     "max_urban": args.max_urban, "county": args.county, "owner": args.owner,
                     "inventory_mapping": args.mapping, "amp": amp, "threads": args.threads, "agent": args.agent,
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



def cmd_plan(args: argparse.Namespace) -> int:
    from bridgefleet.evaluation.work_plan import make_plan

    fleet = None
    if args.run_dir is None:
        fleet = fleet_config(args)
    else:
        given = fleet_options_given(args, ("config", "fleet_model", "county", "owner"))
        if given:
            raise ValueError(f"plan {args.run_dir} plans on the run's own fleet; {', '.join(given)} cannot change it "
                             "(--inventory can)")
        mapping_with_inventory(args)
    if args.explain:
        from bridgefleet.evaluation.explain_bridge import explain_plan

        with command_bar(0, "plan --explain", "unit", not args.quiet):  # the price search adds itself
            text = explain_plan(args.explain, run_dir=args.run_dir, fleet=fleet, inventory=args.inventory,
                                mapping=args.mapping, years=args.years, seed=args.seed, budget_scale=args.budget_scale,
                                budget_usd=args.budget_usd, max_poor=args.max_poor_deck_area,
                                max_urban=args.max_urban, device=args.device, progress=not args.quiet)
        print(text)
        return 0
    said = io.StringIO()  # what the plan prints, below the bar once it is gone (not across its line)
    held = contextlib.nullcontext() if args.quiet else contextlib.redirect_stdout(said)
    try:  # the bar's units: 10,000 bridge-years of the planner's DP (bridgefleet.progress)
        with command_bar(0, "plan", "unit", not args.quiet), held:
            make_plan(args.run_dir, args.out, years=args.years, inventory=args.inventory, mapping=args.mapping,
                      samples=args.samples, seed=args.seed, device=args.device, max_urban=args.max_urban,
                      policy=args.policy, fleet=fleet, budget_scale=args.budget_scale,
                      budget_usd=args.budget_usd, max_poor=args.max_poor_deck_area,
                      reads=config_read(args),  # the run's and the fleet's
                      works=args.plan_format == "snbi-works", start_year=args.start_year, progress=not args.quiet)
    finally:
        sys.stdout.write(said.getvalue())
    return 0



def cmd_report(args: argparse.Namespace) -> int:
    from bridgefleet.report import build_report

    mapping_with_inventory(args)
    with command_bar(0, "report", "policy", not args.quiet):  # the policies compared add themselves
        out = build_report(args.run_dir, args.out, inventory=args.inventory, mapping=args.mapping,
                           episodes=args.episodes, seed=args.seed, samples=args.samples, bound=not args.no_bound,
                           progress=not args.quiet, table=_above_the_bar, max_urban=args.max_urban,
                           scenarios=args.scenarios, plan_policy=args.policy)
    print(f"report: {out}")
    return 0



def _above_the_bar(text: str) -> None:
    """``text`` on stdout above the progress bar, which stays on its line (tqdm.write)."""
    from tqdm import tqdm

    tqdm.write(text)



def cmd_sweep(args: argparse.Namespace) -> int:
    from bridgefleet.sweep import run_sweep

    out = args.resume or args.out
    rows = run_sweep(args.space, out, ray_address=args.ray_address, samples=args.samples, seeds=args.seeds,
                     asha=not args.no_asha, resume=bool(args.resume), progress=not args.quiet)
    with open(os.path.join(out, "sweep.md"), encoding="utf-8") as f:
        print(f.read())
    print(f"{len(rows)} trial(s); written: {os.path.join(out, 'sweep.csv')}, {os.path.join(out, 'sweep.md')}")
    return 0



def cmd_bench(args: argparse.Namespace) -> int:
    from bridgefleet.bench.measure import run_from_args

    run_from_args(args)
    return 0
