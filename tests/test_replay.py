"""Tests for the sum-tree and the uniform / prioritized replay buffers."""

from __future__ import annotations

import numpy as np
import pytest

from bridgefleet.replay import PrioritizedReplayBuffer, ReplayBuffer, SumTree

SPEC = {"obs": ((2,), np.float32), "action": ((), np.int64)}


def _items(values: np.ndarray) -> dict[str, np.ndarray]:
    v = np.asarray(values)
    return {"obs": np.stack([v, -v], axis=1).astype(np.float32), "action": v.astype(np.int64)}


def _assert_tree_consistent(tree: SumTree) -> None:
    t = tree._tree
    internal = np.arange(1, tree._num_leaves)
    np.testing.assert_array_equal(t[internal], t[2 * internal] + t[2 * internal + 1])


# ---------------------------------------------------------------- SumTree
def test_sumtree_find_exact_prefix_sums() -> None:
    tree = SumTree(4)
    tree.update(np.arange(4), np.array([1.0, 2.0, 3.0, 4.0]))
    assert tree.total == 10.0
    # cumsum = 1, 3, 6, 10: leaf j owns [cumsum[j-1], cumsum[j]).
    queries = np.array([0.0, 0.999, 1.0, 2.999, 3.0, 5.999, 6.0, 9.999])
    np.testing.assert_array_equal(tree.find(queries), [0, 0, 1, 1, 2, 2, 3, 3])


def test_sumtree_find_clamps_out_of_range_queries() -> None:
    tree = SumTree(4)
    tree.update(np.arange(4), np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(tree.find(np.array([-5.0, 10.0, 1e9])), [0, 3, 3])


def test_sumtree_sampling_proportions_match_priorities() -> None:
    tree = SumTree(4)
    tree.update(np.arange(4), np.array([1.0, 2.0, 3.0, 4.0]))
    rng = np.random.default_rng(0)
    n = 100_000
    stratified = (np.arange(n) + rng.random(n)) / n * tree.total
    freq = np.bincount(tree.find(stratified), minlength=4) / n
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.3, 0.4], atol=1e-3)
    freq_iid = np.bincount(tree.find(rng.random(n) * tree.total), minlength=4) / n
    np.testing.assert_allclose(freq_iid, [0.1, 0.2, 0.3, 0.4], atol=0.01)


def test_sumtree_non_power_of_two_capacity_never_returns_padding() -> None:
    tree = SumTree(5)  # padded to 8 leaves
    tree.update(np.arange(5), np.array([1.0, 0.0, 2.0, 0.0, 0.0]))
    assert tree.leaves.shape == (5,)
    q = np.array([0.0, 0.5, 1.0, 2.9999999, 3.0, np.nextafter(3.0, 0.0), 100.0])
    np.testing.assert_array_equal(tree.find(q), [0, 0, 2, 2, 2, 2, 2])


def test_sumtree_capacity_one() -> None:
    tree = SumTree(1)
    tree.update(np.array([0]), np.array([2.5]))
    assert tree.total == 2.5
    np.testing.assert_array_equal(tree.find(np.array([0.0, 2.4, 7.0])), [0, 0, 0])


def test_sumtree_duplicate_indices_last_value_wins_and_sums_exact() -> None:
    tree = SumTree(6)
    tree.update(np.arange(6), np.ones(6))
    tree.update(np.array([2, 4, 2, 0, 2]), np.array([5.0, 7.0, 9.0, 3.0, 11.0]))
    np.testing.assert_array_equal(tree.leaves, [3.0, 1.0, 11.0, 1.0, 7.0, 1.0])
    assert tree.total == 24.0
    _assert_tree_consistent(tree)


def test_sumtree_no_zero_or_out_of_range_leaf_after_many_random_updates() -> None:
    rng = np.random.default_rng(1)
    cap = 1000
    tree = SumTree(cap)
    for _ in range(3000):
        idx = rng.integers(0, cap, size=64)
        pri = rng.exponential(size=64) * (rng.random(64) < 0.7)  # ~30% zeros
        pri[rng.random(64) < 0.05] = 1e-12  # tiny next to large values stresses rounding
        tree.update(idx, pri)
    _assert_tree_consistent(tree)
    np.testing.assert_allclose(tree.total, tree.leaves.sum(), rtol=1e-12)
    q = np.concatenate([rng.random(50_000) * tree.total, [0.0, tree.total, np.nextafter(tree.total, 0.0)]])
    found = tree.find(q)
    assert found.min() >= 0 and found.max() < cap
    assert np.all(tree.leaves[found] > 0.0)


def test_sumtree_rejects_bad_input() -> None:
    tree = SumTree(4)
    with pytest.raises(ValueError, match="zero total"):
        tree.find(np.array([0.0]))
    with pytest.raises(ValueError, match="out of range"):
        tree.update(np.array([4]), np.array([1.0]))
    with pytest.raises(ValueError, match="finite"):
        tree.update(np.array([0]), np.array([-1.0]))
    with pytest.raises(ValueError, match="finite"):
        tree.update(np.array([0]), np.array([np.nan]))


def test_sumtree_state_dict_round_trip() -> None:
    tree = SumTree(7)
    tree.update(np.arange(7), np.arange(7, dtype=np.float64) + 0.5)
    other = SumTree(7)
    other.load_state_dict(tree.state_dict())
    np.testing.assert_array_equal(other._tree, tree._tree)


# ---------------------------------------------------------------- ReplayBuffer
def test_uniform_buffer_wraps_around_and_keeps_last_capacity_items() -> None:
    buf = ReplayBuffer(5, SPEC)
    buf.add(_items(np.arange(3)))
    assert len(buf) == 3
    slots = buf.add(_items(np.arange(3, 7)))
    np.testing.assert_array_equal(slots, [3, 4, 0, 1])
    assert len(buf) == 5
    np.testing.assert_array_equal(buf.data["action"], [5, 6, 2, 3, 4])
    # 12 items into a ring of 5: same end state as adding one by one (item k in slot k % 5).
    buf.add(_items(np.arange(7, 19)))
    np.testing.assert_array_equal(buf.data["action"], [15, 16, 17, 18, 14])
    np.testing.assert_array_equal(buf.data["obs"][:, 1], -buf.data["action"].astype(np.float32))
    buf.add(_items(np.array([19])))
    np.testing.assert_array_equal(buf.data["action"], [15, 16, 17, 18, 19])


def test_uniform_sample_returns_fields_indices_and_unit_weights() -> None:
    buf = ReplayBuffer(10, SPEC)
    buf.add(_items(np.arange(4)))
    out = buf.sample(64, np.random.default_rng(0))
    assert set(out) == {"obs", "action", "indices", "weights"}
    assert out["obs"].shape == (64, 2) and out["obs"].dtype == np.float32
    assert out["indices"].dtype == np.int64 and out["indices"].max() < 4
    np.testing.assert_array_equal(out["action"], out["indices"])
    assert out["weights"].dtype == np.float32
    np.testing.assert_array_equal(out["weights"], np.ones(64, dtype=np.float32))


def test_uniform_add_names_the_bad_field() -> None:
    buf = ReplayBuffer(10, SPEC)
    with pytest.raises(ValueError, match="'obs'"):
        buf.add({"obs": np.zeros((3, 3)), "action": np.zeros(3)})
    with pytest.raises(ValueError, match=r"missing.*action"):
        buf.add({"obs": np.zeros((3, 2))})
    with pytest.raises(ValueError, match=r"unknown.*extra"):
        buf.add({"obs": np.zeros((3, 2)), "action": np.zeros(3), "extra": np.zeros(3)})
    with pytest.raises(ValueError, match=r"'action'.*leading dim"):
        buf.add({"obs": np.zeros((3, 2)), "action": np.zeros(2)})
    with pytest.raises(ValueError, match="empty"):
        buf.sample(1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="reserved"):
        ReplayBuffer(3, {"weights": ((), np.float32)})


def test_uniform_state_dict_round_trip() -> None:
    buf = ReplayBuffer(5, SPEC)
    buf.add(_items(np.arange(7)))
    other = ReplayBuffer(5, SPEC)
    other.load_state_dict(buf.state_dict())
    assert len(other) == 5
    np.testing.assert_array_equal(other.data["action"], buf.data["action"])
    other.add(_items(np.array([7])))
    buf.add(_items(np.array([7])))
    np.testing.assert_array_equal(other.data["action"], buf.data["action"])


# ---------------------------------------------------------------- PrioritizedReplayBuffer
def test_per_new_items_get_max_priority() -> None:
    buf = PrioritizedReplayBuffer(8, SPEC, alpha=0.5, eps=0.0 + 1e-6)
    buf.add(_items(np.arange(3)))
    np.testing.assert_array_equal(buf.tree.leaves[:3], [1.0, 1.0, 1.0])
    buf.update_priorities(np.array([0, 1]), np.array([-8.0, 0.0]))
    p_max = (8.0 + 1e-6) ** 0.5
    assert buf.max_priority == pytest.approx(p_max)
    assert buf.tree.leaves[1] == pytest.approx(1e-3)  # (0 + 1e-6) ** 0.5
    buf.add(_items(np.array([3])))
    assert buf.tree.leaves[3] == pytest.approx(p_max)


def test_per_importance_weights_hand_computed() -> None:
    buf = PrioritizedReplayBuffer(2, SPEC, alpha=1.0, eps=1e-6)
    buf.add(_items(np.arange(2)))
    buf.update_priorities(np.array([0, 1]), np.array([1.0, 4.0]))
    # p ≈ [1, 4], total 5, 5 strata of width 1: first → item 0, the other four → item 1.
    # N = 2, P = [0.2, 0.8]: w = (N·P)^-β = [0.4^-β, 1.6^-β]; β=0.5 → [1.5811, 0.7906] / max.
    out = buf.sample(5, np.random.default_rng(0), beta=0.5)
    np.testing.assert_array_equal(out["indices"], [0, 1, 1, 1, 1])
    assert out["weights"].dtype == np.float32
    np.testing.assert_allclose(out["weights"], [1.0, 0.5, 0.5, 0.5, 0.5], rtol=1e-5)
    out = buf.sample(5, np.random.default_rng(1), beta=1.0)  # 0.4^-1 = 2.5, 1.6^-1 = 0.625
    np.testing.assert_allclose(out["weights"], [1.0, 0.25, 0.25, 0.25, 0.25], rtol=1e-5)


def test_per_weights_match_formula_on_random_batch() -> None:
    buf = PrioritizedReplayBuffer(16, SPEC, alpha=0.7, eps=1e-6)
    buf.add(_items(np.arange(10)))
    rng = np.random.default_rng(3)
    buf.update_priorities(np.arange(10), rng.normal(size=10))
    out = buf.sample(32, rng, beta=0.4)
    p = buf.tree.leaves[out["indices"]]
    w = (10 * p / buf.tree.total) ** -0.4
    np.testing.assert_allclose(out["weights"], w / w.max(), rtol=1e-6)


def test_per_beta_schedule_start_middle_end() -> None:
    buf = PrioritizedReplayBuffer(8, SPEC, beta_start=0.4, beta_end=1.0, beta_steps=100)
    assert buf.beta(0) == pytest.approx(0.4)
    assert buf.beta(50) == pytest.approx(0.7)
    assert buf.beta(100) == pytest.approx(1.0)
    assert buf.beta(10_000) == pytest.approx(1.0)
    buf.add(_items(np.arange(4)))
    rng = np.random.default_rng(0)
    assert buf.step == 0 and buf.beta() == pytest.approx(0.4)
    for _ in range(50):
        buf.sample(4, rng)
    assert buf.step == 50 and buf.beta() == pytest.approx(0.7)


def test_per_stratified_sampling_proportions() -> None:
    buf = PrioritizedReplayBuffer(4, SPEC, alpha=1.0, eps=1e-9)
    buf.add(_items(np.arange(4)))
    buf.update_priorities(np.arange(4), np.array([1.0, 2.0, 3.0, 4.0]))
    rng = np.random.default_rng(0)
    counts = np.zeros(4)
    for _ in range(200):
        counts += np.bincount(buf.sample(100, rng)["indices"], minlength=4)
    np.testing.assert_allclose(counts / counts.sum(), [0.1, 0.2, 0.3, 0.4], atol=2e-3)


def test_per_duplicate_indices_in_update_last_wins() -> None:
    buf = PrioritizedReplayBuffer(4, SPEC, alpha=1.0, eps=0.5)
    buf.add(_items(np.arange(4)))
    buf.update_priorities(np.array([1, 1, 3, 1]), np.array([10.0, 20.0, 2.5, -1.5]))
    np.testing.assert_array_equal(buf.tree.leaves, [1.0, 2.0, 1.0, 3.0])
    assert buf.tree.total == 7.0
    assert buf.max_priority == 20.5  # the max over the batch still counts


def test_per_no_invalid_samples_after_many_updates_partially_filled() -> None:
    rng = np.random.default_rng(2)
    buf = PrioritizedReplayBuffer(1000, SPEC, alpha=0.6)
    buf.add(_items(np.arange(700)))
    for _ in range(2000):
        out = buf.sample(64, rng)
        idx = out["indices"]
        assert idx.min() >= 0 and idx.max() < 700
        assert np.all(buf.tree.leaves[idx] > 0.0)
        assert np.all((out["weights"] > 0.0) & (out["weights"] <= 1.0))
        td = rng.normal(scale=10.0, size=64) * (rng.random(64) < 0.5)  # half exact zeros
        buf.update_priorities(idx, td)
    assert np.all(buf.tree.leaves[:700] > 0.0)
    np.testing.assert_array_equal(buf.tree.leaves[700:], 0.0)
    _assert_tree_consistent(buf.tree)


def test_per_update_priorities_rejects_bad_input() -> None:
    buf = PrioritizedReplayBuffer(8, SPEC)
    buf.add(_items(np.arange(3)))
    with pytest.raises(ValueError, match="out of range"):
        buf.update_priorities(np.array([3]), np.array([1.0]))
    with pytest.raises(ValueError, match="NaN"):
        buf.update_priorities(np.array([0]), np.array([np.inf]))
    with pytest.raises(ValueError, match="shape"):
        buf.update_priorities(np.array([0, 1]), np.array([1.0]))


def test_per_state_dict_round_trip() -> None:
    rng = np.random.default_rng(0)
    buf = PrioritizedReplayBuffer(6, SPEC, beta_steps=10)
    buf.add(_items(np.arange(4)))
    out = buf.sample(3, rng)
    buf.update_priorities(out["indices"], np.array([3.0, 0.1, 2.0]))
    state = buf.state_dict()
    other = PrioritizedReplayBuffer(6, SPEC, beta_steps=10)
    other.load_state_dict(state)
    assert len(other) == 4 and other.step == 1 and other.max_priority == buf.max_priority
    np.testing.assert_array_equal(other.tree.leaves, buf.tree.leaves)
    assert other.tree.total == buf.tree.total
    a, b = buf.sample(8, np.random.default_rng(5)), other.sample(8, np.random.default_rng(5))
    np.testing.assert_array_equal(a["indices"], b["indices"])
    np.testing.assert_array_equal(a["weights"], b["weights"])
