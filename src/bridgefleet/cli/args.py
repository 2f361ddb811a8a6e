"""The command line's shared readings of its arguments: the fleet they name, the files a command reads (which no
output may replace), and checks several commands make."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from bridgefleet.config import ConfigError, FleetConfig


def fleet_config(args: argparse.Namespace) -> FleetConfig:
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



def files_read(args: argparse.Namespace) -> list[tuple[str | Path, str]]:
    """(path, what it is) of the files a command reads: the run folder's (``run_dir``, where it has one), its
    --config and the inventory and mapping of its fleet (given or in the config file; a pattern of several files
    names no file); an output must not replace them."""
    from bridgefleet.inventory.fleet import input_files
    from bridgefleet.runs.folder import run_inputs

    reads = config_read(args) + input_files(fleet_config(args))
    if getattr(args, "run_dir", None):
        reads += run_inputs(args.run_dir)
    return reads



def config_read(args: argparse.Namespace) -> list[tuple[str | Path, str]]:
    """--config's file, where a command has one, as :func:`files_read` gives it."""
    config = getattr(args, "config", None)
    return [(config, "the config file")] if config and os.path.isfile(config) else []



def check_grid_step(args: argparse.Namespace) -> None:
    """--grid-step of ``evaluate`` and ``bound``, where given (None: the planner's default for the fleet).

    Raises:
        ValueError: a step outside (0, 1] rating points, named by its option.
    """
    from bridgefleet.planning.transitions import grid_points

    if args.grid_step is not None:
        grid_points(args.grid_step, "--grid-step")



def fleet_options_given(args: argparse.Namespace, names: tuple[str, ...] = (
        "config", "fleet_model", "inventory", "max_urban", "mapping", "county", "owner")) -> list[str]:
    """The fleet options given on the command line (which a run's own fleet overrides), as flags."""
    return [f"--{k.replace('_', '-')}" for k in names if getattr(args, k, None) is not None]



def write_json_said(path: str, data: dict) -> None:
    """``data`` as JSON into ``path`` (atomically), said on stdout."""
    from bridgefleet.outputs import write_json

    write_json(path, data)
    print(f"written: {path}")



def mapping_with_inventory(args: argparse.Namespace) -> None:
    """With a run, --mapping reads --inventory's table (the run's own fleet keeps its own mapping).

    Raises:
        ValueError: --mapping without --inventory.
    """
    if args.mapping and not args.inventory:
        raise ValueError(f"--mapping {args.mapping}: reads the table --inventory gives (the run {args.run_dir} keeps "
                         "its own fleet and mapping without it)")
