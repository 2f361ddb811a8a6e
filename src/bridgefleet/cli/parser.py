"""The ``bridgefleet`` command line's arguments: one subcommand per job, each naming its function in
:mod:`bridgefleet.cli.commands`, :mod:`~bridgefleet.cli.yardstick` and
:mod:`~bridgefleet.cli.data`."""

from __future__ import annotations

import argparse
import math

from bridgefleet.cli.commands import cmd_bench, cmd_plan, cmd_report, cmd_sweep, cmd_train
from bridgefleet.cli.data import cmd_calibrate, cmd_inventory
from bridgefleet.cli.typos import unknown_arguments, unknown_command
from bridgefleet.cli.yardstick import cmd_bound, cmd_evaluate, cmd_scenarios
from bridgefleet.config.seeds import PLAN_SAMPLES, TEST_SEED
from bridgefleet.typed_numbers import (
    BUDGET_MULTIPLE,
    BUDGET_USD,
    NUMBER,
    WHOLE,
    Refused,
    number,
    real_in,
    whole_at_least,
)

SEED_HELP = f"first evaluation seed (default {TEST_SEED:,}: the test fleets, which nothing is tuned on)"
STEP_HELP = (" A step is 1 / a whole number (0.07 is taken as 1/15); below about 0.001 memory and time grow past a "
             "workstation's.")
CERTIFY_STEP_HELP = STEP_HELP + (" Its grid must hold the fleet model's new-structure rating (8.3 by default): 0.1, "
                                 "0.05, 0.02, 0.01, 0.005 do.")


class _Defaults(argparse.ArgumentDefaultsHelpFormatter):
    """--help shows each option's default, where it has one worth showing."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default is None or action.default is False or action.default == argparse.SUPPRESS \
                or "(default" in text:
            return text
        return super()._get_help_string(action)


class _OneLineErrors(argparse.ArgumentParser):
    """An option argparse cannot parse (``--certify-step abc``) is refused in one line, as every other bad input
    is, instead of argparse's usage block and the line (its subcommands' parsers are of this class too)."""

    def error(self, message: str):
        self.refuse(message)

    def refuse(self, message: str, see_help: bool = True):
        self.exit(2, f"{self.prog}: error: {message}" + (f" (see {self.prog} --help)" if see_help else "") + "\n")


class _CommandLine(_OneLineErrors):
    """``bridgefleet``'s own parser: a mistyped command is refused with the command it is likely a typo of
    (``plna``: did you mean plan?), and an argument its command does not take by that command, naming the
    option it is likely a typo of (``bridgefleet plan: error: unknown option --inventry (did you mean
    --inventory?)``) instead of argparse's "unrecognized arguments" without either."""

    _commands: argparse.Action | None = None

    def add_subparsers(self, **kwargs):
        self._commands = super().add_subparsers(parser_class=_OneLineErrors, **kwargs)
        return self._commands

    def parse_args(self, args=None, namespace=None):
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            commands = self._commands.choices
            command = commands[namespace.command]
            command.refuse(*unknown_arguments(namespace.command, command, extras, commands))
        return namespace

    def _check_value(self, action: argparse.Action, value) -> None:
        if action is self._commands and value not in action.choices:
            self.refuse(*unknown_command(value, action.choices))
        super()._check_value(action, value)


def check_seed(args: argparse.Namespace) -> None:
    if getattr(args, "seed", None) is not None and args.seed < 0:
        raise ValueError(f"--seed {args.seed}: must be ≥ 0")


def build_parser() -> argparse.ArgumentParser:
    p = _CommandLine(prog="bridgefleet", description=(
        "Train deep-RL maintenance policies for a bridge fleet, compare them with today's rules of thumb, "
        "and write a multi-year maintenance plan."))
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("evaluate", help="evaluate heuristic policies, or a trained run against them",
                       formatter_class=_Defaults, description="Compare maintenance policies on the same evaluation "
                       "fleets: today's rules of thumb (the heuristics), the lagrangian planner and the upper bound, "
                       "or a trained run's agents against them (mean discounted return with 95 % CIs, annual cost, "
                       "share poor, distance to the bound).")
    e.add_argument("run_dir", nargs="?", help="a training run directory (omit to evaluate heuristics only)")
    e.add_argument("--policy", default="all", help="heuristic name, 'lagrangian' (the planner), or 'all' (default)")
    _evaluation_fleet_options(e, "evaluation episodes (default 100)")
    e.add_argument("--device", default="auto", help="cpu, cuda or auto")
    e.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    e.add_argument("--no-bound", action="store_true", help="skip the lagrangian planner and the upper bound")
    e.add_argument("--budget-scale", type=real_in(BUDGET_MULTIPLE), help="every policy (and the bound) at this "
                   "multiple of the sized annual budget, at most 100 (default 1; a run says when it did not learn "
                   "at that budget: the default preset learns at 0.25 to 2)")
    _bound_options(e)
    e.set_defaults(func=cmd_evaluate, memory=(("--grid-step",), ("--episodes",)))

    bd = sub.add_parser("bound", help="upper bound on what any budget-feasible policy can reach, with its prices",
                        formatter_class=_Defaults, description="Compute an upper bound on what any maintenance "
                        "policy within the budget can expect on the evaluation fleets, with its prices per agency and "
                        "year: the yardstick the planner and trained agents are measured against.")
    _evaluation_fleet_options(bd, "evaluation fleets")
    bd.add_argument("--json", metavar="FILE", help="also write the bound and prices as JSON")
    _bound_options(bd)
    bd.set_defaults(func=cmd_bound, memory=(("--grid-step", "--certify-step"), ("--episodes",)))

    d = _preset_defaults()
    sarsa = _preset_defaults("sarsa")
    t = sub.add_parser("train", help="train a maintenance policy (default: the per-bridge network fitted to the "
                       "lagrangian planner)",
                       description="Train a maintenance policy. Options left out take the preset's value "
                       "(shown as 'default' for the default preset).")
    t.add_argument("--config", help="training config YAML (fleet options under 'fleet:')")
    t.add_argument("--preset", help="default (the per-bridge network fitted to the lagrangian planner's benefits; "
                   "also named distill), sarsa (the per-bridge network learned by SARSA), and the plan's agents: "
                   "baseline, compile-amp, double, nstep, per, dueling, vectorized, all, fleet (default: the config "
                   "file's preset, else default)")
    t.add_argument("--agent", choices=["fleet", "bridge"],
                   help="fleet: the plan's urban and rural agents; bridge: one Q-network for every bridge "
                   f"(default: {d['agent']})")
    t.add_argument("--episodes", type=WHOLE, help="training episodes of the presets that learn episode by episode "
                   f"(sarsa: {sarsa['episodes']}; with --resume: a new total, the ε and β schedules continue as they "
                   "were); the default preset is fitted to the planner on a set number of fleets and refuses it")
    t.add_argument("--num-envs", type=WHOLE, help=f"fleets simulated in parallel (default: {d['num_envs']})")
    t.add_argument("--vector", choices=["native", "sync", "async"],
                   help=f"vector env implementation (default: {d['vector']})")
    _fleet_model_option(t)
    _inventory_options(t)
    t.add_argument("--device", help=f"cpu, cuda or auto (default: {d['device']})")
    t.add_argument("--seed", type=WHOLE, help=f"training seed (default: {d['seed']})")
    t.add_argument("--amp", choices=["auto", "on", "off"],
                   help="mixed precision: auto (bf16 on a CPU with native bf16, fp16 on CUDA, each only where a probe "
                   "finds it faster than fp32), on, off "
                   f"(default: {d['amp']})")
    t.add_argument("--threads", type=_threads_or_auto, help="torch threads: a number, or auto (probed on the "
                   "allowed cores) "
                   f"(default: {d['threads']})")
    t.add_argument("--reprobe", action="store_true", help="probe precision and threads again (not the cache)")
    t.add_argument("--checkpoint-replay", action="store_true",
                   help="also save the replay buffers with each checkpoint, so a resumed run equals the "
                   "uninterrupted one (costs their size on disk)")
    t.add_argument("--out", help="run directory (default runs/<preset>-<time>)")
    t.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its latest checkpoint")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.set_defaults(func=cmd_train, memory=((), ("--num-envs",)))

    pl = sub.add_parser("plan", help="write a multi-year maintenance plan (a trained run's, or the planner's)",
                        formatter_class=_Defaults, description="Write a bridge × year maintenance plan with its "
                        "costs, a yearly summary (share of deck area and of bridges good and poor, spend against "
                        "the budget) and plan.png: a trained run's agents, or with --policy lagrangian the planner's "
                        "plan (no training run) at the budget you choose.")
    pl.add_argument("run_dir", nargs="?", help="training run directory (omit with --policy)")
    pl.add_argument("--policy", help="lagrangian (the planner) or a heuristic's name, instead of the trained agents")
    pl.add_argument("--config", help="fleet config YAML (without a run)")
    _fleet_model_option(pl)
    pl.add_argument("--mapping", help="column-mapping YAML for a non-NBI inventory (with a run: of --inventory's; "
                    "default the run's)")
    pl.add_argument("--county", help="keep one county (NBI item 3; without a run)")
    pl.add_argument("--owner", help="keep one owner (NBI item 22; without a run)")
    budget = pl.add_mutually_exclusive_group()
    budget.add_argument("--budget-scale", type=real_in(BUDGET_MULTIPLE), help="the annual budget as a multiple of "
                        "the sized budget, at most 100 (default 1; a run says when it did not learn at that budget: "
                        "the default preset learns at 0.25 to 2)")
    budget.add_argument("--budget-usd", type=real_in(BUDGET_USD), help="the annual budget, USD a year: 1000000, "
                        "1,000,000 or 1e6 (1,000 and 1.000 are refused: a thousand, or one where the comma or point "
                        "is decimal; split between the agencies as the sized one)")
    pl.add_argument("--out", help="plan CSV path, or a folder (plan.csv inside it; a path without a suffix is "
                    "taken as a folder); plan_summary.csv (a row per year) and plan.png beside it (default: "
                    "RUN_DIR/plan.csv, or plan.csv)")
    pl.add_argument("--format", choices=["csv", "snbi-works"], default="csv", dest="plan_format",
                    help="snbi-works: also the plan's treatments as SNBI Works entries (BID01; BW02 year, BW03 work "
                    "code, one per component) in PLAN.works.json beside the CSV, or at --out where it ends in .json; "
                    "the component fleet model only (--fleet-model components-2026)")
    pl.add_argument("--start-year", type=WHOLE, help="calendar year of the plan's year 1 in the SNBI works file "
                    "(default: this year; with --format snbi-works)")
    _rule_option(pl)
    pl.add_argument("--years", type=WHOLE, default=30, help="planning horizon, years")
    pl.add_argument("--inventory", help="plan for this inventory instead of the run's fleet")
    pl.add_argument("--max-urban", type=MAX_URBAN, help="urban bridges under per-bridge control (default: as trained)")
    pl.add_argument("--samples", type=WHOLE, default=PLAN_SAMPLES,
                    help="deterioration samples averaged (the report's plan takes as many)")
    pl.add_argument("--explain", metavar="BRIDGE_ID", action="append",
                    help="instead of writing the plan, say why the planner treats or defers this bridge in year 1 "
                    "(structure number; repeat for several): each treatment's cost, the cost of waiting a year, "
                    "deck area kept out of poor, road users' and later agency cost avoided, the agency's cut-off, "
                    "the money that would fund it; with a run, the trained agent's decision beside it (the "
                    "component fleet model)")
    pl.add_argument("--seed", type=WHOLE, default=0, help="seed of the fleet and deterioration samples")
    pl.add_argument("--device", default="auto", help="cpu, cuda or auto")
    _threads_option(pl)
    pl.add_argument("--quiet", action="store_true", help="no progress bar")
    pl.set_defaults(func=cmd_plan, memory=((), ("--samples", "--years")))

    r = sub.add_parser("report", help="one self-contained HTML page: fleet, policies compared, plan, training",
                       formatter_class=_Defaults, description="Write one self-contained HTML page for the budget "
                       "meeting from a finished training run: the fleet today, every policy compared on the same "
                       "fleets, the maintenance plan, a map where the inventory has coordinates, and the training "
                       "curve.")
    r.add_argument("run_dir", help="a finished training run directory (with final.pt)")
    r.add_argument("--out", help="HTML file to write (default: RUN_DIR/report.html)")
    r.add_argument("--inventory", help="report on this inventory instead of the run's fleet")
    r.add_argument("--mapping", help="column-mapping YAML of --inventory for a non-NBI table (default: the run's)")
    r.add_argument("--max-urban", type=MAX_URBAN, help="urban bridges under per-bridge control (plan agents; "
                   "default: as trained)")
    r.add_argument("--episodes", type=WHOLE, default=100, help="evaluation fleets for the comparison")
    r.add_argument("--seed", type=WHOLE, default=TEST_SEED, help=SEED_HELP)
    r.add_argument("--samples", type=WHOLE, default=PLAN_SAMPLES, help="deterioration samples averaged in the plan "
                   "(as plan.csv's, so the same bridge and year reads the same)")
    r.add_argument("--no-bound", action="store_true", help="skip the planner and the upper bound (faster)")
    r.add_argument("--policy", help="the plan section shows this policy's plan: lagrangian (the planner) or a "
                   "heuristic's name (default: the trained agents')")
    r.add_argument("--scenarios", metavar="DIR", help="a `bridgefleet scenarios` folder (or its scenarios.json): adds "
                   "'What each budget buys'")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    _threads_option(r)
    r.set_defaults(func=cmd_report, memory=((), ("--episodes", "--samples")))

    scn = sub.add_parser("scenarios", help="what each budget buys on FHWA's measures, and the least budget for "
                         "the 10 %% poor rule", formatter_class=_Defaults, description="The lagrangian planner at "
                         "several annual budgets: share of deck area good and poor by year (95 % CIs), agency and "
                         "user cost in USD, breaches of the poor deck-area rule, the upper bound; the certified least "
                         "budget (below it no policy meets the rule in expectation) and the planner's least budget.")
    scn.add_argument("run_dir", nargs="?", help="a training run: its agent at every level beside the planner, on "
                     "the run's fleet (the default preset learns at 0.25 to 2 × the sized budget)")
    scn.add_argument("--budgets", help="budget levels, multiples of the sized budget, separated by commas, ';' or "
                     "spaces (default 0.25,0.5,…,2)")
    scn.add_argument("--budgets-usd", help="budget levels, USD a year, separated by ';' or spaces: "
                     "'5,000,000;10,000,000' or '5e6 1e7' (commas only where no level reads as thousands: "
                     "5000000,10000000; '5,000,000' alone is refused, as one level or three)")
    scn.add_argument("--rule", type=NUMBER, default=0.10, help="most share of deck area poor in any year "
                     "(23 CFR 490.411)")
    scn.add_argument("--max-penalty-chance", type=NUMBER, default=0.05, metavar="P",
                     help="the least budget that keeps the chance of three consecutive years above the rule (FHWA's "
                     "penalty, 23 U.S.C. 119(f)(2)) below P with 95 %% confidence, searched by planner runs on "
                     "sampled paths (59 for 5 %%; the component fleet model)")
    scn.add_argument("--years", type=WHOLE, default=30, help="planning horizon, years")
    scn.add_argument("--episodes", type=WHOLE, default=16, help="deterioration samples per level")
    scn.add_argument("--seed", type=WHOLE, default=TEST_SEED,
                     help=f"first seed (and the fleet seed of a fleet model) (default {TEST_SEED:,}: the test fleets)")
    scn.add_argument("--bisect", type=WHOLE, default=3,
                     help="most probes for the planner's least budget below the lowest level that met the rule "
                     "(first at 1.1, 1.2, 1.4, … × the certified least budget until one meets it, then bisection; "
                     "the search stops once the budgets seen to miss and to meet lie within 5 %% of the certified "
                     "least budget of each other; 0: the lowest level that met)")
    scn.add_argument("--certify-step", type=NUMBER,
                     help="continuous fleet models: rating grid of the certified least budget, rating points (default "
                     "0.005; it holds for the simulator's model whatever the step; finer is tighter and slower; the "
                     "component model's least budget is exact and refuses it)." + CERTIFY_STEP_HELP)
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
    _threads_option(scn)
    scn.set_defaults(func=cmd_scenarios, memory=(("--certify-step",), ("--episodes", "--years")))

    sw = sub.add_parser("sweep", help="search TrainConfig fields on Ray Tune (pip install 'bridgefleet[ray]')",
                        formatter_class=_Defaults, description="Search training settings (TrainConfig fields) on Ray "
                        "Tune: one training run per trial, ASHA early stopping, results with CIs over seeds in "
                        "sweep.csv and sweep.md (pip install 'bridgefleet[ray]'; docs/sweep.md).")
    sw.add_argument("space", nargs="?", help="search space YAML (docs/sweep.md)")
    sw.add_argument("--ray-address", help="join the Ray cluster at host:port (default: start Ray on this machine)")
    sw.add_argument("--samples", type=WHOLE, default=1, help="samples of the random choices (grids: all values)")
    sw.add_argument("--seeds", type=WHOLE, default=1, help="training seeds per configuration")
    sw.add_argument("--no-asha", action="store_true", help="run every trial to the end (no early stopping)")
    sw.add_argument("--out", default="sweep-out", help="sweep folder")
    sw.add_argument("--resume", metavar="DIR", help="resume the sweep in DIR (finished trials are kept)")
    sw.add_argument("--quiet", action="store_true", help="no progress bar")
    sw.set_defaults(func=cmd_sweep)

    b = sub.add_parser("bench", help="measure what each acceleration buys: the plan's Benchmark Targets table",
                       description="Measure what each acceleration buys on this machine: train every preset from "
                       "one or more seeds to the target return and write the plan's Benchmark Targets table "
                       "(bench.csv, bench.md, bench.png).")
    from bridgefleet.bench.measure import add_arguments

    add_arguments(b)
    b.set_defaults(func=cmd_bench)

    c = sub.add_parser("calibrate", help="fit the fleet model to an agency's inspection histories or its yearly "
                       "component-rating panel",
                       description="Two modes. HISTORY.csv: fit the continuous fleet model's deterioration (a rate "
                       "per rating point, years since maintenance, noise, sudden damage) to inspection histories by "
                       "maximum likelihood; print observed vs modelled; --out writes a fleet-model YAML for --config. "
                       "--panel PANEL.csv [--works WORKS.csv]: fit the component model (components-2026: deck, "
                       "superstructure, substructure, culvert ratings as Markov chains, their coupling, treatments "
                       "fitted to the recorded work) to yearly component ratings in the Massachusetts layout; print "
                       "observed-against-fitted tables; --out FLEET.yaml writes FLEET.yaml for --config and the "
                       "component model FLEET.components.yaml beside it (docs/fleet-model.md, 'Calibrating to your "
                       "own panel'). --inventories FILE FILE ...: the same fit on a state's NBI or SNBI files of "
                       "successive inspection years, matched on state + bridge number, the SNBI files' Works as the "
                       "work records.")
    c.add_argument("history", nargs="?", help="CSV, one row per inspection: bridge, year, rating 0-9 (or an index "
                   "with --mapping); optional year built and work flag (the continuous model; not with --panel)")
    c.add_argument("--mapping", help="column/scale mapping YAML, or a bundled name (ontario-bci); HISTORY mode")
    c.add_argument("--gap", type=WHOLE, help="only pairs this many years apart (default: every gap); HISTORY mode")
    c.add_argument("--panel", metavar="PANEL.csv", help="yearly component ratings, one row per bridge and year, "
                   "columns bdept_bridge_id, year, num_obs_in_year, year_built, deck, superstructure, substructure, "
                   "culvert (NBI items 58-60, 62: 0-9, N or blank; 0 read as missing), area_sf_col (m2), nhs (0/1): "
                   "fit the component model")
    c.add_argument("--works", metavar="WORKS.csv", help="with --panel: the work records, columns bdept_bridge_id, "
                   "project_init_year, project_end_year, spending_usd_per_bridge; without them every pair counts but "
                   "those rising two levels or more (read as unrecorded work) and the bundled model's treatments "
                   "are kept")
    c.add_argument("--inventories", nargs="+", metavar="FILE", help="instead of --panel: two or more NBI "
                   "Coding-Guide or SNBI (JSON) files of one state, one inspection year each (or a quoted pattern, "
                   "'DIR/*.json'), matched on state + bridge number; the SNBI files' Works entries are the work "
                   "records (NBI files have none)")
    c.add_argument("--years", nargs="+", type=WHOLE, metavar="YEAR", help="with --inventories: each file's "
                   "inspection year, in the order the files are named (a pattern's files sorted by name); default "
                   "each file's own (SNBI: latest inspection date BIE03; NBI: YEAR column, file name, item 90)")
    c.add_argument("--out", help="write the fitted fleet model here (YAML; with --panel or --inventories also the "
                   "component model beside it, NAME.components.yaml)")
    c.set_defaults(func=cmd_calibrate)

    i = sub.add_parser("inventory", help="summarize a bridge inventory (NBI file or mapped CSV)",
                       description="Summarize a bridge inventory (an NBI file or a mapped CSV): rows kept and "
                       "dropped, urban and rural bridges, good / fair / poor shares and condition quartiles.")
    i.add_argument("path", help="inventory file, or a bundled name (dc-2019)")
    i.add_argument("--mapping", help="column-mapping YAML for non-NBI tables")
    i.add_argument("--county", help="keep one county (NBI item 3)")
    i.add_argument("--owner", help="keep one owner (NBI item 22)")
    i.add_argument("--max-urban", type=MAX_URBAN,
                   help="also show the fleet split for this many per-bridge urban bridges")
    i.set_defaults(func=cmd_inventory)
    return p


def _preset_defaults(preset: str = "default") -> dict:
    """A preset's values (the default preset's unless told), for --help."""
    from bridgefleet.config.presets import resolve_config

    cfg = resolve_config(preset)
    return {k: ("auto" if v == "auto" else v) for k, v in cfg.to_dict().items()}


def _evaluation_fleet_options(p: argparse.ArgumentParser, episodes_help: str) -> None:
    """Evaluation fleets: how many, their seeds, and the fleet (config file or inventory)."""
    p.add_argument("--episodes", type=WHOLE, default=100, help=episodes_help)
    p.add_argument("--seed", type=WHOLE, default=TEST_SEED, help=SEED_HELP)
    p.add_argument("--config", help="fleet config YAML")
    _fleet_model_option(p)
    _inventory_options(p)


def _inventory_options(p: argparse.ArgumentParser) -> None:
    """An inventory as the fleet: the file, how many urban bridges are per-bridge controlled, its column mapping,
    one county or owner."""
    p.add_argument("--inventory", help="bridge inventory file or bundled name (dc-2019)")
    p.add_argument("--max-urban", type=MAX_URBAN, help="urban bridges under per-bridge control (inventories)")
    p.add_argument("--mapping", help="column-mapping YAML for a non-NBI inventory")
    p.add_argument("--county", help="keep one county (NBI item 3)")
    p.add_argument("--owner", help="keep one owner (NBI item 22)")


def _share(text: str) -> float:
    """An argparse type: a share of deck area in [0, 1] (--max-poor-deck-area), read by :func:`number`."""
    if text.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
        f = math.nan
    else:
        try:
            f = number(text, "")
        except Refused as exc:
            raise argparse.ArgumentTypeError(f"{exc}; give a share, e.g. 0.10") from None
    if not 0.0 <= f <= 1.0:  # NaN too
        raise argparse.ArgumentTypeError(f"{text.strip()}: must be a share in [0, 1] (0.10 for FHWA's rule)")
    return f


def _rule_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-poor-deck-area", type=_share, metavar="F",
                   help="the planner and the bound also price 'at most F of deck area poor in any year' (0.10: "
                   "FHWA's minimum condition, 23 CFR 490.411; default: off, no rule priced); breaches are reported "
                   "against F, or against 0.10 without it")


def _fleet_model_name(text: str) -> str:
    """An argparse type: a fleet model's name; a former name is refused saying what it is called now."""
    from bridgefleet.config import FLEET_MODELS
    from bridgefleet.config.fleet import DEFAULT_FLEET_MODEL, MODEL_ALIASES

    if text in MODEL_ALIASES:
        raise argparse.ArgumentTypeError(f"{text!r} is now named {MODEL_ALIASES[text]!r} (the default fleet model is "
                                         f"{DEFAULT_FLEET_MODEL}; files that say model: {text} still load)")
    if text not in FLEET_MODELS:
        raise argparse.ArgumentTypeError(f"{text!r}: choose from {', '.join(FLEET_MODELS)}")
    return text


def _fleet_model_option(p: argparse.ArgumentParser) -> None:
    from bridgefleet.config import FLEET_MODELS

    p.add_argument("--fleet-model", type=_fleet_model_name, metavar="{" + ",".join(FLEET_MODELS) + "}",
                   help="named fleet model; wins over a config file's model: (default: components-2026, the component "
                        "ratings model; a config file without model: keeps the continuous-2026 model it was written "
                        "for; plan-2025 = the model of the plan's published figures, docs/fleet-model.md)")


MAX_URBAN = whole_at_least(1, "at least 1 urban bridge under per-bridge control")
"""--max-urban's type, on every command that has it."""


def _threads_or_auto(text: str) -> int | str:
    """An argparse type: ``train --threads``, a whole number ≥ 1 or ``auto``."""
    return "auto" if text.strip().lower() == "auto" else whole_at_least(1, "at least 1 thread, or auto")(text)


def _threads_option(p: argparse.ArgumentParser) -> None:
    # its own dest: train's --threads (a number or auto) goes to the training config instead
    p.add_argument("--threads", dest="cpu_threads", type=whole_at_least(1, "at least 1 thread"), metavar="N",
                   help="CPU threads of the DPs, the knapsacks and the network (default: every core this process "
                        "may use; give fewer on a shared machine)")


def _bound_options(p: argparse.ArgumentParser) -> None:
    _rule_option(p)
    _threads_option(p)
    p.add_argument("--grid-step", type=NUMBER, default=None, metavar="H",
                   help="rating grid step of the planner's DP, in (0, 1] rating points (default 0.05; 0.03 with "
                        "--max-poor-deck-area on a fleet of at most 1,000 bridges, so the yearly poor deck area and "
                        "spend it plans to are closer to what the simulation gives; an estimate whatever the "
                        "step, the new-structure rating rounded to its grid)." + STEP_HELP)
    p.add_argument("--bound-iters", type=whole_at_least(2, "the price search needs at least 2 DP solves"), default=80,
                   help="most DP solves in the search for the prices (on a 0.2-point grid)")
    if p.prog.endswith(" bound"):
        p.add_argument("--certify-step", type=NUMBER, metavar="H",
                       help="also the certified bound on a grid of step H (holds for the simulator's model whatever "
                            "H; tighter and slower as H falls: 0.01 is 17× the time of 0.05)." + CERTIFY_STEP_HELP)
        p.add_argument("--ray-address", metavar="HOST:PORT",
                       help="solve the bridges' DPs in chunks as Ray tasks on the cluster at HOST:PORT ('local': "
                            "start Ray on this machine); the price search's LP stays here; the same numbers. With "
                            "several inventories (--inventory 'DIR/*.txt': one problem per file, a table with a "
                            "total), the files run as Ray tasks instead")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
