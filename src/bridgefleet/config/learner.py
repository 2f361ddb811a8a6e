"""The learner's settings (:class:`LearnerConfig`), torch-free so that a training config can be read without
importing torch."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

LOSSES = ("mse", "huber")
COMPILE_MODES = ("off", "default", "reduce-overhead", "max-autotune")
TARGETS = ("max", "double", "sarsa")


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
    target: str = "max"
    """What the TD target bootstraps from at the next state: "max" (DQN: max_a Q⁻(s′, a); Mnih et al., Nature
    2015), "double" (Q⁻(s′, argmax_a Q(s′, a)); van Hasselt et al., AAAI 2016) or "sarsa" (Q⁻(s′, a′) of the
    action a′ the batch's ``next_action`` says was taken there; Sutton & Barto 2018, §6.4)."""
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
        for name in ("dueling", "noisy", "amp"):
            if not isinstance(getattr(self, name), bool):
                raise bad(name, "must be a bool")
        if self.target not in TARGETS:
            raise bad("target", f"must be one of {TARGETS}")
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
        if self.device != "auto" and not re.fullmatch(r"(cpu|cuda|mps|xpu)(:\d+)?", self.device):
            raise bad("device", "must be 'auto' or a torch device string")
        # YAML gives lists; keep a hashable tuple.
        try:
            hidden = tuple(int(h) for h in self.hidden)
        except (TypeError, ValueError) as exc:
            raise bad("hidden", "must be a sequence of positive ints") from exc
        if any(h <= 0 for h in hidden):
            raise bad("hidden", "must be a sequence of positive ints")
        self.hidden = hidden
