"""Q-networks shared by the urban and rural agents.

Every network maps observations ``(B, obs_dim)`` float32 to Q-values ``(B, n_branches, n_actions)``,
so one learner code path serves both agents: the urban agent has one branch per bridge with 5
actions each, the rural agent has a single branch over its 8 strategies.

References:
    Tavakoli, Pardo & Kormushev, "Action Branching Architectures for Deep Reinforcement Learning",
    AAAI 2018 (branching heads on a shared torso).
    Wang et al., "Dueling Network Architectures for Deep Reinforcement Learning", ICML 2016.
    Fortunato et al., "Noisy Networks for Exploration", ICLR 2018 (factorised Gaussian noise).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

URBAN_N_ACTIONS = 5
"""Per-bridge actions of the urban agent (see ``bridgefleet.sim.model.N_ACTIONS``)."""
RURAL_N_STRATEGIES = 8
"""Fleet-level strategies of the rural agent."""
RURAL_OBS_DIM = 10
"""Observation size of the rural agent."""


def _scaled_noise(size: int, device: torch.device) -> Tensor:
    """f(x) = sgn(x)·sqrt(|x|) of standard normal noise (Fortunato et al. 2018, eq. 10)."""
    x = torch.randn(size, device=device)
    return x.sign() * x.abs().sqrt()


class NoisyLinear(nn.Module):
    """Linear layer with factorised Gaussian parameter noise (Fortunato et al., ICLR 2018).

    ``y = (μ_w + σ_w ⊙ ε_w) x + μ_b + σ_b ⊙ ε_b`` with ``ε_w = f(ε_out) f(ε_in)ᵀ``, ``ε_b = f(ε_out)``
    and ``f(x) = sgn(x)·sqrt(|x|)``. Initialisation follows the paper's factorised scheme with
    ``p = in_features``: ``μ ~ U(−1/√p, 1/√p)``, ``σ = σ0/√p``.

    In training mode the current noise sample is used (resample it with :meth:`reset_noise`); in eval
    mode (``.eval()``) only the mean weights ``μ`` are used, so the output is deterministic.

    Args:
        in_features: input size ``p``.
        out_features: output size ``q``.
        sigma0: initial noise scale σ0 (paper: 0.5).

    Shapes:
        input ``(..., in_features)``, output ``(..., out_features)``; parameters are float32.

    Raises:
        ValueError: if a size is not positive or ``sigma0`` is negative.
    """

    def __init__(self, in_features: int, out_features: int, sigma0: float = 0.5) -> None:
        super().__init__()
        if in_features <= 0 or out_features <= 0:
            raise ValueError(f"in/out features must be positive, got {in_features}, {out_features}")
        if sigma0 < 0:
            raise ValueError(f"sigma0 must be >= 0, got {sigma0}")
        self.in_features = in_features
        self.out_features = out_features
        self.sigma0 = float(sigma0)
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features))
        self.weight_sigma = nn.Parameter(torch.empty(out_features, in_features))
        self.bias_mu = nn.Parameter(torch.empty(out_features))
        self.bias_sigma = nn.Parameter(torch.empty(out_features))
        # Noise is not learned state: keep it out of checkpoints.
        self.register_buffer("eps_in", torch.zeros(in_features), persistent=False)
        self.register_buffer("eps_out", torch.zeros(out_features), persistent=False)
        self.reset_parameters()
        self.reset_noise()

    def reset_parameters(self) -> None:
        """Re-initialise μ ~ U(−1/√p, 1/√p) and σ = σ0/√p (factorised scheme, Fortunato et al. 2018)."""
        bound = 1.0 / math.sqrt(self.in_features)
        with torch.no_grad():
            self.weight_mu.uniform_(-bound, bound)
            self.bias_mu.uniform_(-bound, bound)
            self.weight_sigma.fill_(self.sigma0 * bound)
            self.bias_sigma.fill_(self.sigma0 * bound)

    @torch.no_grad()
    def reset_noise(self) -> None:
        """Draw new factorised noise ε_in (p,), ε_out (q,) in place (so compiled wrappers see it)."""
        device = self.weight_mu.device
        self.eps_in.copy_(_scaled_noise(self.in_features, device))
        self.eps_out.copy_(_scaled_noise(self.out_features, device))

    def forward(self, x: Tensor) -> Tensor:
        """Apply the layer: ``(..., in_features)`` → ``(..., out_features)``, same dtype as the matmul."""
        if not self.training:
            return F.linear(x, self.weight_mu, self.bias_mu)
        # (σ ⊙ ε_out ε_inᵀ) x = ε_out ⊙ (σ (ε_in ⊙ x)): never materialise the (q, p) noise matrix.
        mean = F.linear(x, self.weight_mu, self.bias_mu)
        noise = F.linear(x * self.eps_in.to(x.dtype), self.weight_sigma)
        # Match the matmul dtype so autocast outputs stay in the low-precision dtype.
        eps_out = self.eps_out.to(mean.dtype)
        return mean + eps_out * (noise + self.bias_sigma.to(mean.dtype))

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, sigma0={self.sigma0}"


def _head(in_features: int, out_features: int, noisy: bool) -> nn.Module:
    return NoisyLinear(in_features, out_features) if noisy else nn.Linear(in_features, out_features)


class BranchingQNetwork(nn.Module):
    """Action-branching Q-network (Tavakoli et al., AAAI 2018), optionally dueling and noisy.

    A shared MLP torso (ReLU after every hidden layer) feeds one linear head that produces all
    ``n_branches * n_actions`` Q-values at once (reshaped, no per-branch Python loop). With
    ``dueling=True`` (Wang et al., ICML 2016, adapted to branching) each branch has its own state value
    ``V_d (B, n_branches)`` and ``Q_d(s, a) = V_d(s) + A_d(s, a) − mean_a' A_d(s, a')`` (Tavakoli et al.
    share one V, which cannot represent branches with per-branch rewards whose returns differ). The heads
    run in fp32 under autocast. With ``noisy=True`` the head layers (not the
    torso) are :class:`NoisyLinear` (Fortunato et al., ICLR 2018).

    Args:
        obs_dim: observation size.
        n_branches: number of independent action dimensions (bridges); 1 for a flat action space.
        n_actions: actions per branch.
        hidden: sizes of the torso's hidden layers; may be empty (heads act on the observation).
        dueling: use the dueling value/advantage decomposition.
        noisy: use noisy linear heads.

    Shapes:
        ``forward(obs)``: obs ``(B, obs_dim)`` float32 (or autocast dtype) →
        Q ``(B, n_branches, n_actions)``. Parameters are float32.

    Raises:
        ValueError: on non-positive sizes (construction) or an observation of the wrong shape (forward).
    """

    def __init__(
        self,
        obs_dim: int,
        n_branches: int,
        n_actions: int,
        hidden: Sequence[int] = (512, 1024, 512),
        dueling: bool = False,
        noisy: bool = False,
    ) -> None:
        super().__init__()
        hidden = tuple(int(h) for h in hidden)
        for name, value in (("obs_dim", obs_dim), ("n_branches", n_branches), ("n_actions", n_actions)):
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        if any(h <= 0 for h in hidden):
            raise ValueError(f"hidden sizes must be positive, got {hidden}")
        self.obs_dim = int(obs_dim)
        self.n_branches = int(n_branches)
        self.n_actions = int(n_actions)
        self.hidden = hidden
        self.dueling = bool(dueling)
        self.noisy = bool(noisy)

        layers: list[nn.Module] = []
        width = self.obs_dim
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.torso = nn.Sequential(*layers)
        self.advantage = _head(width, self.n_branches * self.n_actions, self.noisy)
        # One value per branch: branches (bridges) with their own rewards have their own returns, which one
        # shared V(s) cannot represent.
        self.value = _head(width, self.n_branches, self.noisy) if self.dueling else None

    def value_and_advantage(self, obs: Tensor) -> tuple[Tensor | None, Tensor]:
        """Return the streams: V ``(B, n_branches)`` (None unless dueling) and A ``(B, n_branches, n_actions)``.

        When dueling, A is already centred per branch (``A − mean_a A``), so ``Q = V[..., None] + A``;
        otherwise A is Q itself.

        Raises:
            ValueError: if ``obs`` is not ``(B, obs_dim)``.
        """
        if obs.dim() != 2 or obs.shape[1] != self.obs_dim:
            raise ValueError(f"expected obs of shape (B, {self.obs_dim}), got {tuple(obs.shape)}")
        z = self.torso(obs)
        # The heads run in fp32 even under autocast: Q-values near −20 that differ by 0.02 are equal in bf16
        # (8 bits of mantissa), which flips greedy actions and TD targets; the torso keeps the fast matmuls.
        with torch.autocast(device_type=z.device.type, enabled=False):
            z = z.float()
            adv = self.advantage(z).view(-1, self.n_branches, self.n_actions)
            if self.value is None:
                return None, adv
            return self.value(z), adv - adv.mean(dim=-1, keepdim=True)

    def forward(self, obs: Tensor) -> Tensor:
        """Q-values ``(B, n_branches, n_actions)`` for obs ``(B, obs_dim)``.

        Raises:
            ValueError: if ``obs`` is not ``(B, obs_dim)``.
        """
        value, adv = self.value_and_advantage(obs)
        if value is None:
            return adv
        return value.unsqueeze(-1) + adv  # (B, n_branches, 1) + (B, n_branches, n_actions)

    @torch.no_grad()
    def reset_noise(self) -> None:
        """Resample the noise of every :class:`NoisyLinear` head; a no-op when ``noisy=False``."""
        for module in self.modules():
            if isinstance(module, NoisyLinear):
                module.reset_noise()


class UrbanQNetwork(BranchingQNetwork):
    """Urban agent: one branch per urban bridge, 5 actions each → Q ``(B, n_urban, 5)``.

    ``obs_dim`` is ``n_urban * 4 + 1`` in the default environment (81 for 20 bridges). See
    :class:`BranchingQNetwork` for the architecture, shapes and errors.
    """

    def __init__(
        self,
        obs_dim: int,
        n_urban: int,
        hidden: Sequence[int] = (512, 1024, 512),
        dueling: bool = False,
        noisy: bool = False,
    ) -> None:
        super().__init__(obs_dim, n_urban, URBAN_N_ACTIONS, hidden=hidden, dueling=dueling, noisy=noisy)


class RuralQNetwork(BranchingQNetwork):
    """Rural agent: a single branch over the fleet strategies → Q ``(B, 1, n_strategies)``.

    See :class:`BranchingQNetwork` for the architecture, shapes and errors.
    """

    def __init__(
        self,
        obs_dim: int = RURAL_OBS_DIM,
        n_strategies: int = RURAL_N_STRATEGIES,
        hidden: Sequence[int] = (256, 256),
        dueling: bool = False,
        noisy: bool = False,
    ) -> None:
        super().__init__(obs_dim, 1, n_strategies, hidden=hidden, dueling=dueling, noisy=noisy)


def greedy_actions(q: Tensor) -> Tensor:
    """Factored argmax: the best action of every branch independently (Tavakoli et al., AAAI 2018).

    Args:
        q: Q-values ``(B, n_branches, n_actions)``, any floating dtype; bf16/fp16 are cast to float32
            first so ties and near-ties resolve as in a full-precision run.

    Returns:
        int64 tensor ``(B, n_branches)`` with values in ``[0, n_actions)``, on ``q``'s device.

    Raises:
        ValueError: if ``q`` is not 3-dimensional.
    """
    if q.dim() != 3:
        raise ValueError(f"expected q of shape (B, n_branches, n_actions), got {tuple(q.shape)}")
    if q.dtype != torch.float32:
        q = q.float()
    return q.argmax(dim=-1)
