"""Budgets held by who holds them (issue 77 item 5): an inventory's owners are its agencies, each with the budget
sized from its own bridges; the knapsack and the simulator spend each owner's money on its own bridges only; the
exact bound's rows are one per agency and year."""

from __future__ import annotations

import contextlib
import io
import itertools

import numpy as np
import pytest
import yaml
from test_exact_dp import joint_optimum, random_model

from bridgefleet.cli import main
from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.config.training import TrainConfig
from bridgefleet.inventory.agencies import ALL_BRIDGES, NOT_CODED, owner_labels, owner_name
from bridgefleet.inventory.fleet import resolve_fleet, set_budget
from bridgefleet.planning.exact_bound import lagrangian_bound
from bridgefleet.planning.exact_dp import solve
from bridgefleet.planning.exact_planner import fleet_model
from bridgefleet.planning.knapsack import allocate
from bridgefleet.sim.reference import reference_year
from bridgefleet.sim.simulator import FleetSimulator

# Five bridges, three owners: 01 (B1 100 m², B2 300 m²), 02 (B3 200 m², B4 400 m²), 66 (B5 500 m²); no state code,
# so every cost factor is 1.
TABLE = """id,cond,aadt,area,age,fc,owner
B1,6,20000,100,30,U,01
B2,5,15000,300,40,R,1
B3,7,800,200,20,U,02
B4,4,500,400,50,R,02
B5,6,3000,500,35,U,66
"""
MAPPING = {"id": "id", "condition": "cond", "aadt": "aadt", "deck_area": "area", "age": "age",
           "cluster": {"column": "fc", "urban": ["U"], "rural": ["R"]}, "owner": "owner"}
SIZED = 2497.0 / 75.0
"""USD a year per m² of deck at cost factor 1: the default model's replacement unit cost (USD 2,497/m²) over the
75-year design life (budget_share_of_replacement 1/75)."""


def _fleet(tmp_path, table: str = TABLE, mapping: dict | None = None, **changes) -> FleetConfig:
    (tmp_path / "t.csv").write_text(table, encoding="utf-8")
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(mapping or MAPPING), encoding="utf-8")
    return FleetConfig.named("components-2026", inventory=str(tmp_path / "t.csv"),
                             inventory_mapping=str(tmp_path / "m.yaml"), **changes)


def test_three_owners_each_sized_from_its_own_bridges(tmp_path):
    cfg, fleet = resolve_fleet(_fleet(tmp_path))
    assert cfg.agency_labels == ("01 state highway agency", "02 county highway agency", "66 National Park Service")
    # by hand: 01 owns 100 + 300 = 400 m², 02 200 + 400 = 600 m², 66 500 m², each × USD 2,497 / 75 a year
    np.testing.assert_allclose(cfg.budgets_usd, [400 * SIZED, 600 * SIZED, 500 * SIZED], rtol=1e-12)
    assert cfg.budgets_usd[0] == pytest.approx(13_317.333333, abs=1e-5)
    assert sum(cfg.budgets_usd) == pytest.approx(49_940.0, rel=1e-12)
    # columns: urban by decreasing AADT (B1, B5, B3), then rural in file order (B2, B4)
    assert list(fleet[0]["bridge_id"]) == ["B1", "B5", "B3", "B2", "B4"]
    sim = FleetSimulator(cfg, 1, fleet)
    assert sim.agency.tolist() == [0, 2, 1, 0, 1]
    np.testing.assert_allclose(sim.annual_budget, [400 * SIZED, 600 * SIZED, 500 * SIZED], rtol=1e-12)
    half = set_budget(cfg, scale=0.5)  # a budget level keeps each owner's share
    np.testing.assert_allclose(half.budgets_usd, [200 * SIZED, 300 * SIZED, 250 * SIZED], rtol=1e-12)
    np.testing.assert_allclose(set_budget(cfg, usd=3000.0).budgets_usd, [800.0, 1200.0, 1000.0], rtol=1e-12)


def test_each_owner_funds_its_own_bridges_worst_first(tmp_path):
    """Deck preservation (USD 70/m²) requested on every bridge, at the sized budgets 13,317 / 19,976 / 16,647: 01
    takes B2 first (rating 5, USD 21,000: does not fit), then B1 (6, USD 7,000: fits); 02 takes B4 (4, USD 28,000: does
    not fit), then B3 (7, USD 14,000: fits); 66 cannot pay B5 (USD 35,000). Pooled as urban (B1, B5, B3) and rural
    (B2, B4) the same money would fund other bridges."""
    cfg, fleet = resolve_fleet(_fleet(tmp_path))
    sim = FleetSimulator(cfg, 1, fleet)
    sim.reset(None, [0])
    res = sim.step_requests(np.ones((1, 5), dtype=np.int64))
    assert res.actions[0].tolist() == [1, 0, 1, 0, 0]  # B1, B5, B3, B2, B4
    assert res.deferred[0].tolist() == [False, True, False, True, True]
    np.testing.assert_allclose(res.cost[0], [7_000.0, 14_000.0, 0.0], atol=1e-6)
    # carry-over: each owner keeps its own unspent money
    np.testing.assert_allclose(sim.budget[0], 2 * np.array([400, 600, 500]) * SIZED - [7_000, 14_000, 0], rtol=1e-12)
    # the plain-Python oracle, given the owners, funds the same
    _, deferred, spent = reference_year([6.5, 6.5, 7.5, 5.5, 4.5], [30.0] * 5, [0.0] * 5, [0.04] * 5,
                                        [100.0, 500.0, 200.0, 300.0, 400.0], [1.0] * 5, [1.0] * 5, [7.0] * 5,
                                        [1] * 5, [1.0] * 5, tuple(cfg.budgets_usd), 3, cfg, agency=[0, 2, 1, 0, 1])
    assert deferred == [False, True, False, True, True]
    np.testing.assert_allclose(spent, [7_000.0, 14_000.0, 0.0])


def test_an_inventory_without_owners_is_one_agency(tmp_path):
    table = "\n".join(",".join(r.split(",")[:-1]) for r in TABLE.strip().splitlines()) + "\n"
    mapping = {k: v for k, v in MAPPING.items() if k != "owner"}
    cfg, fleet = resolve_fleet(_fleet(tmp_path, table, mapping))
    assert cfg.agency_labels == (ALL_BRIDGES,)
    assert cfg.budgets_usd == pytest.approx((1500 * SIZED,), rel=1e-12)
    assert FleetSimulator(cfg, 1, fleet).agency.tolist() == [0] * 5


def test_urban_rural_keeps_the_two_agencies(tmp_path):
    """``agencies: urban_rural`` (and the plan's fleet agents, which force it) keep today's split: urban B1, B5, B3
    (800 m²), rural B2, B4 (700 m²)."""
    cfg, fleet = resolve_fleet(_fleet(tmp_path, agencies="urban_rural"))
    assert cfg.agency_labels == ("urban", "rural")
    np.testing.assert_allclose(cfg.budgets_usd, [800 * SIZED, 700 * SIZED], rtol=1e-12)
    assert FleetSimulator(cfg, 1, fleet).agency.tolist() == [0, 0, 0, 1, 1]
    train = TrainConfig(agent="fleet", fleet=_fleet(tmp_path))
    assert train.fleet.agencies == "urban_rural"
    assert TrainConfig(agent="bridge", fleet=_fleet(tmp_path)).fleet.agencies == "owners_by_locality"
    owners = resolve_fleet(_fleet(tmp_path))
    with pytest.raises(ValueError, match="urban and the rural agency's budgets"):
        FleetSimulator(owners[0], 1, owners[1]).observe()
    bare = ({k: v for k, v in owners[1][0].items() if k != "agency"}, owners[1][1])
    with pytest.raises(ValueError, match=r"names 3 agencies .* but the fleet has no agency index"):
        FleetSimulator(owners[0], 1, bare)


@pytest.mark.default_model
def test_agencies_setting():
    assert FleetConfig.default_model().agencies == "owners_by_locality"
    assert FleetConfig.named("plan-2025").agencies == "urban_rural"
    assert FleetConfig.from_dict({"component_model": "massachusetts-2026"}).agencies == "urban_rural"  # before it
    with pytest.raises(ConfigError, match="agencies = 'owner': must be owners_by_locality or owners or urban_rural"):
        FleetConfig.default_model(agencies="owner")
    with pytest.raises(ConfigError, match="owners needs the component model"):
        FleetConfig.named("continuous-2026", agencies="owners")
    with pytest.raises(ConfigError, match="owners_by_locality needs the component model"):
        FleetConfig.named("continuous-2026", agencies="owners_by_locality")
    with pytest.raises(ConfigError, match="unknown FleetConfig field"):
        FleetConfig.from_dict({"agency_names": ["a"]})
    assert "agency_names" not in FleetConfig.default_model().to_dict()
    assert FleetConfig.default_model().model_name() == FleetConfig.default_model(agencies="urban_rural").model_name()


def test_each_county_holds_its_own_budget_and_runs_written_before_keep_one_agency_for_the_counties(tmp_path):
    """Item 22 code 02 (county highway agency) in counties 003 and 7: two agencies, each sized from its own bridges
    (B3 200 m² in county 003, B4 400 m² in 007); ``agencies: owners`` (the value runs written before 2026-12-07 keep)
    one agency for both, as before. A state highway agency's bridges in two counties stay one agency."""
    table = TABLE.replace("id,cond,aadt,area,age,fc,owner", "id,cond,aadt,area,age,fc,owner,county")
    rows = table.splitlines()
    table = "\n".join([rows[0]] + [r + "," + c for r, c in zip(rows[1:], ["001", "005", "003", "7", "003"],
                                                               strict=True)]) + "\n"
    mapping = {**MAPPING, "county": "county"}
    cfg, fleet = resolve_fleet(_fleet(tmp_path, table, mapping))
    assert cfg.agency_labels == ("01 state highway agency", "02 county highway agency, county 003",
                                 "02 county highway agency, county 007", "66 National Park Service")
    np.testing.assert_allclose(cfg.budgets_usd, [400 * SIZED, 200 * SIZED, 400 * SIZED, 500 * SIZED], rtol=1e-12)
    # columns B1, B5, B3, B2, B4: B3 the county 003 agency's, B4 the county 007 one's
    assert FleetSimulator(cfg, 1, fleet).agency.tolist() == [0, 3, 1, 0, 2]
    old, _ = resolve_fleet(_fleet(tmp_path, table, mapping, agencies="owners"))
    assert old.agency_labels == ("01 state highway agency", "02 county highway agency", "66 National Park Service")
    np.testing.assert_allclose(old.budgets_usd, [400 * SIZED, 600 * SIZED, 500 * SIZED], rtol=1e-12)
    # a county agency in one county keeps its plain name (a county's own file); "5" and "005" are one county, a
    # blank one apart from it (plain name); towns and cities by place (item 4) where they lie in several
    owner, state = np.array(["L01", "l01", "L01", "02", "03", "04", "04", "04"]), np.array([""] * 8)
    county = np.array(["5", "005", "", "005", "005", "1", "1", "1"])
    place = np.array(["", "", "", "", "7", "50000", "123", "50000"])
    assert owner_labels(owner, state, county, place).tolist() == [
        "L01 county highway agency, county 005", "L01 county highway agency, county 005",
        "L01 county highway agency, no county coded", "02 county highway agency", "03 town or township highway agency",
        "04 city or municipal highway agency, place 50000", "04 city or municipal highway agency, place 00123",
        "04 city or municipal highway agency, place 50000"]
    assert owner_labels(owner, state, np.array(["5", "5", "000", "", "", "", "", ""]))[:3].tolist() == [
        "L01 county highway agency, county 005", "L01 county highway agency, county 005",
        "L01 county highway agency, no county coded"]
    assert owner_labels(owner[:2], state[:2], np.array(["5", "005"])).tolist() == ["L01 county highway agency"] * 2


def test_owner_labels():
    assert owner_name("1") == "01 state highway agency"
    assert owner_name("66") == "66 National Park Service"
    assert owner_name("58") == "58 (not a Coding Guide item 22 code)"
    assert owner_name("S01") == "S01 state transportation department"
    assert owner_name("L07") == "L07 other local agency"
    assert owner_name("FL12") == "FL12 federal agency"
    assert owner_name("City of X") == "City of X"
    assert owner_name(" ") == NOT_CODED
    labels = owner_labels(np.array(["01", "02", "01"]), np.array(["11", "11", "24"]))
    assert labels.tolist() == ["01 state highway agency, state 11", "02 county highway agency, state 11",
                               "01 state highway agency, state 24"]
    assert owner_labels(np.array(["", ""]), np.array(["", ""])).tolist() == [ALL_BRIDGES, ALL_BRIDGES]


def _best(ben: np.ndarray, cost: np.ndarray, budget: float) -> float:
    """The most benefit one agency's bridges ben, cost (n, 5) can have within ``budget``, by enumeration."""
    best = 0.0
    for acts in itertools.product(range(5), repeat=len(ben)):
        c = sum(cost[k, a] for k, a in enumerate(acts))
        if c <= budget + 0.01:
            best = max(best, sum(ben[k, a] for k, a in enumerate(acts)))
    return best


def test_the_knapsack_never_spends_one_owners_money_on_anothers_bridge():
    """Three owners' bridges interleaved; owner 1 has no money although its bridges have the largest benefits: none
    of them is funded, owners 0 and 2 each spend within their own budget, each at the optimum of its own bridges
    alone (by enumeration)."""
    rng = np.random.default_rng(5)
    agency = np.array([0, 1, 2, 0, 1, 2, 0, 2])
    b_n = len(agency)
    cost = np.concatenate([np.zeros((b_n, 1)), np.sort(rng.integers(1, 40, (b_n, 4)), axis=1)], axis=1).astype(float)
    ben = np.concatenate([np.zeros((b_n, 1)), np.sort(rng.random((b_n, 4)) * 10, axis=1)], axis=1)
    ben[agency == 1, 1:] *= 100.0  # the broke owner's bridges are worth the most
    budget = np.array([[30.0, 0.0, 55.0]])
    out = np.zeros((1, b_n), dtype=np.int64)
    allocate(ben[None], cost[None], agency, budget, out)
    act = out[0]
    assert (act[agency == 1] == 0).all()
    spent = np.bincount(agency, cost[np.arange(b_n), act], 3)
    assert (spent <= budget[0] + 0.01).all()
    for g in (0, 2):
        mine = agency == g
        got = ben[np.flatnonzero(mine), act[mine]].sum()
        assert got == pytest.approx(_best(ben[mine], cost[mine], budget[0, g]), rel=1e-12)
    assert spent[0] > 0 and spent[2] > 0


def test_exact_bound_of_two_owners_equals_every_joint_policy():
    """Two bridges, each its owner's: owner 0's budget pays for anything, owner 1's is below its bridge's cheapest
    treatment. Each owner's rows hold its own money, so the bound is bridge 0's optimum alone plus bridge 1's doing
    nothing, the best of every joint policy (enumerated, adaptive ones and carried money included), with and without
    carry-over; pooled in one agency the money would treat bridge 1 too, a higher optimum."""
    rng = np.random.default_rng(28)  # a fleet where treating either bridge is worth its cost
    model = random_model(rng, 2, 3, a_n=3, int_cost=True)
    t_n = 4
    owners = np.array([0, 1])
    budget = np.stack([np.full(t_n, 20.0), np.full(t_n, model.cost[1, 1:].min() * 0.5 / t_n)])
    alone = solve(model.subset(np.array([0])), horizon=t_n).value.sum()
    nothing = solve(model.subset(np.array([1])), np.full((1, t_n), np.inf), horizon=t_n).value.sum()
    for carry in (False, True):
        enumerated = joint_optimum(model, owners, budget, carry)
        assert enumerated == pytest.approx(alone + nothing, rel=1e-10, abs=1e-10)
        res = lagrangian_bound(model, owners, budget, carry, tol=1e-9)
        assert res.bound == pytest.approx(enumerated, rel=1e-9, abs=1e-9)
        assert (res.spend[1] == 0).all()
        pooled = joint_optimum(model, np.array([0, 0]), budget.sum(0, keepdims=True), carry)
        assert pooled > enumerated + 1e-6


def test_the_exact_planners_rows_are_the_owners(tmp_path):
    """The exact planner's fleet: one budget row per owner and year (A = 3 per fleet), each bridge on its owner's."""
    cfg, fleet = resolve_fleet(_fleet(tmp_path, horizon_years=3))
    sim = FleetSimulator(cfg, 2, fleet)
    sim.reset(None, [0, 1])
    model, agency, budget = fleet_model(sim, np.arange(2))
    assert len(model.kind) == 10
    assert agency.tolist() == [0, 2, 1, 0, 1, 3, 5, 4, 3, 4]
    np.testing.assert_allclose(budget[:, 0], np.tile([400 * SIZED, 600 * SIZED, 500 * SIZED], 2), rtol=1e-12)
    assert budget.shape == (6, 3)


def test_inventory_prints_dc_2019s_owners_and_budgets():
    """dc-2019's OWNER_022 codes: 01 (205 bridges), 04 (1), 21 (1), 25 (1), 58 (3), 66 (33). By hand from the file
    (item 49 × item 52, m², summed by owner; cost factor 1 in DC) × 2,497 / 75: 01 502,452.73 m² → USD 16,728,326;
    04 4,093.6 → 136,290; 21 792.1 → 26,372; 25 7,766.4 → 258,569; 58 1,700.5 → 56,615; 66 49,736.0 → 1,655,877;
    total 18,862,049 (the one rural bridge is the National Park Service's: no agency of its own)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["inventory", "dc-2019"]) == 0
    text = out.getvalue()
    want = [("01 state highway agency", 205, 205, 0, "16,728,326"),
            ("04 city or municipal highway agency", 1, 1, 0, "136,290"),
            ("21 other state agencies", 1, 1, 0, "26,372"), ("25 other local agencies", 1, 1, 0, "258,569"),
            ("58 (not a Coding Guide item 22 code)", 3, 3, 0, "56,615"),
            ("66 National Park Service", 33, 32, 1, "1,655,877"), ("total", 244, 243, 1, "18,862,049")]
    assert "Agencies holding budgets (owner codes, NBI item 22 / SNBI BCL01): 6;" in text
    rows = {line.split("  ")[1].strip(): line.split() for line in text.splitlines() if line.startswith("  ")
            and line.split()[-1].replace(",", "").isdigit() and len(line.split()) >= 5}
    for name, n, urban, rural, usd in want:
        assert rows[name][-4:] == [str(n), str(urban), str(rural), usd], name


def test_an_nbi_citys_bridges_are_one_agency_per_place_and_dc_keeps_its_six_owners(tmp_path):
    """NBI item 4: dc-2019 as bundled keeps its six owners (its one 04 bridge lies in one place); with two more 04
    bridges in place 12345 and two 02 bridges in counties 003 and 005, the city agencies split by place and the
    county ones by county, each sized from its own bridges."""
    import csv

    from bridgefleet.inventory.load import bundled_path

    cfg, _ = resolve_fleet(FleetConfig.named("components-2026").with_inventory("dc-2019"))
    assert len(cfg.agency_labels) == 6 and "04 city or municipal highway agency" in cfg.agency_labels
    with open(bundled_path("dc-2019"), newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    owner, county, place = (head.index(c) for c in ("OWNER_022", "COUNTY_CODE_003", "PLACE_CODE_004"))
    city = next(r for r in rows[1:] if r[owner].strip() == "04")
    for r, (o, c, p) in zip([r for r in rows[1:] if r[owner].strip() == "01"][:4],
                            [("04", "001", "12345"), ("04", "001", "12345"), ("02", "003", ""), ("02", "005", "")],
                            strict=True):
        r[owner], r[county], r[place] = o, c, p
    path = tmp_path / "dc.txt"
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    cfg, _ = resolve_fleet(FleetConfig.named("components-2026").with_inventory(str(path)))
    local = [n for n in cfg.agency_labels if n[:2] in ("02", "04")]
    # DC's own 04 bridge is coded place 00000 (not in a census place): an agency apart from place 12345's
    assert city[place].strip() == "00000"
    assert local == ["02 county highway agency, county 003", "02 county highway agency, county 005",
                     "04 city or municipal highway agency, no place coded",
                     "04 city or municipal highway agency, place 12345"]
    assert len(cfg.agency_labels) == 6 + 3
