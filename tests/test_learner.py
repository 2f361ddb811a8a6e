"""DQN learner tests with hand-computed targets and losses."""

from __future__ import annotations

import copy
import importlib.util
import os
import shutil

import numpy as np
import pytest
import torch
from torch import Tensor, nn

from bridgefleet.agents import BranchingQNetwork
from bridgefleet.agents.learner import DQNLearner
from bridgefleet.config.learner import LearnerConfig


class TableQ(nn.Module):
    """Q(s) = table[s] for one-hot observations, so tests can set every Q-value by hand."""

    def __init__(self, n_states: int, n_branches: int, n_actions: int) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.zeros(n_states, n_branches, n_actions))

    def forward(self, obs: Tensor) -> Tensor:
        return torch.einsum("bs,sda->bda", obs, self.table)


def one_hot(states: list[int], n: int = 2) -> np.ndarray:
    return np.eye(n, dtype=np.float32)[states]


def table_learner(online_table: list, target_table: list, **cfg: object) -> DQNLearner:
    """Learner over 2 states whose online/target tables are the given lists (n_states, nb, na)."""
    on = torch.tensor(online_table, dtype=torch.float32)
    tg = torch.tensor(target_table, dtype=torch.float32)
    learner = DQNLearner(lambda: TableQ(*on.shape), LearnerConfig(device="cpu", **cfg))
    with torch.no_grad():
        learner.online.table.copy_(on)
        learner.target.table.copy_(tg)
    return learner


def targets(learner: DQNLearner, reward, next_state, done, discount) -> Tensor:
    return learner.td_targets(
        torch.tensor(reward, dtype=torch.float32),
        torch.as_tensor(one_hot(next_state)),
        torch.tensor(done, dtype=torch.float32),
        torch.tensor(discount, dtype=torch.float32),
    )


# 1 branch, 3 actions; state 1 is s'. Online argmax at s' is action 1, target argmax is action 0.
ONLINE = [[[0.0, 0.0, 0.0]], [[1.0, 3.0, 2.0]]]
TARGET = [[[0.0, 0.0, 0.0]], [[5.0, 2.0, 4.0]]]


def test_sarsa_target_bootstraps_from_the_action_taken_and_needs_it() -> None:
    learner = table_learner(ONLINE, TARGET, target="sarsa")
    y = learner.td_targets(torch.tensor([1.0, 1.0]), torch.as_tensor(one_hot([1, 1])), torch.zeros(2),
                           torch.full((2,), 0.9), torch.tensor([[2], [1]]))
    torch.testing.assert_close(y, torch.tensor([[1.0 + 0.9 * 4.0], [1.0 + 0.9 * 2.0]]))  # Q⁻(s', a') = 4, 2
    batch = {"obs": one_hot([0, 0]), "action": np.array([0, 1]), "reward": np.ones(2, np.float32),
             "next_obs": one_hot([1, 1]), "done": np.zeros(2, np.float32), "discount": np.full(2, 0.9, np.float32)}
    with pytest.raises(ValueError, match="next_action"):
        learner.update(batch)
    out = learner.update({**batch, "next_action": np.array([2, 1])})  # actions (B,): one branch
    # Q(s, ·) was 0: TD errors are the targets themselves
    np.testing.assert_allclose(out["td_error"], [1.0 + 0.9 * 4.0, 1.0 + 0.9 * 2.0], rtol=1e-6)


def test_a_per_bridge_learner_state_before_format_2_loads(tmp_path) -> None:
    learner = DQNLearner(small_net, LearnerConfig(device="cpu"))
    state = learner.state_dict()
    old = {"online": state["online"], "target": state["target"], "opt": state["optimizer"], "step": 7}
    restored = DQNLearner(small_net, LearnerConfig(device="cpu"))
    restored.load_state_dict(old)
    assert restored.step == 7 and restored.state_dict()["format"] == 2


def test_vanilla_target_bootstraps_from_target_max() -> None:
    learner = table_learner(ONLINE, TARGET, target="max")
    y = targets(learner, [1.0], [1], [0.0], [0.9])
    torch.testing.assert_close(y, torch.tensor([[1.0 + 0.9 * 5.0]]))


def test_double_dqn_target_uses_online_argmax_and_target_value() -> None:
    learner = table_learner(ONLINE, TARGET, target="double")
    y = targets(learner, [1.0], [1], [0.0], [0.9])
    # a* = argmax online = 1 (≠ target argmax 0), evaluated by the target: 2.
    torch.testing.assert_close(y, torch.tensor([[1.0 + 0.9 * 2.0]]))


def test_terminated_transition_has_no_bootstrap() -> None:
    for double in (False, True):
        learner = table_learner(ONLINE, TARGET, target="double" if double else "max")
        y = targets(learner, [1.0, 1.0], [1, 1], [1.0, 0.0], [0.9, 0.81])
        expected = [1.0, 1.0 + 0.81 * (2.0 if double else 5.0)]
        torch.testing.assert_close(y, torch.tensor(expected).unsqueeze(-1))


def test_per_branch_reward_gives_per_branch_targets() -> None:
    # 2 branches × 3 actions; branch 0 target max 5, branch 1 target max 7.
    online = [[[0.0] * 3, [0.0] * 3], [[1.0, 3.0, 2.0], [9.0, 0.0, 0.0]]]
    target = [[[0.0] * 3, [0.0] * 3], [[5.0, 2.0, 4.0], [1.0, 7.0, 0.0]]]
    learner = table_learner(online, target)
    y = targets(learner, [[1.0, -2.0]], [1], [0.0], [0.5])
    torch.testing.assert_close(y, torch.tensor([[1.0 + 0.5 * 5.0, -2.0 + 0.5 * 7.0]]))
    # A scalar reward is broadcast to every branch.
    y = targets(learner, [1.0], [1], [0.0], [0.5])
    torch.testing.assert_close(y, torch.tensor([[1.0 + 0.5 * 5.0, 1.0 + 0.5 * 7.0]]))
    # Double DQN per branch: a* = (1, 0) → target values (2, 1).
    learner = table_learner(online, target, target="double")
    y = targets(learner, [[1.0, -2.0]], [1], [0.0], [0.5])
    torch.testing.assert_close(y, torch.tensor([[1.0 + 0.5 * 2.0, -2.0 + 0.5 * 1.0]]))


def two_branch_batch(weights: list[float] | None = None) -> dict[str, np.ndarray]:
    batch = {
        "obs": one_hot([0, 0]),
        "action": np.array([[0, 1], [2, 2]], dtype=np.int64),
        "reward": np.array([1.0, 0.0], dtype=np.float32),
        "next_obs": one_hot([1, 1]),
        "done": np.array([0.0, 1.0], dtype=np.float32),
        "discount": np.array([0.5, 0.5], dtype=np.float32),
    }
    if weights is not None:
        batch["weights"] = np.array(weights, dtype=np.float32)
    return batch


# Q(s0) per branch; target at s' has max 2 in both branches.
Q_S0 = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
Q_NEXT = [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]


def test_importance_weighted_mse_loss_value() -> None:
    learner = table_learner([Q_S0, Q_NEXT], [Q_S0, Q_NEXT], loss="mse")
    out = learner.update(two_branch_batch(weights=[0.5, 2.0]))
    # Sample 0: y = 1 + 0.5·2 = 2 in both branches; Q = (0, 4) → errors (2, −2) → mean sq 4.
    # Sample 1: done, y = 0; Q = (2, 5) → mean sq (4 + 25)/2 = 14.5.
    assert out["loss"] == pytest.approx((0.5 * 4.0 + 2.0 * 14.5) / 2)
    np.testing.assert_allclose(out["td_error"], [2.0, 3.5])
    assert out["td_error"].shape == (2,) and isinstance(out["loss"], float)


def test_huber_loss_value_and_default_unit_weights() -> None:
    learner = table_learner([Q_S0, Q_NEXT], [Q_S0, Q_NEXT], loss="huber")
    out = learner.update(two_branch_batch())
    # Huber(δ=1): |e| − 0.5 for |e| ≥ 1. Sample 0: (1.5 + 1.5)/2; sample 1: (1.5 + 4.5)/2.
    assert out["loss"] == pytest.approx((1.5 + 3.0) / 2)


def test_update_moves_q_toward_target() -> None:
    learner = table_learner([Q_S0, Q_NEXT], [Q_S0, Q_NEXT], lr=0.1, grad_clip=None)
    before = learner.online.table.detach().clone()
    learner.update(two_branch_batch())
    delta = learner.online.table.detach() - before
    # Adam's first step is lr·sign(grad): Q(s0, a=0) for branch 0 rises towards y = 2.
    assert delta[0, 0, 0] == pytest.approx(0.1, rel=1e-4)
    assert delta[0, 1, 2] == pytest.approx(-0.1, rel=1e-4)
    assert delta[1].abs().max() == 0  # no gradient through the target


def small_batch(rng: np.random.Generator, n: int = 32, obs_dim: int = 6, nb: int = 3, na: int = 4) -> dict:
    return {
        "obs": rng.standard_normal((n, obs_dim), dtype=np.float32),
        "action": rng.integers(0, na, (n, nb)),
        "reward": rng.standard_normal(n).astype(np.float32),
        "next_obs": rng.standard_normal((n, obs_dim), dtype=np.float32),
        "done": (rng.random(n) < 0.1).astype(np.float32),
        "discount": np.full(n, 0.95, dtype=np.float32),
        "weights": rng.random(n).astype(np.float32),
    }


def small_net() -> nn.Module:
    return BranchingQNetwork(6, n_branches=3, n_actions=4, hidden=(32, 32))


def params_equal(a: nn.Module, b: nn.Module) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))


def test_target_sync_every_n_updates() -> None:
    torch.manual_seed(0)
    learner = DQNLearner(small_net, LearnerConfig(device="cpu", lr=1e-2, target_sync_every=2))
    batch = small_batch(np.random.default_rng(0))
    learner.update(batch)
    assert learner.step == 1 and not params_equal(learner.online, learner.target)
    learner.update(batch)
    assert learner.step == 2 and params_equal(learner.online, learner.target)
    learner.update(batch)
    assert not params_equal(learner.online, learner.target)


def test_polyak_update_after_every_step() -> None:
    torch.manual_seed(0)
    learner = DQNLearner(small_net, LearnerConfig(device="cpu", lr=1e-2, polyak_tau=0.25))
    old_target = copy.deepcopy(learner.target)
    learner.update(small_batch(np.random.default_rng(0)))
    for p_t, p_old, p_on in zip(
        learner.target.parameters(), old_target.parameters(), learner.online.parameters(), strict=True
    ):
        torch.testing.assert_close(p_t, 0.75 * p_old + 0.25 * p_on)


def test_amp_bf16_update_with_clipping_matches_fp32() -> None:
    batch = small_batch(np.random.default_rng(1), n=64)
    results = {}
    for amp in (False, True):
        torch.manual_seed(0)
        learner = DQNLearner(
            small_net, LearnerConfig(device="cpu", amp=amp, lr=1e-3, grad_clip=0.05, target="double")
        )
        before = [p.detach().clone() for p in learner.online.parameters()]
        out = learner.update(batch)
        grads = torch.cat([p.grad.flatten() for p in learner.online.parameters()])
        deltas = torch.cat(
            [(p.detach() - b).flatten() for p, b in zip(learner.online.parameters(), before, strict=True)]
        )
        results[amp] = (out, grads, deltas)
    (out32, g32, d32), (out16, g16, d16) = results[False], results[True]
    assert out32["grad_norm"] > 0.05  # clipping is active
    assert out16["loss"] == pytest.approx(out32["loss"], rel=0.05)
    assert out16["grad_norm"] == pytest.approx(out32["grad_norm"], rel=0.05)
    # Clipped (unscaled) gradients agree and have norm grad_clip.
    assert g16.norm().item() == pytest.approx(0.05, rel=1e-3)
    assert ((g16 - g32).norm() / g32.norm()).item() < 0.05
    # Adam's first step is ≈ lr·sign(grad): bf16 may flip the sign of tiny gradients only.
    agree = ((d16 - d32).abs() <= 1e-4).float().mean().item()
    assert agree > 0.95


def test_state_dict_round_trip_with_weights_only_load(tmp_path) -> None:
    torch.manual_seed(0)
    learner = DQNLearner(small_net, LearnerConfig(device="cpu", target_sync_every=5))
    batch = small_batch(np.random.default_rng(2))
    learner.update(batch)
    path = tmp_path / "learner.pt"
    learner.save(path)
    restored = DQNLearner(small_net, LearnerConfig(device="cpu", target_sync_every=5))
    restored.load(path)
    assert restored.step == 1
    assert params_equal(restored.online, learner.online) and params_equal(restored.target, learner.target)
    # Same optimiser state → identical next update.
    a, b = learner.update(batch), restored.update(batch)
    assert a["loss"] == b["loss"]
    assert params_equal(restored.online, learner.online)


def test_act_epsilon_greedy_per_branch() -> None:
    torch.manual_seed(0)
    learner = DQNLearner(small_net, LearnerConfig(device="cpu"))
    rng = np.random.default_rng(0)
    obs = rng.standard_normal((500, 6), dtype=np.float32)
    greedy = learner.greedy(obs)
    assert greedy.shape == (500, 3) and greedy.dtype == np.int64
    np.testing.assert_array_equal(learner.act(obs, 0.0, rng), greedy)
    random = learner.act(obs, 1.0, rng)
    assert random.dtype == np.int64 and set(np.unique(random)) == {0, 1, 2, 3}
    # Each branch explores independently: ~ε·(1 − 1/4) of entries differ from greedy.
    mixed = learner.act(obs, 0.4, rng)
    assert 0.2 < (mixed != greedy).mean() < 0.4
    with pytest.raises(ValueError, match="epsilon"):
        learner.act(obs, 1.5, rng)


def test_noisy_acting_ignores_epsilon_and_greedy_uses_mean_weights() -> None:
    torch.manual_seed(0)
    net = lambda: BranchingQNetwork(6, 3, 4, hidden=(16,), noisy=True)  # noqa: E731
    learner = DQNLearner(net, LearnerConfig(device="cpu", noisy=True))
    rng = np.random.default_rng(0)
    obs = rng.standard_normal((200, 6), dtype=np.float32)
    g1, g2 = learner.greedy(obs), learner.greedy(obs)
    np.testing.assert_array_equal(g1, g2)
    acts = [learner.act(obs, 1.0, rng) for _ in range(3)]
    # ε = 1 would be uniform; noisy acting is greedy under fresh noise instead (differs per call).
    assert not np.array_equal(acts[0], acts[1])
    assert learner.online.training


def test_config_validation_names_the_field() -> None:
    for field, value in [
        ("lr", 0.0),
        ("gamma", 1.5),
        ("n_step", 0),
        ("loss", "l1"),
        ("grad_clip", -1.0),
        ("target_sync_every", 0),
        ("polyak_tau", 2.0),
        ("compile", "fast"),
        ("hidden", (64, -1)),
        ("device", "tpu:x"),
    ]:
        with pytest.raises(ValueError, match=field):
            LearnerConfig(**{field: value})
    assert LearnerConfig(hidden=[8, 8]).hidden == (8, 8)


def test_update_rejects_bad_batches() -> None:
    learner = DQNLearner(small_net, LearnerConfig(device="cpu"))
    batch = small_batch(np.random.default_rng(0))
    with pytest.raises(ValueError, match="missing"):
        learner.update({k: v for k, v in batch.items() if k != "discount"})
    with pytest.raises(ValueError, match="branches"):
        learner.update({**batch, "action": batch["action"][:, :2]})


def _inductor_unavailable() -> str | None:
    if os.environ.get("BRIDGEFLEET_SKIP_COMPILE"):
        return "BRIDGEFLEET_SKIP_COMPILE is set"
    if not any(shutil.which(cc) for cc in ("gcc", "cc", "clang", os.environ.get("CXX", "g++"))):
        return "no C/C++ compiler for the inductor CPU backend"
    if importlib.util.find_spec("torch._inductor") is None:  # pragma: no cover - depends on the install
        return "torch._inductor is not installed"
    return None


@pytest.mark.skipif(_inductor_unavailable() is not None, reason=str(_inductor_unavailable()))
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
def test_compile_checkpoint_round_trip_and_target_sync() -> None:
    torch.manual_seed(0)
    net = lambda: BranchingQNetwork(6, 3, 4, hidden=(16,))  # noqa: E731
    compiled = DQNLearner(net, LearnerConfig(device="cpu", compile="default", target_sync_every=1))
    batch = small_batch(np.random.default_rng(3), n=16)
    compiled.update(batch)  # step 1: target synced through the compiled wrapper
    obs = torch.as_tensor(batch["obs"])
    with torch.no_grad():
        torch.testing.assert_close(compiled._target_fwd(obs), compiled.online(obs))

    state = compiled.state_dict()
    keys = [*state["online"], *state["target"]]
    assert keys and not any("_orig_mod." in k for k in keys)

    eager = DQNLearner(net, LearnerConfig(device="cpu"))
    eager.load_state_dict(state)
    np.testing.assert_allclose(
        eager.q_values(obs).numpy(), compiled.q_values(obs).numpy(), rtol=1e-5, atol=1e-6
    )

    # Back into a (fresh) compiled learner, also from keys carrying the compile prefix.
    with torch.no_grad():
        eager.online.advantage.bias.add_(1.0)
    prefixed = eager.state_dict()
    prefixed["online"] = {f"_orig_mod.{k}": v for k, v in prefixed["online"].items()}
    compiled.load_state_dict(prefixed)
    np.testing.assert_allclose(
        compiled.q_values(obs).numpy(), eager.q_values(obs).numpy(), rtol=1e-5, atol=1e-6
    )
    assert compiled.step == 1
