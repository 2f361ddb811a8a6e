"""The data commands: ``inventory`` (read and check an inventory file) and ``calibrate`` (fit a fleet model to an
agency's inspection panel or history)."""

from __future__ import annotations

import argparse

from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.paths import check_writable_file


def cmd_inventory(args: argparse.Namespace) -> int:
    from bridgefleet.inventory.load import InventoryError, load_inventory, summarize
    from bridgefleet.sim.simulator import plan_agents_problem

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
    if (problem := plan_agents_problem(*split)) is not None:
        print(f"note: plan, evaluate, scenarios and train (default preset) take this inventory; the plan's fleet "
              f"agents refuse it: {problem}")
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
