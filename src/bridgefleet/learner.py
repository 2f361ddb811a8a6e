"""DQN learner shared by the urban and rural agents.

The learner works on any Q-network that maps ``(B, obs_dim)`` to ``(B, n_branches, n_actions)`` (see
:mod:`bridgefleet.agents.networks`): branching DQN with one TD target per branch (Tavakoli et al.,
AAAI 2018), optional Double DQN targets (van Hasselt, Guez & Silver, AAAI 2016), n-step returns
through the per-sample ``discount``, prioritized-replay importance weights (Schaul et al., ICLR 2016),
mixed precision, and ``torch.compile``.
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from bridgefleet.agents.networks import greedy_actions

LOSSES = ("mse", "huber")
COMPILE_MODES = ("off", "default", "reduce-overhead", "max-autotune")
_ORIG_MOD = "_orig_mod."
_STATE_FORMAT = 1


@dataclass
class LearnerConfig:
    """Hyper-parameters of :class:`DQNLearner`; validated on construction.

    Raises:
        ValueError: if a value is out of range; the message names the field.
    """

    lr: float = 1e-4
    """Adam learning rate (> 0)."""
    gamma: float = 0.95
    """Per-step discount factor in (0, 1]; the learner itself uses the per-sample ``discount``."""
    n_step: int = 1
    """Length m of the n-step return (≥ 1); informational here, the replay supplies ``discount = γ^m``."""
    double: bool = False
    """Use Double DQN targets (van Hasselt et al., AAAI 2016): online argmax, target evaluation."""
    dueling: bool = False
    """Build dueling heads (Wang et al., ICML 2016); read by the network factory, not the learner."""
    noisy: bool = False
    """Noisy-net exploration (Fortunato et al., ICLR 2018): ε is ignored and noise is resampled."""
    loss: str = "mse"
    """Elementwise TD loss: "mse" (squared error) or "huber" (smooth L1 with δ = 1)."""
    grad_clip: float | None = 10.0
    """Max global gradient norm (> 0), or None for no clipping."""
    target_sync_every: int = 1000
    """Hard target-network copy every this many learner updates (≥ 1); unused when ``polyak_tau`` is set."""
    polyak_tau: float | None = None
    """If set, soft target update ``θ⁻ ← (1−τ)θ⁻ + τθ`` after every update, τ in (0, 1]."""
    amp: bool = False
    """Mixed precision: bf16 autocast on CPU, fp16 autocast + GradScaler on CUDA."""
    compile: str = "off"
    """torch.compile mode of the online/target nets: "off", "default", "reduce-overhead", "max-autotune"."""
    device: str = "auto"
    """Torch device string; "auto" picks "cuda" when available, else "cpu"."""
    hidden: tuple[int, ...] = (512, 1024, 512)
    """Hidden-layer sizes of the Q-network torso; read by the network factory, not the learner."""

    def __post_init__(self) -> None:
        def bad(name: str, why: str) -> ValueError:
            return ValueError(f"LearnerConfig.{name} {why}, got {getattr(self, name)!r}")

        if not (isinstance(self.lr, int | float) and self.lr > 0 and math.isfinite(self.lr)):
            raise bad("lr", "must be a finite number > 0")
        if not (isinstance(self.gamma, int | float) and 0.0 < self.gamma <= 1.0):
            raise bad("gamma", "must be in (0, 1]")
        if not (isinstance(self.n_step, int) and not isinstance(self.n_step, bool) and self.n_step >= 1):
            raise bad("n_step", "must be an int >= 1")
        for name in ("double", "dueling", "noisy", "amp"):
            if not isinstance(getattr(self, name), bool):
                raise bad(name, "must be a bool")
        if self.loss not in LOSSES:
            raise bad("loss", f"must be one of {LOSSES}")
        if self.grad_clip is not None and not (
            isinstance(self.grad_clip, int | float) and self.grad_clip > 0 and math.isfinite(self.grad_clip)
        ):
            raise bad("grad_clip", "must be a finite number > 0 or None")
        if not (
            isinstance(self.target_sync_every, int)
            and not isinstance(self.target_sync_every, bool)
            and self.target_sync_every >= 1
        ):
            raise bad("target_sync_every", "must be an int >= 1")
        if self.polyak_tau is not None and not (
            isinstance(self.polyak_tau, int | float) and 0.0 < self.polyak_tau <= 1.0
        ):
            raise bad("polyak_tau", "must be in (0, 1] or None")
        if self.compile not in COMPILE_MODES:
            raise bad("compile", f"must be one of {COMPILE_MODES}")
        if not isinstance(self.device, str):
            raise bad("device", "must be a string")
        if self.device != "auto":
            try:
                torch.device(self.device)
            except (RuntimeError, ValueError) as exc:
                raise bad("device", "must be 'auto' or a torch device string") from exc
        # YAML gives lists; keep a hashable tuple.
        try:
            hidden = tuple(int(h) for h in self.hidden)
        except (TypeError, ValueError) as exc:
            raise bad("hidden", "must be a sequence of positive ints") from exc
        if any(h <= 0 for h in hidden):
            raise bad("hidden", "must be a sequence of positive ints")
        self.hidden = hidden


def resolve_device(device: str) -> torch.device:
    """Map a config device string to a :class:`torch.device` ("auto" → cuda if available, else cpu).

    Raises:
        ValueError: if a CUDA device is requested but CUDA is not available.
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device {device}: CUDA is not available on this machine (torch {torch.__version__}); "
                         "use --device cpu or auto")
    return dev


def _clean_keys(state: Mapping[str, Any]) -> dict[str, Any]:
    """Drop torch.compile's ``_orig_mod.`` wrapper prefixes so compiled and eager learners interchange."""
    return {k.replace(_ORIG_MOD, ""): v for k, v in state.items()}


_BATCH_DTYPES = {
    "obs": torch.float32,
    "action": torch.int64,
    "reward": torch.float32,
    "next_obs": torch.float32,
    "done": torch.float32,
    "discount": torch.float32,
    "weights": torch.float32,
}
_REQUIRED = ("obs", "action", "reward", "next_obs", "done", "discount")


class DQNLearner:
    """Online/target Q-networks, Adam optimiser and the (branching, double, n-step) DQN update.

    Acting, TD targets and updates share one code path for every network whose output is
    ``(B, n_branches, n_actions)`` — urban ``(B, n_urban, 5)`` and rural ``(B, 1, 8)``.

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
        self._cudagraphs = cuda and config.compile == "reduce-overhead"
        self._step = 0

    # ------------------------------------------------------------------ properties / helpers
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
        fraction ε of the bridges explore at every step. With ``config.noisy`` the online network acts
        greedily in train mode with freshly resampled noise (one sample per call) and ε is ignored
        (Fortunato et al., ICLR 2018).

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
        was_training = self.online.training
        self.online.train()
        self._reset_noise(self.online)
        self._mark_step()
        with self._autocast():
            q = self._online_fwd(x)
        actions = greedy_actions(q).cpu().numpy()
        self.online.train(was_training)
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
        """Online Q-values ``(E, n_branches, n_actions)`` as float32 on the learner device (eval mode).

        Raises:
            ValueError: if ``obs`` is not 2-D.
        """
        x = self._obs_tensor(obs)
        was_training = self.online.training
        self.online.eval()
        try:
            self._mark_step()
            with self._autocast():
                return self._online_fwd(x).float().clone()
        finally:
            self.online.train(was_training)

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
        if out["action"].dim() != 2 or out["action"].shape[0] != b:
            raise ValueError(f"action must be (B, n_branches) with B={b}, got {tuple(out['action'].shape)}")
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
    def td_targets(self, reward: Tensor, next_obs: Tensor, done: Tensor, discount: Tensor) -> Tensor:
        """Branching TD targets ``y (B, n_branches)`` float32, no gradient.

        ``y_d = r_d + discount·(1 − done)·Q⁻_d(s', a*_d)`` with ``a*_d = argmax_a Q_d(s', a)`` of the
        online net if ``config.double`` (van Hasselt et al., AAAI 2016) else of the target net
        (Mnih et al. 2015); one target per branch (Tavakoli et al., AAAI 2018). A scalar reward
        ``(B,)`` is shared by all branches, a per-branch reward ``(B, n_branches)`` is used per branch.
        All tensors must already be on the learner device; ``discount`` is γ^m for an m-step return.

        Args:
            reward: ``(B,)`` or ``(B, n_branches)`` float32.
            next_obs: ``(B, obs_dim)`` float32.
            done: ``(B,)`` float32, 1 where the episode terminated (no bootstrap).
            discount: ``(B,)`` float32.
        """
        with self._autocast():
            q_next_target = self._target_fwd(next_obs)
        q_next_target = q_next_target.float()
        if self.config.double:
            with self._autocast():
                q_next_online = self._online_fwd(next_obs)
            a_star = greedy_actions(q_next_online)
            bootstrap = q_next_target.gather(-1, a_star.unsqueeze(-1)).squeeze(-1)
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
            batch: ``obs (B, obs_dim) f32``, ``action (B, n_branches) int64``,
                ``reward (B,) or (B, n_branches) f32``, ``next_obs (B, obs_dim) f32``,
                ``done (B,) f32`` (1 = terminated), ``discount (B,) f32`` (γ^m), and optionally
                ``weights (B,) f32`` importance-sampling weights (default ones). NumPy arrays or tensors
                on any device; extra keys (e.g. ``indices``) are ignored.

        Returns:
            ``{"loss": float, "td_error": np.ndarray (B,) float32 (mean over branches of |y − Q|, for
            PER priorities), "grad_norm": float (before clipping), "q_mean": float}``; all come from a
            single device-to-host transfer.

        Raises:
            ValueError: if a required key is missing or a field has the wrong shape.
        """
        t = self._to_device(batch)
        self._reset_noise(self.online, self.target)
        self._mark_step()
        # Targets first: their graph outputs are consumed before the online forward runs again.
        y = self.td_targets(t["reward"], t["next_obs"], t["done"], t["discount"])

        with self._autocast():
            q_all = self._online_fwd(t["obs"])
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
        grad_norm = torch.nn.utils.clip_grad_norm_(self.online.parameters(), max_norm)
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
            target_params = list(self.target.parameters())
            online_params = list(self.online.parameters())
            torch._foreach_lerp_(target_params, online_params, float(tau))
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
        """Restore :meth:`state_dict` output, whether or not either learner is compiled.

        Raises:
            KeyError: if a section is missing.
            RuntimeError: if the network shapes do not match (from ``nn.Module.load_state_dict``).
        """
        self.online.load_state_dict(_clean_keys(state["online"]))
        self.target.load_state_dict(_clean_keys(state["target"]))
        self.optimizer.load_state_dict(state["optimizer"])
        scaler_state = state.get("scaler") or {}
        if scaler_state and self.scaler.is_enabled():
            self.scaler.load_state_dict(scaler_state)
        self._step = int(state["step"])

    def save(self, path: str | Path) -> None:
        """Write :meth:`state_dict` to ``path`` with ``torch.save``."""
        torch.save(self.state_dict(), path)

    def load(self, path: str | Path) -> None:
        """Read a file written by :meth:`save` (``weights_only=True``) onto this learner's device."""
        self.load_state_dict(torch.load(path, map_location=self.device, weights_only=True))
