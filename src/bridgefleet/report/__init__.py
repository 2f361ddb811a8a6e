"""``bridgefleet report RUN``: one self-contained HTML page an asset manager takes to the budget meeting.

The page is rendered with Jinja2 (autoescaped template, ``report.html.j2``) and its charts are matplotlib
SVG inlined into it, so it opens without a network and prints as vectors; the plan table is sorted,
filtered and paged by a few lines of plain JavaScript over the plan embedded as JSON. Jinja2 is already
installed with PyTorch; no other dependency is added.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bridgefleet.config.fleet import FleetConfig, read_yaml
from bridgefleet.config.seeds import PLAN_SAMPLES, TEST_SEED
from bridgefleet.evaluation.budget_words import budget_terms, check_terms
from bridgefleet.evaluation.evaluate import format_table
from bridgefleet.evaluation.scenario_figure import SHOW_YEARS, plot_scenarios
from bridgefleet.evaluation.scenario_tables import RULE_SENTENCE, lumps_sentence
from bridgefleet.evaluation.work_plan import FHWA_RULE, plot_plan
from bridgefleet.inventory.fleet import input_files
from bridgefleet.inventory.model import BUNDLED
from bridgefleet.outputs import write_text
from bridgefleet.paths import check_writable_file
from bridgefleet.report.charts import map_chart, policies_chart, training_chart
from bridgefleet.report.data import TRAINED, gather, plan_rows
from bridgefleet.report.policies import MIN_RURAL_FLEET, deck_words, money, plain_name
from bridgefleet.runs.folder import run_inputs
from bridgefleet.sim.model import LUMP_KEYS

__all__ = ["build_report", "json_script"]

_JSON_SCRIPT_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026", 0x2028: "\\u2028",
                        0x2029: "\\u2029"}


def json_script(data: Any) -> str:
    """``data`` as JSON safe inside ``<script type="application/json">``: ``<``, ``>``, ``&``, U+2028 and U+2029
    written as ``\\u`` escapes (as Django's ``json_script``), so no text from an inventory (``</script>``,
    ``<!--<script>``) can end the block or start a script; ``JSON.parse`` reads the same strings back."""
    return json.dumps(data, separators=(",", ":")).translate(_JSON_SCRIPT_ESCAPES)


def build_report(run_dir: str | Path, out: str | Path | None = None, inventory: str | None = None,
                 episodes: int = 100, seed: int = TEST_SEED, samples: int = PLAN_SAMPLES, bound: bool = True,
                 progress: bool = False, table: Callable[[str], Any] | None = None,
                 max_urban: int | None = None, scenarios: str | Path | None = None,
                 plan_policy: str | None = None, mapping: str | None = None) -> Path:
    """Write the report of ``run_dir`` to ``out`` (default RUN/report.html), atomically; ``table`` (e.g.
    ``print``) also gets the comparison as a text table and the plain-words sentence. ``scenarios``: a folder
    written by ``bridgefleet scenarios`` whose budget levels become the section "What each budget buys".
    ``plan_policy``: the plan section shows this policy's plan (``lagrangian``: the planner) instead of the
    trained agents'. ``mapping``: the column mapping of ``inventory`` (default the run's).

    Raises:
        FileNotFoundError: no final.pt in the run, or --out's folder missing. PermissionError: --out not
            writable. ValueError: the inventory does not match the run's fleet, ``scenarios``
            are of another fleet, or bad ``episodes``.
    """
    import jinja2

    from bridgefleet import __version__

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: no such run folder")
    out = Path(out) if out is not None else run_dir / "report.html"
    reads = run_inputs(run_dir) + input_files(FleetConfig(inventory=inventory, inventory_mapping=mapping))
    if scenarios is not None:
        reads.append((Path(scenarios) / "scenarios.json", "the scenarios' JSON"))
    check_writable_file(out, "--out", reads=reads)
    if episodes < 2:
        raise ValueError(f"--episodes {episodes}: at least 2 evaluation fleets are needed for a confidence interval")
    scenario_data = None
    if scenarios is not None:
        path = Path(scenarios) if Path(scenarios).is_file() else Path(scenarios) / "scenarios.json"  # file or folder
        if not path.is_file():
            raise FileNotFoundError(f"--scenarios {scenarios}: no scenarios.json (write it with bridgefleet scenarios "
                                    f"--out {scenarios})")
        scenario_data = read_scenarios(path)
        _check_same_fleet(scenario_data.get("fleet", ""), inventory or _run_inventory(run_dir), scenarios)
    data = gather(run_dir, inventory, episodes, seed, samples, bound, progress, max_urban, plan_policy, mapping)
    if table is not None:
        n_bridges = len(data.fleet.bridge_id)
        table(format_table(data.results, data.bound, n_bridges, data.cost_lambda) + "\n\n" + data.sentence)
    plan = data.plan
    acted = plan.action > 0
    first = np.where(acted.any(0), acted.argmax(0) + 1, 0)
    names = {r.policy: plain_name(r.policy) for r in data.results}
    # today's share poor on the scenarios' chart: an inventory's (a synthetic fleet's scenarios are of another draw)
    today = float(data.fleet.deck_shares[2]) if (inventory or _run_inventory(run_dir)) else None
    charts = {"policies": policies_chart(data.results, data.scale, TRAINED, names),
              "plan": plot_plan(plan),
              "map": map_chart(data.fleet.latitude, data.fleet.longitude, data.fleet.condition,
                               data.fleet.deck_area, first),
              "training": training_chart(data.curve, _yardstick(data.settings.get("training target"), data)),
              "scenarios": plot_scenarios(scenario_data, today=today) if scenario_data else None}
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent),
                             autoescape=jinja2.select_autoescape(["html", "j2"]),
                             undefined=jinja2.StrictUndefined)  # a field that does not exist fails, not ""
    results = sorted(data.results, key=lambda r: -r.mean_return)
    y_n = len(scenario_data["levels"][0]["deck_poor_by_year"]) if scenario_data else 0
    years = [y for y in SHOW_YEARS if y <= y_n]
    n_rural = int((~plan.urban).sum())
    html = env.get_template("report.html.j2").render(
        fleet=data.fleet, results=results, bound=data.bound, trained=TRAINED, sentence=data.sentence,
        episodes=data.episodes, horizon=plan.years, budget=plan.budget_usd, plan_years=plan.years,
        budgets=list(zip(plan.agencies, plan.budget_usd.tolist(), strict=True)),
        samples=plan.samples, charts=charts, settings=data.settings, version=__version__,
        made=datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        plan_json=json_script(plan_rows(plan, data.fleet)), scenarios=scenario_data, scenario_years=years,
        rule_sentence=RULE_SENTENCE, lumps_sentence=_lumps_sentence(scenario_data), budget_terms=budget_terms,
        fhwa_basis=results[0].basis, deck_noun=deck_words(data.fleet.basis), names=names, same=data.same,
        sc=data.scale, best=data.best, elsewhere=data.elsewhere, panel=data.panel, futures=data.futures,
        rural_left_out=n_rural < MIN_RURAL_FLEET, money=money, rule=FHWA_RULE,
        plan_by=("the trained agents" if plan_policy is None else "the planner" if plan_policy == "lagrangian"
                 else f"the rule of thumb {plain_name(plan_policy)}"),
        plan_fleet=plan.fleet)
    write_text(out, html)
    return out


def _yardstick(target: str | None, data) -> str:
    """The training chart's yardstick in words: the rule of thumb the run measured itself against on its training
    fleet, called today's best only where it is the report's best (one best rule of thumb a page)."""
    if not target:
        return "the yardstick of the run"
    if data.best is not None and target == data.best.policy and data.elsewhere is None:
        return f"today's best rule of thumb ({plain_name(target)})"
    return f"{plain_name(target)}, the rule of thumb the run measured itself against on its training fleet"


_NUMBER = (int, float)
_SCENARIO_FIELDS = {"fleet": str, "basis": str, "rule": _NUMBER, "episodes": int, "sized_usd": _NUMBER,
                    "certified_least_scale": _NUMBER, "planner_least_scale": (*_NUMBER, type(None)),
                    "planner_least_breaches": (dict, type(None)), "levels": list}
_LEVEL_FIELDS = {"scale": _NUMBER, "budget_usd": _NUMBER, "deck_good_by_year": list, "deck_poor_by_year": list,
                 "breach_any_year": _NUMBER, "breach_three_running": _NUMBER, "agency_usd_pv": _NUMBER,
                 "user_usd_pv": _NUMBER}


def read_scenarios(path: Path) -> dict:
    """scenarios.json as ``bridgefleet scenarios`` writes it (:func:`bridgefleet.evaluation.scenario_tables.summary`),
    checked for every field the report reads, before any work.

    Raises:
        ValueError: not JSON, or a field missing or of the wrong kind, named with the file (one line).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # ValueError: JSON's, and a 5,000-digit number
        reason = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
        raise ValueError(f"{path}: not the JSON bridgefleet scenarios writes ({reason})") from None

    def check(obj: Any, fields: dict, name: str) -> None:
        if not isinstance(obj, dict):
            raise ValueError(f"{path}: {name} is not an object: write it again with bridgefleet scenarios")
        for field, kind in fields.items():
            value = obj.get(field)
            if field not in obj or not isinstance(value, kind) or isinstance(value, bool):
                words = ("a list" if kind is list else "text" if kind is str else "a whole number" if kind is int
                         else "an object or null" if isinstance(kind, tuple) and dict in kind
                         else "a number")
                raise ValueError(f"{path}: {name}: field {field!r} is missing or not {words}: write it again with "
                                 "bridgefleet scenarios")
            if isinstance(value, _NUMBER) and not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{path}: {name}: field {field!r} is {value!r}, not a finite number ≥ 0: write it "
                                 "again with bridgefleet scenarios")

    def numbers(series: Any, name: str, years: int | None) -> int:
        if not isinstance(series, list) or not series or not all(
                isinstance(v, _NUMBER) and not isinstance(v, bool) and 0 <= v <= 1 for v in series) or (
                years is not None and len(series) != years):
            raise ValueError(f"{path}: {name} is not one share (0 to 1) a year for every level: write it again with "
                             "bridgefleet scenarios")
        return len(series)

    check(data, _SCENARIO_FIELDS, "the file")
    if not (0 < data["rule"] <= 1 and data["sized_usd"] > 0 and data["episodes"] >= 1):
        raise ValueError(f"{path}: the rule {data['rule']!r} is not a share in (0, 1], or the sized budget "
                         f"{data['sized_usd']!r} USD or the episodes {data['episodes']!r} not above 0: write it "
                         "again with bridgefleet scenarios")
    if not data["levels"]:
        raise ValueError(f"{path}: no budget levels: write it again with bridgefleet scenarios")
    years = None
    for k, level in enumerate(data["levels"], start=1):
        check(level, _LEVEL_FIELDS, f"level {k}")
        years = numbers(level["deck_good_by_year"], f"level {k}: deck_good_by_year", years)
        years = numbers(level["deck_poor_by_year"], f"level {k}: deck_poor_by_year", years)
        if "agent" in data["levels"][0]:  # the plot draws every level's agent
            check(level.get("agent"), {"deck_poor_by_year": list}, f"level {k}: agent")
            numbers(level["agent"]["deck_poor_by_year"], f"level {k}: agent's deck_poor_by_year", years)
    if data["planner_least_breaches"] is not None:
        check(data["planner_least_breaches"], {"any_year": _NUMBER, "three_consecutive": _NUMBER},
              "planner_least_breaches")
    if data.get("treatment_in_annual_budgets") is not None:  # absent from files written before it
        check(data["treatment_in_annual_budgets"], dict.fromkeys(LUMP_KEYS, _NUMBER), "treatment_in_annual_budgets")
    check_terms(data, path)  # the budget section's agency terms (absent from files written before them)
    return data


def _lumps_sentence(scenarios: dict | None) -> str | None:
    """:func:`lumps_sentence` from scenarios.json's figures, None without them."""
    lumps = (scenarios or {}).get("treatment_in_annual_budgets")
    return None if lumps is None else lumps_sentence({k: lumps[k] for k in LUMP_KEYS}, bool(scenarios.get("exact")))


def _run_inventory(run_dir: Path) -> str | None:
    """The inventory a run was trained on (its config.yaml), None for a fleet model's fleets."""
    path = run_dir / "config.yaml"
    cfg = read_yaml(path) if path.is_file() else None
    return ((cfg or {}).get("fleet") or {}).get("inventory")


def _check_same_fleet(scenario_fleet: str, inventory: str | None, folder: str | Path) -> None:
    """Refuse scenarios of another fleet than the report's: an inventory's must be of the same file, a fleet
    model's of a fleet model.

    Raises:
        ValueError: naming both fleets.
    """
    synthetic = scenario_fleet.startswith("one fleet of")

    def file_name(name: str) -> str:  # a bundled inventory by its name or by its file's path
        return BUNDLED.get(name, Path(name).name)

    same = synthetic if inventory is None else (not synthetic and file_name(scenario_fleet) == file_name(inventory))
    if not same:
        raise ValueError(f"--scenarios {folder}: its levels are of {scenario_fleet or 'an unnamed fleet'}, this "
                         f"report is of {inventory or 'the run’s fleet model'}: run bridgefleet scenarios on the same "
                         "fleet")
