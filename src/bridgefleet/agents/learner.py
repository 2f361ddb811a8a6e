"""The one DQN learner of every agent: the urban, rural and per-bridge Q-networks all train through it.

The learner works on any Q-network that maps ``(B, obs_dim)`` to ``(B, n_branches, n_actions)`` (see
:mod:`bridgefleet.agents.networks`) or to ``(B, n_actions)`` (one branch, as the per-bridge network):
branching DQN with one TD target per branch (Tavakoli et al., AAAI 2018), the target's bootstrap as an
option (max, Double DQN — van Hasselt, Guez & Silver, AAAI 2016 — or SARSA on the action taken), n-step
returns through the per-sample ``discount``, prioritized-replay importance weights (Schaul et al., ICLR 2016),
a hard or Polyak target update, mixed precision, and ``torch.compile``. One checkpoint schema
(:meth:`DQNLearner.state_dict`) for every agent.
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from bridgefleet.agents.networks import greedy_actions
from bridgefleet.config.learner import LearnerConfig

_ORIG_MOD = "_orig_mod."
_STATE_FORMAT = 2
"""1: the urban and rural learners' state (optimizer under "optimizer"); 2: the same for every agent. The
per-bridge learner's state before format 2 has no format, its optimizer under "opt" and no scaler: it loads."""


def resolve_device(device: str) -> torch.device:
    """Map a config device string to a :class:`torch.device` ("auto" → cuda if available, else cpu).

    Raises:
        ValueError: a string torch does not read as a device, or a CUDA device where CUDA is not available.
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:  # torch's "Expected one of cpu, cuda, …" lists its internal device types
        raise ValueError(f"--device {device!r}: use cpu, cuda or auto") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device {device}: CUDA is not available on this machine (torch {torch.__version__}); "
                         "use --device cpu or auto")
    return dev


def _branches(q: Tensor) -> Tensor:
    """Q ``(B, n_branches, n_actions)``; a one-branch network's ``(B, n_actions)`` gains its branch axis."""
    return q.unsqueeze(1) if q.dim() == 2 else q


def _clean_keys(state: Mapping[str, Any]) -> dict[str, Any]:
    """Drop torch.compile's ``_orig_mod.`` wrapper prefixes so compiled and eager learners interchange."""
    return {k.replace(_ORIG_MOD, ""): v for k, v in state.items()}


_BATCH_DTYPES = {
    "obs": torch.float32,
    "action": torch.int64,
    "reward": torch.float32,
    "next_obs": torch.float32,
    "next_action": torch.int64,
    "done": torch.float32,
    "discount": torch.float32,
    "weights": torch.float32,
}
_REQUIRED = ("obs", "action", "reward", "next_obs", "done", "discount")


class DQNLearner:
    """Online/target Q-networks, Adam optimiser and the (branching, max / double / SARSA, n-step) DQN update.

    Acting, TD targets and updates share one code path for every network whose output is
    ``(B, n_branches, n_actions)`` — urban ``(B, n_urban, 5)`` and rural ``(B, 1, 8)`` — or ``(B, n_actions)``,
    one branch, as the per-bridge network's ``(B, 5)``.

    Methods come from: DQN (Mnih et al., Nature 2015: target network, TD loss); branching targets, one
    per action dimension (Tavakoli et al., AAAI 2018); Double DQN (van Hasselt et al., AAAI 2016);
    noisy exploration (Fortunato et al., ICLR 2018); importance weights from prioritized replay
    (Schaul et al., ICLR 2016).

    Args:
        net_factory: builds a fresh online network (float32 parameters). The target network is a
            deep copy of it with gradients disabled. If the network has a ``reset_noise()`` method it
            is called when ``config.noisy`` is set.
        config: hyper-parameters, see :class:`LearnerConfig`.

    Raises:
        ValueError: if CUDA is requested but unavailable.
    """

    def __init__(self, net_factory: Callable[[], nn.Module], config: LearnerConfig) -> None:
        self.config = config
        self.device = resolve_device(config.device)
        self.online: nn.Module = net_factory().to(device=self.device, dtype=torch.float32)
        self.target: nn.Module = copy.deepcopy(self.online)
        self.target.requires_grad_(False)
        self.online.train()
        # Target stays in train mode so a noisy target uses its own noise sample (Fortunato et al.).
        self.target.train()

        cuda = self.device.type == "cuda"
        self._amp_dtype = (torch.float16 if cuda else torch.bfloat16) if config.amp else None
        # fp16 needs loss scaling; bf16 has fp32's exponent range and does not.
        self.scaler = torch.amp.GradScaler("cuda", enabled=config.amp and cuda)
        self.optimizer = torch.optim.Adam(
            self.online.parameters(), lr=config.lr, fused=True  # fused kernels exist for CPU and CUDA
        )

        if config.compile == "off":
            self._online_fwd: Callable[[Tensor], Tensor] = self.online
            self._target_fwd: Callable[[Tensor], Tensor] = self.target
        else:
            # Compiled wrappers share parameters with the originals, so in-place loads stay visible.
            self._online_fwd = torch.compile(self.online, mode=config.compile)
            self._target_fwd = torch.compile(self.target, mode=config.compile)
        self._compiled = config.compile != "off"
        self._online_params = list(self.online.parameters())
        self._target_params = list(self.target.parameters())
        self._cudagraphs = cuda and config.compile == "reduce-overhead"
        self._step = 0

    # ------------------------------------------------------------------ properties / helpers
    @property
    def acting(self) -> nn.Module:
        """The network that decides (acting, evaluation, the kept best model): the Polyak-averaged target when
        ``polyak_tau`` is set (smoother than the online network; measured on the default fleet's validation
        fleets: best −504.4 with it, −511 with hard syncs), else the online one."""
        return self.target if self.config.polyak_tau is not None else self.online

    @property
    def _acting_fwd(self) -> Callable[[Tensor], Tensor]:
        return self._target_fwd if self.config.polyak_tau is not None else self._online_fwd

    @property
    def step(self) -> int:
        """Number of :meth:`update` calls so far (including restored ones after :meth:`load_state_dict`)."""
        return self._step

    def _autocast(self) -> contextlib.AbstractContextManager[Any]:
        if self._amp_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self._amp_dtype)

    def _reset_noise(self, *nets: nn.Module) -> None:
        if self.config.noisy:
            for net in nets:
                reset = getattr(net, "reset_noise", None)
                if reset is not None:
                    reset()

    def _obs_tensor(self, obs: np.ndarray | Tensor) -> Tensor:
        t = torch.as_tensor(obs, dtype=torch.float32).to(self.device, non_blocking=True)
        if t.dim() != 2:
            raise ValueError(f"expected obs of shape (E, obs_dim), got {tuple(t.shape)}")
        self._mark_batch_dynamic(t)
        return t

    def _mark_batch_dynamic(self, t: Tensor) -> None:
        if self._compiled:
            # One dynamic-batch graph per context instead of a static one first and a dynamic one
            # on the next batch size: keeps the shared forward under dynamo's recompile limit.
            torch._dynamo.maybe_mark_dynamic(t, 0)

    def _mark_step(self) -> None:
        if self._cudagraphs:
            # CUDA-graph trees reuse output memory; tell them a new iteration starts.
            torch.compiler.cudagraph_mark_step_begin()

    # ------------------------------------------------------------------ acting
    @torch.no_grad()
    def act(self, obs: np.ndarray | Tensor, epsilon: float, rng: np.random.Generator) -> np.ndarray:
        """Exploratory actions for a batch of environments.

        Without noisy nets this is ε-greedy *per branch*: each branch (bridge) independently takes a
        uniformly random action with probability ε, otherwise its greedy action, so on average a
        fraction ε of the bridges explore at every step. With ``config.noisy`` the acting network
        (:attr:`acting`) acts greedily in train mode with freshly resampled noise (one sample per call) and ε
        is ignored (Fortunato et al., ICLR 2018).

        Args:
            obs: ``(E, obs_dim)`` float32 observations.
            epsilon: exploration probability in [0, 1].
            rng: generator for the ε-greedy draws (the network noise uses torch's global RNG).

        Returns:
            int64 array ``(E, n_branches)`` with values in ``[0, n_actions)``.

        Raises:
            ValueError: if ``obs`` is not 2-D or ``epsilon`` is outside [0, 1].
        """
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        x = self._obs_tensor(obs)
        net = self.acting
        was_training = net.training
        net.train()
        self._reset_noise(net)
        self._mark_step()
        with self._autocast():
            q = self._acting_fwd(x)
        actions = greedy_actions(q).cpu().numpy()
        net.train(was_training)
        if self.config.noisy or epsilon == 0.0:
            return actions
        n_actions = q.shape[-1]
        explore = rng.random(actions.shape) < epsilon
        random_actions = rng.integers(0, n_actions, size=actions.shape, dtype=np.int64)
        return np.where(explore, random_actions, actions)

    @torch.no_grad()
    def greedy(self, obs: np.ndarray | Tensor) -> np.ndarray:
        """Greedy actions for evaluation: eval mode (mean weights of noisy layers), no exploration.

        Args:
            obs: ``(E, obs_dim)`` float32 observations.

        Returns:
            int64 array ``(E, n_branches)``.

        Raises:
            ValueError: if ``obs`` is not 2-D.
        """
        return greedy_actions(self.q_values(obs)).cpu().numpy()

    @torch.no_grad()
    def q_values(self, obs: np.ndarray | Tensor) -> Tensor:
        """Q-values of the acting network (:attr:`acting`) as float32 on the learner device (eval mode):
        ``(E, n_branches, n_actions)``, or ``(E, n_actions)`` for a one-branch network.

        Raises:
            ValueError: if ``obs`` is not 2-D.
        """
        x = self._obs_tensor(obs)
        net = self.acting
        was_training = net.training
        net.eval()
        try:
            self._mark_step()
            with self._autocast():
                q = self._acting_fwd(x).float()
            # CUDA-graph trees reuse their output memory at the next call: only then is a copy needed
            return q.clone() if self._cudagraphs else q
        finally:
            net.train(was_training)

    # ------------------------------------------------------------------ learning
    def _to_device(self, batch: Mapping[str, np.ndarray | Tensor]) -> dict[str, Tensor]:
        missing = [k for k in _REQUIRED if k not in batch]
        if missing:
            raise ValueError(f"batch is missing keys {missing}")
        out: dict[str, Tensor] = {}
        for key, dtype in _BATCH_DTYPES.items():
            if key in batch:
                out[key] = torch.as_tensor(batch[key], dtype=dtype).to(self.device, non_blocking=True)
        b = out["obs"].shape[0]
        if out["obs"].dim() != 2 or out["next_obs"].shape != out["obs"].shape:
            raise ValueError(
                f"obs and next_obs must both be (B, obs_dim), got {tuple(out['obs'].shape)} "
                f"and {tuple(out['next_obs'].shape)}"
            )
        for key in ("action", "next_action"):
            if key in out and out[key].dim() == 1:  # one branch (the per-bridge network)
                out[key] = out[key].unsqueeze(-1)
        if out["action"].dim() != 2 or out["action"].shape[0] != b:
            raise ValueError(f"action must be (B,) or (B, n_branches) with B={b}, got {tuple(out['action'].shape)}")
        if self.config.target == "sarsa" and "next_action" not in out:
            raise ValueError("batch is missing next_action, which SARSA targets (target: sarsa) bootstrap on")
        for key in ("done", "discount", "weights"):
            if key in out and out[key].shape != (b,):
                raise ValueError(f"{key} must be ({b},), got {tuple(out[key].shape)}")
        self._mark_batch_dynamic(out["obs"])
        self._mark_batch_dynamic(out["next_obs"])
        r = out["reward"]
        if not (r.shape == (b,) or (r.dim() == 2 and r.shape[0] == b)):
            raise ValueError(f"reward must be ({b},) or ({b}, n_branches), got {tuple(r.shape)}")
        return out

    @torch.no_grad()
    def td_targets(self, reward: Tensor, next_obs: Tensor, done: Tensor, discount: Tensor,
                   next_action: Tensor | None = None) -> Tensor:
        """Branching TD targets ``y (B, n_branches)`` float32, no gradient.

        ``y_d = r_d + discount·(1 − done)·Q⁻_d(s', a*_d)`` with, by ``config.target``, ``a*_d = argmax_a
        Q⁻_d(s', a)`` ("max", Mnih et al. 2015), ``argmax_a Q_d(s', a)`` of the online net ("double", van Hasselt
        et al., AAAI 2016) or the action taken at s′, ``next_action (B, n_branches) int64`` ("sarsa"); one
        target per branch (Tavakoli et al., AAAI 2018). A scalar reward
        ``(B,)`` is shared by all branches, a per-branch reward ``(B, n_branches)`` is used per branch.
        All tensors must already be on the learner device; ``discount`` is γ^m for an m-step return.

        Args:
            reward: ``(B,)`` or ``(B, n_branches)`` float32.
            next_obs: ``(B, obs_dim)`` float32.
            done: ``(B,)`` float32, 1 where the episode terminated (no bootstrap).
            discount: ``(B,)`` float32.
        """
        with self._autocast():
            q_next_target = _branches(self._target_fwd(next_obs))
        q_next_target = q_next_target.float()
        if self.config.target == "double":
            with self._autocast():
                q_next_online = _branches(self._online_fwd(next_obs))
            a_star = greedy_actions(q_next_online)
            bootstrap = q_next_target.gather(-1, a_star.unsqueeze(-1)).squeeze(-1)
        elif self.config.target == "sarsa":
            bootstrap = q_next_target.gather(-1, next_action.unsqueeze(-1)).squeeze(-1)
        else:
            bootstrap = q_next_target.amax(dim=-1)
        if reward.dim() == 1:
            reward = reward.unsqueeze(-1)
        not_done = (discount * (1.0 - done)).unsqueeze(-1)
        return reward + not_done * bootstrap

    def update(self, batch: Mapping[str, np.ndarray | Tensor]) -> dict[str, Any]:
        """One gradient step on a replay batch.

        Loss = mean_b [ w_b · mean_d ℓ(Q_d(s_b, a_bd) − y_bd) ] with ℓ the squared error or the Huber
        loss (δ = 1) and ``y`` from :meth:`td_targets` (no gradient). Gradients are clipped to
        ``config.grad_clip`` global norm (after un-scaling under fp16 AMP; a step with inf/NaN
        gradients is skipped by the GradScaler). Noise of both nets is resampled once per update when
        ``config.noisy``. The target net is hard-synced every ``config.target_sync_every`` updates, or
        Polyak-averaged after every update when ``config.polyak_tau`` is set.

        Args:
            batch: ``obs (B, obs_dim) f32``, ``action (B, n_branches) int64`` (``(B,)`` for a one-branch
                network), ``reward (B,) or (B, n_branches) f32``, ``next_obs (B, obs_dim) f32``,
                ``done (B,) f32`` (1 = terminated), ``discount (B,) f32`` (γ^m), ``next_action`` shaped as
                ``action`` (required for ``target: sarsa``), and optionally ``weights (B,) f32``
                importance-sampling weights (default ones). NumPy arrays or tensors on any device; extra keys
                (e.g. ``indices``) are ignored.

        Returns:
            ``{"loss": float, "td_error": np.ndarray (B,) float32 (mean over branches of |y − Q|, for
            PER priorities), "grad_norm": float (before clipping), "q_mean": float}``; all come from a
            single device-to-host transfer.

        Raises:
            ValueError: if a required key is missing (``next_action`` for SARSA targets) or a field has the
                wrong shape.
        """
        t = self._to_device(batch)
        self._reset_noise(self.online, self.target)
        self._mark_step()
        # Targets first: their graph outputs are consumed before the online forward runs again.
        y = self.td_targets(t["reward"], t["next_obs"], t["done"], t["discount"], t.get("next_action"))

        with self._autocast():
            q_all = _branches(self._online_fwd(t["obs"]))
        if q_all.shape[1] != t["action"].shape[1]:
            raise ValueError(
                f"action has {t['action'].shape[1]} branches but the network outputs {q_all.shape[1]}"
            )
        q = q_all.float().gather(-1, t["action"].unsqueeze(-1)).squeeze(-1)
        mse = self.config.loss == "mse"
        elem = (q - y).square() if mse else F.huber_loss(q, y, reduction="none", delta=1.0)
        per_sample = elem.mean(dim=-1)
        weights = t.get("weights")
        loss = (per_sample * weights).mean() if weights is not None else per_sample.mean()

        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        max_norm = self.config.grad_clip if self.config.grad_clip is not None else math.inf
        # foreach: one call for every tensor instead of one per tensor (measured: 6.2 -> 5.6 ms per 2,048-batch
        # per-bridge update with fused Adam, fp32, one AVX2 thread; docs/benchmarks.md)
        grad_norm = torch.nn.utils.clip_grad_norm_(self._online_params, max_norm, foreach=True)
        self.scaler.step(self.optimizer)
        self.scaler.update()

        self._step += 1
        self._update_target()

        with torch.no_grad():
            td_error = (y - q.detach()).abs().mean(dim=-1)
            scalars = torch.stack([loss.detach(), grad_norm.float(), q.detach().mean()])
            stats = torch.cat([td_error, scalars]).cpu().numpy()
        b = td_error.shape[0]
        return {
            "loss": float(stats[b]),
            "td_error": stats[:b].copy(),
            "grad_norm": float(stats[b + 1]),
            "q_mean": float(stats[b + 2]),
        }

    @torch.no_grad()
    def _update_target(self) -> None:
        tau = self.config.polyak_tau
        if tau is not None:
            torch._foreach_lerp_(self._target_params, self._online_params, float(tau))
        elif self._step % self.config.target_sync_every == 0:
            self.sync_target()

    @torch.no_grad()
    def sync_target(self) -> None:
        """Hard copy of the online weights into the target net, in place (compiled wrappers see it)."""
        self.target.load_state_dict(self.online.state_dict())

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """Learner state for checkpoints: online, target, optimizer, scaler, step.

        Keys come from the original (uncompiled) modules, so they never contain ``_orig_mod.``. Values
        are tensors, dicts, lists, tuples, numbers, bools, None and strings only, so the result loads
        with ``torch.load(..., weights_only=True)``.
        """
        return {
            "format": _STATE_FORMAT,
            "online": self.online.state_dict(),
            "target": self.target.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scaler": self.scaler.state_dict(),
            "step": self._step,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict` output (any format, see :data:`_STATE_FORMAT`), whether or not either
        learner is compiled.

        Raises:
            KeyError: if a section is missing.
            RuntimeError: if the network shapes do not match (from ``nn.Module.load_state_dict``).
        """
        self.online.load_state_dict(_clean_keys(state["online"]))
        self.target.load_state_dict(_clean_keys(state["target"]))
        self.optimizer.load_state_dict(state["optimizer"] if "optimizer" in state else state["opt"])
        scaler_state = state.get("scaler") or {}
        if scaler_state and self.scaler.is_enabled():
            self.scaler.load_state_dict(scaler_state)
        self._step = int(state["step"])

    def load_weights(self, weights: Mapping[str, Tensor]) -> None:
        """Set the online and target networks to ``weights`` (a network's ``state_dict``, as final.pt keeps the
        acting network of a run): for a trained policy, not for more training (the optimizer is untouched)."""
        self.online.load_state_dict(_clean_keys(weights))
        self.target.load_state_dict(_clean_keys(weights))

    def save(self, path: str | Path) -> None:
        """Write :meth:`state_dict` to ``path`` with ``torch.save``."""
        torch.save(self.state_dict(), path)

    def load(self, path: str | Path) -> None:
        """Read a file written by :meth:`save` (``weights_only=True``) onto this learner's device."""
        self.load_state_dict(torch.load(path, map_location=self.device, weights_only=True))
