"""The component fleet model: loading and checking a model, treatments, deterioration, the simulator on it."""

import re

import numpy as np
import pytest
import yaml

from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.sim import components
from bridgefleet.sim.components import ComponentModel, R
from bridgefleet.sim.simulator import FleetSimulator


def _down(p: float) -> list[list[float]]:
    """Each rating drops one level with probability p (0 stays)."""
    m = np.eye(R) * (1 - p)
    m[np.arange(1, R), np.arange(R - 1)] = p
    m[0, 0] = 1.0
    return m.tolist()


def _to(level: int) -> list[list[float]]:
    """Every rating goes to ``level``."""
    m = np.zeros((R, R))
    m[:, level] = 1.0
    return m.tolist()


def _up(k: int) -> list[list[float]]:
    m = np.zeros((R, R))
    m[np.arange(R), np.minimum(np.arange(R) + k, R - 1)] = 1.0
    return m.tolist()


def small_model() -> dict:
    """A hand-made model: deck drops with 0.3 a year (0.1 protected), superstructure 0.2, substructure 0.1."""
    return {
        "name": "small",
        "deterioration": {"deck": _down(0.3), "superstructure": _down(0.2), "substructure": _down(0.1),
                          "culvert": _down(0.2), "deck_protected": _down(0.1)},
        "protection_years": 4,
        "actions": [
            {"name": "do_nothing"},
            {"name": "deck_preservation", "protect": "set", "codes": {"deck": "DK4"}},
            {"name": "component_rehabilitation", "lowest_only": True,
             "treats": {"deck": _up(2), "superstructure": _up(2), "substructure": _up(2), "culvert": _up(2)},
             "codes": {"deck": "DK2", "superstructure": "SP2", "substructure": "SB2"}},
            {"name": "major_rehabilitation", "treats": {"deck": _to(8), "superstructure": _up(3),
                                                        "substructure": _up(3), "culvert": _up(3)},
             "codes": {"deck": "DK1", "superstructure": "SP2", "substructure": "SB2"}},
            {"name": "replacement", "treats": {"deck": _to(9), "superstructure": _to(9), "substructure": _to(9),
                                               "culvert": _to(9)}, "codes": "BR01"},
        ],
    }


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(small_model()))
    return path


def test_the_lowest_rating_is_the_condition_and_its_slot_the_first_of_ties():
    c = np.array([[7, 5, 6], [4, 8, 4], [9, 9, 3], [6, 6, 6]], np.int8)
    assert components.lowest(c).tolist() == [5, 4, 3, 6]
    assert components.lowest_slot(c).tolist() == [1, 0, 2, 0]


def test_a_treatment_moves_only_the_components_it_treats(model_path):
    m = ComponentModel.load(model_path)
    c = np.array([[[7, 5, 6], [7, 5, 6], [7, 5, 6], [7, 5, 6], [7, 5, 6]]], np.int8)  # (1, 5, 3)
    prot = np.zeros((1, 5), bool)
    kind = np.zeros(5, np.int64)
    components.treat(m, c, prot, kind, np.array([[0, 1, 2, 3, 4]]), np.full((1, 5, 3), 0.5))
    assert c[0].tolist() == [[7, 5, 6],  # nothing
                             [7, 5, 6],  # preservation: no rating moves, the deck is protected
                             [7, 7, 6],  # the lowest (superstructure) + 2, the others kept
                             [8, 8, 9],  # deck to 8, the others + 3
                             [9, 9, 9]]
    assert prot[0].tolist() == [False, True, False, False, False]
    codes = components.work_codes(m, np.array([[0, 1, 2, 3, 4]]), np.array([[[7, 5, 6]] * 5], np.int8))
    assert codes[0].tolist() == ["", "DK4", "SP2", "DK1+SP2+SB2", "BR01"]


def test_a_culverts_other_slots_never_move(model_path):
    m = ComponentModel.load(model_path)
    rng = np.random.default_rng(0)
    c = np.array([[[6, 9, 9]] * 3], np.int8)
    prot = np.zeros((1, 3), bool)
    kind = np.ones(3, np.int64)
    for _ in range(20):
        components.treat(m, c, prot, kind, rng.integers(0, 5, (1, 3)), rng.random((1, 3, 3)))
        components.deteriorate(m, c, prot, kind, rng.random((1, 3, 5)), rng.random((1, 3)))
    assert (c[..., 1:] == 9).all()


def test_deterioration_draws_follow_the_matrices_and_protection_slows_the_deck(model_path):
    m = ComponentModel.load(model_path)
    n = 200_000
    rng = np.random.default_rng(1)
    c = np.full((1, n, 3), 7, np.int8)
    prot = np.zeros((1, n), bool)
    prot[0, n // 2:] = True
    components.deteriorate(m, c, prot, np.zeros(n, np.int64), rng.random((1, n, 5)), rng.random((1, n)))
    drop = 7 - c[0]
    # deck 0.3 unprotected, 0.1 protected; superstructure 0.2; substructure 0.1 (3 sigma ~ 0.003)
    np.testing.assert_allclose(drop[: n // 2, 0].mean(), 0.3, atol=0.005)
    np.testing.assert_allclose(drop[n // 2:, 0].mean(), 0.1, atol=0.005)
    np.testing.assert_allclose(drop[:, 1:].mean(axis=0), [0.2, 0.1], atol=0.005)
    # the protection lapses with probability 1/4 a year
    np.testing.assert_allclose(prot[0, n // 2:].mean(), 0.75, atol=0.005)


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["deterioration"]["deck"][3].__setitem__(3, 0.8), "deterioration.deck: row 3 (rating 3) sums to"),
    (lambda d: d["deterioration"]["deck"][4].__setitem__(0, -0.1), "row 4 (rating 4), column 0: -0.1 is not a"),
    (lambda d: d["deterioration"].pop("culvert"), "deterioration: missing culvert"),
    (lambda d: d.__setitem__("protection_years", 0), "protection_years = 0: must be a number of years ≥ 1"),
    (lambda d: d["actions"].pop(), "actions: expected a list of the 5 actions"),
    (lambda d: d["actions"][1].__setitem__("protect", "always"), "protect = 'always': one of clear, set, keep"),
    (lambda d: d.__setitem__("colour", 1), "unknown key(s) ['colour']"),
    (lambda d: d.__setitem__("coupling", 1.5), "coupling = 1.5: must be a share of years in [0, 1]"),
    # issue 79's second probe: a sum printed to 300 digits, and 2e1 read as text then refused by a range it meets
    (lambda d: d["deterioration"]["deck"][0].__setitem__(0, 1e300), "row 0 (rating 0) sums to 1e300, not 1"),
    (lambda d: d.__setitem__("coupling", "1e400"), "coupling = 1e400: must be a share of years in [0, 1]"),
])
def test_a_bad_model_is_refused_in_one_line_naming_file_and_key(tmp_path, change, message):
    data = small_model()
    change(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        ComponentModel.load(path)
    assert message in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_number_with_an_exponent_is_a_number_in_a_component_model(tmp_path):
    """``protection_years: 2e1`` and ``coupling: 4e-1`` (YAML 1.2 numbers PyYAML reads as text) were refused as
    "'2e1': must be a number of years ≥ 1" (issue 79's second probe)."""
    text = yaml.safe_dump(small_model())
    text = re.sub(r"^protection_years: .*$", "protection_years: 2e1", text, flags=re.M)
    text = re.sub(r"^coupling: .*$", "coupling: 4e-1", text, flags=re.M) if "coupling:" in text else (
        text + "coupling: 4e-1\n")
    path = tmp_path / "m.yaml"
    path.write_text(text)
    model = ComponentModel.load(path)
    assert (model.protection_years, model.coupling) == (20.0, 0.4)


def test_the_simulator_on_the_component_model_keeps_the_condition_the_lowest_rating(model_path):
    cfg = FleetConfig(component_model=str(model_path), n_urban=3, n_rural=5, horizon_years=10)
    runs = []
    for _ in range(2):
        sim = FleetSimulator(cfg, num_envs=2)
        sim.reset(seeds=[5, 6])
        conds = []
        for _ in range(10):
            assert (sim.state.condition == components.lowest(sim.components)).all()
            before = sim.components.copy()
            res = sim.step_requests(np.zeros((2, 8), np.int64))
            assert (sim.components <= before).all()  # do nothing never raises a rating here
            assert res.cost.sum() == 0
            conds.append(sim.state.condition.copy())
        runs.append(np.array(conds))
    np.testing.assert_array_equal(runs[0], runs[1])  # seeded
    assert runs[0][-1].mean() < runs[0][0].mean()
    sim = FleetSimulator(cfg.replace(annual_budget_usd=1e9), num_envs=1)
    sim.reset(seeds=[5])
    sim.step_requests(np.full((1, 8), 4))
    assert (sim.state.age == 1).all() and (sim.components >= 8).all()  # replaced, then one year


def test_coupled_components_move_together_with_the_same_marginals(model_path):
    data = small_model()
    n = 200_000
    rng = np.random.default_rng(2)
    drops = {}
    for w in (0.0, 1.0, 0.5):
        data["coupling"] = w
        m = components.from_mapping(data, "small")
        c = np.full((1, n, 3), 7, np.int8)
        components.deteriorate(m, c, np.zeros((1, n), bool), np.zeros(n, np.int64), rng.random((1, n, 5)),
                               rng.random((1, n)))
        drops[w] = 7 - c[0]
        np.testing.assert_allclose(drops[w].mean(axis=0), [0.3, 0.2, 0.1], atol=0.005)  # marginals kept
    # P(every component stays): independent 0.7 × 0.8 × 0.9 = 0.504; together 1 − 0.3 = 0.7; half and half 0.602
    for w, stay in ((0.0, 0.504), (1.0, 0.7), (0.5, 0.602)):
        np.testing.assert_allclose((drops[w] == 0).all(axis=1).mean(), stay, atol=0.005)


def test_the_coupling_fit_recovers_a_known_share():
    from bridgefleet.calibration.markov import fit_coupling

    data = small_model()
    data["coupling"] = 0.4
    m = components.from_mapping(data, "small")
    n = 50_000
    rng = np.random.default_rng(3)
    x0 = rng.integers(3, 10, (1, n, 3)).astype(np.int8)
    c = x0.copy()
    components.deteriorate(m, c, np.zeros((1, n), bool), np.zeros(n, np.int64), rng.random((1, n, 5)),
                           rng.random((1, n)))
    fit = fit_coupling(m.deterioration[0], x0[0], c[0])
    assert fit.ci95[0] <= 0.4 <= fit.ci95[1] and abs(fit.w - 0.4) < 0.03
    assert fit.nll < fit.nll_independent
