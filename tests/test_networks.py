"""Q-network tests: noisy layers, branching heads, dueling streams, factored argmax."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from bridgefleet.agents import BranchingQNetwork, NoisyLinear, RuralQNetwork, UrbanQNetwork, greedy_actions


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def test_noisy_linear_init_follows_factorised_scheme() -> None:
    layer = NoisyLinear(16, 4, sigma0=0.5)
    bound = 1 / math.sqrt(16)
    assert layer.weight_mu.abs().max() <= bound
    assert layer.bias_mu.abs().max() <= bound
    torch.testing.assert_close(layer.weight_sigma, torch.full((4, 16), 0.5 / 4))
    torch.testing.assert_close(layer.bias_sigma, torch.full((4,), 0.5 / 4))
    assert all(p.dtype == torch.float32 for p in layer.parameters())


def test_noisy_linear_eval_mode_is_deterministic_mean_weights() -> None:
    layer = NoisyLinear(8, 3).eval()
    x = torch.randn(5, 8)
    y1 = layer(x)
    layer.reset_noise()
    y2 = layer(x)
    torch.testing.assert_close(y1, y2, rtol=0, atol=0)
    torch.testing.assert_close(y1, F.linear(x, layer.weight_mu, layer.bias_mu))


def test_noisy_linear_train_mode_changes_only_on_reset_noise() -> None:
    layer = NoisyLinear(8, 3).train()
    x = torch.randn(5, 8)
    y1, y1_again = layer(x), layer(x)
    torch.testing.assert_close(y1, y1_again, rtol=0, atol=0)
    layer.reset_noise()
    assert not torch.allclose(layer(x), y1)


def test_noisy_linear_matches_explicit_factorised_weights() -> None:
    layer = NoisyLinear(6, 4).train()
    x = torch.randn(3, 6)
    f_in, f_out = layer.eps_in, layer.eps_out
    # f(x) = sgn(x)·sqrt(|x|) was applied: reconstruct W = μ + σ ⊙ (f_out f_inᵀ), b = μ_b + σ_b ⊙ f_out.
    weight = layer.weight_mu + layer.weight_sigma * torch.outer(f_out, f_in)
    bias = layer.bias_mu + layer.bias_sigma * f_out
    torch.testing.assert_close(layer(x), F.linear(x, weight, bias))


def test_noisy_linear_noise_is_not_in_state_dict() -> None:
    keys = set(NoisyLinear(4, 2).state_dict())
    assert keys == {"weight_mu", "weight_sigma", "bias_mu", "bias_sigma"}


def test_urban_and_rural_output_shapes() -> None:
    urban = UrbanQNetwork(81, 20, hidden=(32, 32))
    rural = RuralQNetwork(hidden=(16,))
    assert urban(torch.zeros(7, 81)).shape == (7, 20, 5)
    assert rural(torch.zeros(7, 10)).shape == (7, 1, 8)
    assert all(p.dtype == torch.float32 for p in urban.parameters())


def test_default_urban_network_matches_plan() -> None:
    net = UrbanQNetwork(81, 20)
    linears = [m for m in net.torso if isinstance(m, torch.nn.Linear)]
    assert [m.out_features for m in linears] == [512, 1024, 512]
    # One fused head for all branches, not a list of per-branch modules.
    assert net.advantage.out_features == 20 * 5


def test_factored_argmax_shape_and_range() -> None:
    net = UrbanQNetwork(81, 20, hidden=(32,))
    actions = greedy_actions(net(torch.randn(9, 81)))
    assert actions.shape == (9, 20)
    assert actions.dtype == torch.int64
    assert actions.min() >= 0 and actions.max() < 5


def test_factored_argmax_is_per_branch() -> None:
    q = torch.tensor([[[0.0, 2.0, 1.0], [5.0, -1.0, 0.0]]])
    assert greedy_actions(q).tolist() == [[1, 0]]


def test_greedy_actions_casts_low_precision_to_float32() -> None:
    q = torch.tensor([[[0.1, 0.3, 0.2]]], dtype=torch.bfloat16)
    assert greedy_actions(q).tolist() == [[1]]
    with pytest.raises(ValueError, match="n_branches"):
        greedy_actions(torch.zeros(2, 3))


def test_dueling_mean_over_actions_equals_value() -> None:
    net = BranchingQNetwork(6, n_branches=4, n_actions=5, hidden=(16,), dueling=True)
    obs = torch.randn(3, 6)
    value, adv = net.value_and_advantage(obs)
    q = net(obs)
    assert value is not None and value.shape == (3, 4)  # one value per branch
    torch.testing.assert_close(adv.mean(dim=-1), torch.zeros(3, 4), atol=1e-6, rtol=0)
    torch.testing.assert_close(q.mean(dim=-1), value, atol=1e-6, rtol=1e-6)


def test_dueling_learns_branches_whose_returns_differ() -> None:
    # Two branches, one step to a terminal state with rewards 0 and 10: a shared V(s) left both at 5.0
    # (loss ≈ 25); a value per branch reaches 0 and 10.
    from bridgefleet.agents.learner import DQNLearner
    from bridgefleet.config.learner import LearnerConfig

    torch.manual_seed(0)
    learner = DQNLearner(lambda: BranchingQNetwork(3, 2, 2, hidden=(16,), dueling=True),
                         LearnerConfig(device="cpu", lr=1e-2, target_sync_every=50))
    n = 32
    batch = {"obs": np.ones((n, 3), np.float32), "action": np.zeros((n, 2), np.int64),
             "reward": np.tile(np.array([0.0, 10.0], np.float32), (n, 1)), "next_obs": np.ones((n, 3), np.float32),
             "done": np.ones(n, np.float32), "discount": np.full(n, 0.95, np.float32)}
    for _ in range(1500):
        out = learner.update(batch)
    q = learner.online(torch.ones(1, 3))[0, :, 0].detach()
    torch.testing.assert_close(q, torch.tensor([0.0, 10.0]), atol=0.05, rtol=0)
    assert out["loss"] < 0.01


def test_heads_are_fp32_under_bf16_autocast_so_close_q_values_keep_their_order() -> None:
    net = BranchingQNetwork(4, 1, 2, hidden=(8,))
    with torch.no_grad():
        net.advantage.weight.zero_()
        net.advantage.bias.copy_(torch.tensor([-20.00, -20.02]))  # equal in bf16 (−20.0 both)
    assert torch.tensor(-20.02, dtype=torch.bfloat16) == torch.tensor(-20.0, dtype=torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        q = net(torch.randn(5, 4))
    assert q.dtype == torch.float32
    torch.testing.assert_close(q[:, 0], torch.tensor([[-20.0, -20.02]] * 5), atol=1e-5, rtol=0)
    assert (greedy_actions(q) == 0).all()


def test_noisy_network_uses_noisy_heads_only() -> None:
    net = BranchingQNetwork(6, 2, 3, hidden=(8, 8), dueling=True, noisy=True)
    assert isinstance(net.advantage, NoisyLinear) and isinstance(net.value, NoisyLinear)
    assert not any(isinstance(m, NoisyLinear) for m in net.torso)
    obs = torch.randn(4, 6)
    q1 = net(obs)
    net.reset_noise()
    assert not torch.allclose(net(obs), q1)
    net.eval()
    torch.testing.assert_close(net(obs), net(obs), rtol=0, atol=0)


def test_reset_noise_is_noop_without_noise() -> None:
    net = BranchingQNetwork(6, 2, 3, hidden=(8,))
    obs = torch.randn(4, 6)
    q1 = net(obs)
    net.reset_noise()
    torch.testing.assert_close(net(obs), q1, rtol=0, atol=0)


def test_noisy_network_under_bf16_autocast_returns_fp32_q() -> None:
    net = BranchingQNetwork(6, 2, 3, hidden=(8,), noisy=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        q = net(torch.randn(4, 6))
    assert q.dtype == torch.float32 and q.shape == (4, 2, 3)  # heads in fp32, torso in bf16


def test_invalid_shapes_raise_value_error() -> None:
    net = BranchingQNetwork(6, 2, 3, hidden=(8,))
    with pytest.raises(ValueError, match="obs"):
        net(torch.zeros(4, 7))
    with pytest.raises(ValueError, match="n_branches"):
        BranchingQNetwork(6, 0, 3)
    with pytest.raises(ValueError, match="hidden"):
        BranchingQNetwork(6, 2, 3, hidden=(8, 0))


def test_the_bridge_network_reads_many_bridges_in_blocks_with_the_same_q(monkeypatch) -> None:
    from bridgefleet.agents import bridge

    torch.manual_seed(0)
    net = bridge.BridgeQNetwork((16, 16), dueling=True, n_features=14, rating_ramps=True)
    x = torch.rand(23, 14)
    with torch.no_grad():
        whole = net(x)
        monkeypatch.setattr(bridge, "ROWS_PER_PASS", 5)  # 23 rows: blocks of 5, 5, 5, 5, 3
        blocks = net(x)
    assert blocks.shape == (23, 5)
    # float32 rounding: the matrix kernels may sum in another order for another row count (last bits on an AMD EPYC)
    torch.testing.assert_close(blocks, whole, rtol=1e-6, atol=1e-6)
    loss = (net(x) ** 2).sum()  # gradients flow through the blocks (a plain sum of dueling Q leaves A none)
    loss.backward()
    assert net.head.weight.grad is not None and net.head.weight.grad.abs().sum() > 0
