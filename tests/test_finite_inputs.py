"""Issue 79, kind 3: every number a user gives stays finite where it is used — each checked against its physical
range and unit (bridgefleet.config.quantities), in the precision it is stored in, with a range a user can read and
the key or option the user gave named (never an internal field, inf or nan)."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from bridgefleet.cli import main
from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.config.quantities import INVENTORY, Quantity, yaml_number
from bridgefleet.config.training import TrainConfig
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.inventory.load import read_csv_inventory, read_nbi

MAPPING = {"id": "id", "condition": "cond", "year_built": "built", "year": 2019, "deck_area": "area",
           "aadt": "aadt", "cluster": {"column": "cls", "urban": ["u"], "rural": ["r"]}}
DECK_RANGE = ("must be in [1, 1,000,000] m² (a bridge deck; the NBI's bridges span over 6.1 m, the largest deck, the "
              "Lake Pontchartrain Causeway's, is about 800,000 m²)")
CF_RANGE = "must be in [0.01, 100] (the state's unit cost over DC's; the 2017 costs run 0.57 to 1.33)"


def _table(tmp_path: Path, last: str = "C,6,1990,150,800,r", n: int = 12) -> Path:
    """n good bridges (the first urban) and ``last`` on line n + 2."""
    p = tmp_path / "table.csv"
    p.write_text("id,cond,built,area,aadt,cls\n" + "".join(f"B{i},7,{1950 + i},100,1000,{'u' if i == 0 else 'r'}\n"
                                                         for i in range(n)) + last + "\n")
    return p


def _mapping(tmp_path: Path, text: str) -> Path:
    m = tmp_path / "mapping.yaml"
    m.write_text(yaml.safe_dump(MAPPING) + text)
    return m


def test_the_helper_states_range_unit_and_the_32_bit_precision():
    q = Quantity(0.0, 100.0, "", "why", low_open=True, float32=True)
    assert q.problem(50.0) is None and q.problem(100.0) is None
    assert q.problem(1e300) == "must be in (0, 100] (why)"
    assert q.problem(float("nan")) == q.problem(float("inf")) == q.problem("x") == q.problem(True) == q.need()
    # 1e-300 is above 0, but 0 as the 32-bit float an inventory stores it in
    assert q.problem(1e-300) == "must be in (0, 100] (why); it is 0 as the 32-bit float it is stored in"
    assert Quantity(1, 99, whole=True).problem(2.5) == "must be a whole number in [1, 99]"
    assert Quantity(0, 1, high_open=True).range_text() == "in [0, 1)"
    # every inventory quantity's range is finite as a 32-bit float
    assert all(np.isfinite(np.float32(q.high)) for q in INVENTORY.values())
    # PyYAML reads 1e300 as text (YAML 1.1); YAML 1.2, and so the checks, read it as a number
    assert yaml.safe_load("a: 1e300")["a"] == "1e300" and yaml_number("1e300") == 1e300
    assert yaml_number("5") == 5 and yaml_number("auto") == "auto" and yaml_number("1_000") == "1_000"


@pytest.mark.parametrize(("text", "line"), [
    ("cost_factor: 1e300\n", f"mapping key 'cost_factor' = 1e300: {CF_RANGE}"),  # the instance
    ("cost_factor: 1.0e-300\n", f"mapping key 'cost_factor' = 1e-300: {CF_RANGE}"),  # below the 0.01 floor
    ("cost_factor: 1.0e+400\n", f"mapping key 'cost_factor' = 1.0e+400: {CF_RANGE}"),  # as written, not inf
    ("state_code: 1e300\n", "mapping key 'state_code' = 1e300: must be a whole number in [1, 99] (an FHWA state "
                            "code, NBI item 1)"),
    ("aadt: 1e39\n", "mapping key 'aadt' = '1e39': traffic (AADT) 1e39: must be a whole number in [0, 999,999] "
                     "vehicles/day (a count of vehicles; NBI item 29 codes 6 digits; the busiest bridges carry about "
                     "300,000)"),
    ("deck_area: 2000000\narea_scale: 1\n", f"mapping key 'deck_area' = 2000000: deck area 2,000,000 m²: "
                                            f"{DECK_RANGE}"),
])
def test_a_mapping_constant_out_of_its_range_is_refused_in_one_line_naming_the_key(tmp_path, capsys, text, line):
    mapping = MAPPING | yaml.safe_load(text)
    m = tmp_path / "mapping.yaml"
    m.write_text(yaml.safe_dump({k: v for k, v in mapping.items() if k not in yaml.safe_load(text)}) + text)
    table = _table(tmp_path)
    assert main(["inventory", str(table), "--mapping", str(m)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"bridgefleet inventory: error: {m}: {line}\n" and "inf" not in captured.out


def test_a_deck_area_of_2e6_m2_is_dropped_with_its_reason_by_both_readers(tmp_path):
    inv = read_csv_inventory(_table(tmp_path, "C,6,1990,2000000,800,r"), MAPPING)
    assert inv.kept == 12 and float(inv.deck_area.max()) == 100.0
    assert inv.dropped == [(14, f"bad value: column area = '2000000': deck area 2,000,000 m²: {DECK_RANGE}")]
    # the same bridge in an NBI file, as DECK_AREA and as length 2,000 m × width 1,000 m
    from test_inventory import nbi_text, write

    for row, column, value in (({"DECK_AREA": "2e6"}, "DECK_AREA", "2e6"),
                               ({"DECK_AREA": "", "STRUCTURE_LEN_MT_049": "2000", "DECK_WIDTH_MT_052": "1000"},
                                "STRUCTURE_LEN_MT_049", "2000")):
        nbi = read_nbi(write(tmp_path, nbi_text([{}] * 12 + [row])))
        assert nbi.kept == 12
        assert nbi.dropped == [(14, f"bad value: column {column} = {value!r}: deck area 2,000,000 m²: {DECK_RANGE}")]


def test_an_aadt_infinite_as_a_32_bit_float_is_dropped_with_its_reason(tmp_path):
    # 1e39 vehicles/day is finite in float64 but inf in the inventory's float32 arrays: dropped, not inf
    inv = read_csv_inventory(_table(tmp_path, "C,6,1990,150,1e39,r"), MAPPING)
    assert inv.kept == 12 and np.isfinite(inv.aadt).all()
    assert inv.dropped == [(14, "bad value: column aadt = '1e39': traffic (AADT) 1e39: must be a whole number in "
                                "[0, 999,999] vehicles/day (a count of vehicles; NBI item 29 codes 6 digits; the "
                                "busiest bridges carry about 300,000)")]


def test_annual_budget_1e300_in_a_fleet_yaml_is_refused_naming_the_key(tmp_path, capsys):
    out = tmp_path / "plan.csv"
    for text, line in (
        ("annual_budget_usd: 1e300\n", "annual_budget_usd = 1e300: must be in [0, 1e15] USD a year (a "
                                       "municipality's maintenance budget; sums of larger ones overflow)"),
        ("unit_costs_usd_per_m2: [0, 70, 131, 1698, 1.0e+300]\n",
         "unit_costs_usd_per_m2[4] = 1e300: must be in [0, 100,000] USD/m² (an action's cost per m² of deck; a new "
         "bridge costs about USD 2,500/m²)"),
        ("aadt_exponent: -1\n", "aadt_exponent = -1: must be in [0, 3] (the traffic weight's exponent: (AADT / "
                                "aadt_reference) ** it; a negative one makes a bridge without traffic weigh "
                                "infinitely)"),
    ):
        cfg = tmp_path / "fleet.yaml"
        cfg.write_text(text)
        assert main(["plan", "--policy", "lagrangian", "--config", str(cfg), "--years", "2", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err == f"bridgefleet plan: error: {cfg}: {line}\n" and "FleetConfig" not in err
        assert not out.exists()  # nothing written


def test_the_budget_sized_from_a_fleet_is_refused_above_1e15_naming_the_keys_not_a_field(tmp_path):
    # synthetic: 10,000,000 urban bridges of 1,000 m² on average and 80 rural of 450 m², USD 100,000/m², all of it
    # a year: 1e7 × 1,000 × 1e5 + 80 × 450 × 1e5 = USD 1,000,003,600,000,000
    with pytest.raises(ConfigError) as exc:
        FleetConfig(n_urban=10_000_000, unit_costs_usd_per_m2=(0, 70, 131, 1698, 1e5), budget_share_of_replacement=1)
    assert str(exc.value) == (
        "the annual budget sized from the fleet, budget_share_of_replacement 1 × the replacement value of its "
        "10,000,080 bridges at unit_costs_usd_per_m2[4] = 100000 USD/m², is USD 1,000,003,600,000,000 a year, more "
        "than the USD 1e15 a budget may be: lower one of them, or give annual_budget_usd")
    # an inventory: 101 bridges of 1,000,000 m² at a cost factor of 100, USD 100,000/m² all a year:
    # 101 × 1e6 × 100 × 1e5 = USD 1,010,000,000,000,000
    table = _table(tmp_path, "C,6,1990,1000000,800,r", n=0)
    table.write_text(table.read_text().replace("C,6,1990,1000000,800,r\n", "".join(
        f"B{i},7,1990,1000000,800,{'u' if i == 0 else 'r'}\n" for i in range(101))))
    m = _mapping(tmp_path, "cost_factor: 100\n")
    fleet = FleetConfig(inventory=str(table), inventory_mapping=str(m), unit_costs_usd_per_m2=(0, 70, 131, 1698, 1e5),
                        budget_share_of_replacement=1)
    with pytest.raises(ValueError) as exc:
        resolve_fleet(fleet)
    assert str(exc.value) == (
        f"{table}: the annual budget sized from its 101 bridges, budget_share_of_replacement 1 × the replacement "
        "value, USD 1,010,000,000,000,000 (deck area × cost factor × unit_costs_usd_per_m2[4] = 100000 USD/m²), is "
        "USD 1,010,000,000,000,000 a year, more than the USD 1,000,000,000,000,000 a budget may be: lower "
        "budget_share_of_replacement, or check the inventory's deck areas and cost factor")
    # at the default unit cost the same inventory sizes a finite budget: 1/75 × 2,497 × 1.01e10 USD
    config, _ = resolve_fleet(fleet.replace(unit_costs_usd_per_m2=(0, 70, 131, 1698, 2497),
                                            budget_share_of_replacement=1 / 75))
    assert sum(config.budgets_usd) == pytest.approx(2497 * 1.01e10 / 75)


@pytest.mark.parametrize(("text", "line"), [
    ("lr: 1e300\n", "training option lr = 1e300: must be in [1e-8, 1] (Adam's learning rate; default 1e-4; a smaller "
                    "step is lost in 32-bit weights)"),
    ("reward_scale: 1e300\n", "training option reward_scale = 1e300: must be in [1e-9, 1,000,000] (the rewards' "
                              "multiplier; default 0.01)"),
    ("agent: bridge\nteacher: lagrangian\nteacher_levels: [1, 1.0e+300]\n",
     "training option teacher_levels[1] = 1e300: must be in [0.01, 100] (a multiple of the sized budget)"),
    ("episodes: 1000000000000000000000\n", "training option episodes = 1.000e21: must be at most 1e12 in size"),
])
def test_a_training_option_out_of_its_range_is_refused_naming_the_option_and_the_file(tmp_path, text, line):
    cfg = tmp_path / "train.yaml"
    cfg.write_text(text)
    from bridgefleet.config.presets import resolve_config

    with pytest.raises(ConfigError) as exc:
        resolve_config(None, cfg)
    assert str(exc.value) == f"{cfg}: {line}"


def test_yaml_exponents_are_numbers_in_range(tmp_path):
    # 5e6 and 1e-4 are numbers a user types: read as such, not refused as text
    assert FleetConfig.from_dict({"annual_budget_usd": "5e6"}).annual_budget_usd == 5e6
    assert TrainConfig.from_dict({"lr": "1e-4"}).lr == 1e-4
