"""What a training run is: :class:`TrainConfig`, and which of its options each kind of run reads (the presets,
and how a preset, a YAML file and command-line overrides combine: :mod:`bridgefleet.config.presets`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from bridgefleet.config import ConfigError, FleetConfig, quantities
from bridgefleet.config.learner import LearnerConfig
from bridgefleet.config.names import unknown_names
from bridgefleet.config.seeds import TEST_FLEETS, TEST_SEED, VALIDATION_SEED, training_seeds_hit


def cosine_share(progress: float, end: float = 0.0) -> float:
    """A cosine schedule's share of its start value at ``progress`` in [0, 1]: from 1 down to ``end`` (SGDR,
    Loshchilov & Hutter, ICLR 2017). Serves the episode schedule (:meth:`TrainConfig.lr_at`) and the fits of a run
    with a teacher (:func:`bridgefleet.training.distill_run.warmup_cosine`)."""
    return end + (1.0 - end) * 0.5 * (1.0 + math.cos(math.pi * progress))


@dataclass
class TrainConfig:
    """Every knob of a training run (presets in :data:`bridgefleet.config.presets.PRESETS` set some of them)."""

    preset: str = "default"
    """Name of the preset the run started from (informational)."""
    agent: str = "fleet"
    """"fleet": the plan's urban (20 × 5 branches) and rural (8 strategies) agents, whose fleet always has the urban
    and the rural agency (``FleetConfig.agencies`` is set to ``urban_rural``); "bridge": one Q-network shared by
    every bridge, budgets met by a knapsack on its benefits (:mod:`bridgefleet.agents.bridge`)."""
    bridge_hidden: tuple[int, ...] = (128, 128)
    """Torso widths of the per-bridge Q-network (agent: bridge)."""
    episodes: int = 2000
    """Training episodes in total, summed over the vector envs (rounded up to a multiple of num_envs)."""
    num_envs: int = 16
    """Fleets simulated in parallel (vectorized environments)."""
    vector: str = "native"
    """Vector env: "native" (batched NumPy simulator), "sync" or "async" (gymnasium over FleetEnv)."""
    device: str = "auto"
    """Torch device: "auto" (cuda when available), "cpu" or "cuda"."""
    seed: int = 0
    """Seed of training fleets (env i gets seed + i), exploration and network initialisation."""
    lr: float = 1e-4
    """Adam learning rate."""
    batch_size: int = 512
    """Replay batch per learner update."""
    buffer_capacity: int = 200_000
    """Replay capacity in transitions, per agent."""
    updates_per_step: float = 1.0
    """Learner updates per vector-env step, per agent (fractions accumulate)."""
    min_samples_per_transition: float = 0.0
    """Per-bridge agent: if above 0, the updates a simulated year are raised to at least this × the bridge-year
    transitions stored a year (num_envs × bridges, at most ``buffer_capacity`` / (``replay_episodes`` × years): an
    episode larger than its share of the replay keeps the bridges that fit) / ``batch_size``, so each stored
    transition is sampled at least about this many times on average whatever the fleet's size (a replay ratio
    counted in samples per transition; Fedus et al. 2020 count updates per transition). With the ``default`` preset
    (2) the default fleet (100 bridges) gets 1.56 updates a year, dc-2019 (244) and Indiana (4,794) 3.3. 0:
    ``updates_per_step`` alone."""
    replay_episodes: int = 1
    """Per-bridge agent: a vector episode stores at most ``buffer_capacity`` / (this × years) bridges' whole
    trajectories, drawn at random when it brings more, so the replay holds at least this many episodes and the
    updates that ``min_samples_per_transition`` sets stop growing with the fleet beyond that share. With the
    ``default`` preset (4, 400,000 slots: 3,333 bridges an episode): the default fleet (16 × 100 bridges) stores every
    bridge as with 1, dc-2019 (16 × 244) 3,333 of 3,904 and 3.3 updates a year (3.8 with 1), Indiana (16 × 4,794)
    3,333 of 76,704 and 3.3 updates a year (13,333 and 13.0 with 1; docs/decisions.md, "A replay of four
    episodes"). 1: an episode may fill the replay, as runs before it."""
    learning_starts: int = 1000
    """Transitions in replay before learning starts."""
    target_sync_every: int = 1000
    """Hard target-network sync every this many updates (unless ``polyak_tau`` is set)."""
    polyak_tau: float | None = None
    """If set, the target network is a Polyak average θ⁻ ← (1 − τ)θ⁻ + τθ after every update; the per-bridge
    agent then also acts and is evaluated with it (smoother than the online network)."""
    weight_average: float | None = None
    """If set, evaluations, the kept best model and final.pt use an exponential moving average of the acting
    network's weights, θ̄ ← d θ̄ + (1 − d) θ after every vector episode with updates (d this decay, in (0, 1)), not
    the acting weights of the moment: a greedy policy on a still-learning Q churns from one evaluation to the next,
    the average less (Polyak & Juditsky 1992; Izmailov et al. 2018 average uniformly). Exploration still acts
    with the acting network. None: no average."""
    grad_clip: float = 10.0
    """Gradient-norm clip."""
    loss: str = "mse"
    """TD loss: "mse" (the plan) or "huber"."""
    amp: bool | str = False
    """Mixed precision: "auto" (fp16 + GradScaler on CUDA, bf16 autocast on a CPU with native bf16, each
    where a probe finds it faster than fp32; else fp32: see :mod:`bridgefleet.training.hardware`), true (bf16 on CPU /
    fp16 on CUDA, forced) or false (fp32)."""
    threads: int | str = "auto"
    """torch intra-op threads: "auto" (probed on the cores this process may use) or a number ≥ 1."""
    compile: str = "off"
    """torch.compile mode: off, default, reduce-overhead, max-autotune."""
    double: bool = False
    """Double DQN targets."""
    dueling: bool = False
    """Dueling heads."""
    n_step: int = 1
    """n of the n-step return."""
    per: bool = False
    """Prioritized experience replay (sum-tree)."""
    per_alpha: float = 0.6
    """PER priority exponent α."""
    per_beta_start: float = 0.4
    """PER importance-sampling exponent β at the start (annealed to 1 over the run)."""
    noisy: bool = False
    """Noisy Nets exploration instead of ε-greedy."""
    eps_start: float = 1.0
    """ε at the start (ε-greedy, per branch)."""
    eps_end: float = 0.05
    """Final ε."""
    eps_decay_fraction: float = 0.5
    """Share of the episodes over which ε decays linearly."""
    lr_end_fraction: float = 1.0
    """Learning rate at the end as a share of ``lr``, reached on a cosine over the schedule's episodes
    (Loshchilov & Hutter, ICLR 2017, without restarts); 1.0 keeps it constant."""
    lr_drop_factor: float = 1.0
    """At each evaluation after ε's decay whose validation return falls more than :data:`LR_DROP_TOLERANCE` of the
    best's size below the best so far, the learning rate (of the schedule above) is multiplied by this, for the rest
    of the run: a cut on a drop rather than on a plateau (``torch.optim.lr_scheduler.ReduceLROnPlateau`` cuts when
    the return stops rising, which a converged run does too), 0–1; 1.0 never cuts."""
    urban_hidden: tuple[int, ...] = (512, 1024, 512)
    """Urban Q-network torso widths (the plan's network)."""
    rural_hidden: tuple[int, ...] = (256, 256)
    """Rural Q-network torso widths."""
    reward_mode: str = "shared"
    """"shared": both agents learn the municipality reward; "own": each its agency's part."""
    urban_reward: str = "per_bridge"
    """"per_bridge" (reward decomposition: branch d learns bridge d's own reward; measured better, see
    docs/learner.md) or "scalar" (one reward for all urban branches)."""
    reward_scale: float | str = 0.01
    """Rewards are multiplied by this before learning (keeps Q-values of order 1–10); "auto": 1 / the standard
    deviation of a bridge's yearly reward when nothing is done, measured on the run's first training fleets before
    training (:func:`bridgefleet.training.loop.fleet_reward_scale`), so the same preset learns at the same scale
    on any fleet."""
    eval_every: int = 200
    """Evaluate every this many training episodes."""
    eval_episodes: int = 50
    """Evaluation fleets (seeds eval_seed, eval_seed+1, …)."""
    eval_seed: int = VALIDATION_SEED
    """First evaluation seed: the validation fleets (:mod:`bridgefleet.config.seeds`); training fleets that
    would meet them, and evaluations on the test fleets, are refused."""
    checkpoint_every: int = 200
    """Checkpoint every this many episodes."""
    checkpoint_replay: bool = False
    """Also save the replay buffers beside each checkpoint (ckpt_*.replay.npz), so that a run resumed from it
    continues exactly as the uninterrupted run would (bitwise on CPU); costs the buffers' size on disk."""
    schedule_episodes: int | None = None
    """Episodes the ε and PER-β schedules are laid over (None: ``episodes``). A resume that changes
    ``episodes`` keeps the first total here, so the schedules continue where they were and never go back."""
    budget_scale_range: tuple[float, float] | None = None
    """Train across budget levels: each training fleet's annual budgets × a level drawn uniformly from [lo, hi]
    every episode (e.g. [0.25, 2], the levels of ``scenarios``), so one run decides at any budget (the agent
    sees the level through its budget and cost-to-budget features). None: the sized budget. Evaluations during
    training stay at the sized budget. Per-bridge agent only."""
    greedy_bootstrap: float = 0.0
    """Per-bridge agent: the share of sampled transitions whose n-step target bootstraps on the action the
    knapsack would fund at s′ without exploration (the greedy coupled policy's), the rest on the action it funded
    there (SARSA; Sutton & Barto 2018, §7.2). In expectation the target is that mix of the two (0.5: their mean;
    an off-policy target like Expected SARSA's, van Seijen et al. 2009). 0: SARSA only, as in runs before it."""
    user_cost_feature: bool = False
    """Per-bridge agent: the network also sees the bridge's yearly user cost while poor
    (:data:`bridgefleet.agents.bridge.N_FEATURES`); off: the 13 inputs of runs before it."""
    budget_level_feature: bool = False
    """Per-bridge agent: the network also sees its agency's budget level, log(the cost of replacing the agency's
    bridges / its annual budget) (:data:`bridgefleet.agents.bridge.LEVEL_FEATURES`, which follow the user cost: with
    it the network reads the user cost too, whatever ``user_cost_feature`` says). Off: the inputs of runs before it."""
    component_features: bool = False
    """Per-bridge agent: the network also sees the bridge's three component ratings, its deck's protection and its
    kind (:data:`bridgefleet.agents.bridge.COMPONENT_FEATURES`, which follow the budget level: with it the network
    reads the user cost and the budget level too). Off: the inputs of runs before it."""
    rating_ramps: bool = False
    """Per-bridge agent: the network also reads the condition rating as 14 ramps, one a half rating point
    (:data:`bridgefleet.agents.bridge.RATING_RAMPS`, computed in the network from its rating input); off: as runs
    before it."""
    stop_at_target: bool = False
    """Stop as soon as an evaluation reaches the target return (benchmarks)."""
    teacher: str | None = None
    """Per-bridge agent: ``lagrangian`` fits the network to the ``lagrangian`` planner's benefits (imitation with
    DAgger rounds, Ross et al., AISTATS 2011; :mod:`bridgefleet.training.distill_run`) instead of learning Q by
    SARSA; the replay, ε and target-network options then have no effect (:data:`IGNORED_BY_TEACHER`). None: SARSA."""
    teacher_levels: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0)
    """With ``teacher``: the budget levels (multiples of the sized budget) the teacher plans at, the same ``num_envs``
    fleets at each in every round."""
    dagger_rounds: int = 1
    """With ``teacher``: rounds after the first fit in which the network decides and the teacher labels the states
    it reaches (then the network is fitted again on every row so far)."""
    fit_epochs: int = 30
    """With ``teacher``: passes over the teacher's rows in the first fit."""
    refit_epochs: int = 20
    """With ``teacher``: passes over every row so far after each DAgger round."""
    teacher_rows: int = 400_000
    """With ``teacher``: the bridge-years a round labels on a fixed fleet (an inventory) at least: it adds sample
    paths up to it (one price search a level serves them all; dc-2019: 14 paths)."""
    teacher_rows_kept: int = 1_200_000
    """With ``teacher``: the most bridge-years a round keeps (a uniform sample of them where it labels more: an
    Indiana round labels 2.3 million), so the fit's time does not grow with the fleet past it."""
    input_scaling: bool = False
    """With ``teacher``: the network also reads its cost-to-budget inputs as logs and standardises every input on
    the first round's rows (:class:`bridgefleet.agents.bridge.BridgeQNetwork`); off: as runs before it."""
    fit_warmup: float = 0.0
    """With ``teacher``: the share of each fit's steps over which the learning rate rises linearly to ``lr``
    before its cosine to 0 (:func:`bridgefleet.training.distill_run.warmup_cosine`); 0: the cosine from the first
    step, as runs before it."""
    margin_weight: float = 0.0
    """With ``teacher``: rows near the teacher's margin (the least scaled benefit it funded that year in that fleet
    and agency) weigh 1 + this × exp(−|distance| / 0.3) in the fit; 0: every row alike."""
    fleet: FleetConfig = field(default_factory=FleetConfig)
    """The fleet simulated."""

    def __post_init__(self) -> None:
        if isinstance(self.fleet, dict):
            self.fleet = FleetConfig.from_dict(self.fleet, "train config 'fleet'")
        levels = self.teacher_levels
        if isinstance(levels, str | int | float) or not levels or not all(
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x > 0 for x in levels):
            raise ConfigError(f"training option teacher_levels = {levels!r}: must be a list of numbers > 0 (multiples "
                              "of the sized budget)", "teacher_levels")
        _check_real("teacher_levels", levels)
        self.teacher_levels = tuple(float(x) for x in levels)
        if self.budget_scale_range is not None:
            r = self.budget_scale_range
            ok = (isinstance(r, list | tuple) and len(r) == 2 and all(
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in r)
                and 0 <= r[0] <= r[1])
            if not ok:
                raise ConfigError(f"training option budget_scale_range = {r!r}: must be two numbers [lo, hi] with "
                                  "0 <= lo <= hi, or left out", "budget_scale_range")
            _check_real("budget_scale_range", r)
            self.budget_scale_range = (float(r[0]), float(r[1]))
        for name in ("urban_hidden", "rural_hidden", "bridge_hidden"):
            widths = getattr(self, name)
            if isinstance(widths, str | int | float) or not all(
                    isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in widths):
                raise ConfigError(f"training option {name} = {widths!r}: must be a list of whole numbers >= 1", name)
            setattr(self, name, tuple(widths))
        for name in ("double", "dueling", "per", "noisy", "checkpoint_replay", "stop_at_target", "user_cost_feature",
                     "rating_ramps", "input_scaling", "budget_level_feature", "component_features"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"training option {name} = {getattr(self, name)!r}: must be true or false", name)
        for name in quantities.TRAINING:  # 1e-4 in a YAML file is a number (YAML 1.2), not text
            setattr(self, name, quantities.yaml_number(getattr(self, name)))
        for name in ("lr", "updates_per_step", "grad_clip", "per_alpha", "per_beta_start", "eps_start", "eps_end",
                     "eps_decay_fraction", "lr_end_fraction", "lr_drop_factor", "greedy_bootstrap",
                     "min_samples_per_transition", "margin_weight", "fit_warmup"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ConfigError(f"training option {name} = {quantities.shown_value(value)}: must be a finite "
                                  "number", name)
        for name in quantities.TRAINING:  # each number in its range (quantities.TRAINING: the unit and why)
            value = getattr(self, name)
            if value is not None and (name != "reward_scale" or isinstance(value, int | float)):
                _check_real(name, value)
        for name in ("episodes", "num_envs", "batch_size", "buffer_capacity", "replay_episodes", "n_step",
                     "learning_starts", "eval_every", "eval_episodes", "checkpoint_every", "target_sync_every", "seed",
                     "eval_seed", "dagger_rounds", "fit_epochs", "refit_epochs", "teacher_rows",
                     "teacher_rows_kept"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"training option {name} = {quantities.shown_value(value)}: must be a whole "
                                  "number", name)
            if abs(value) > quantities.MAX_COUNT:  # the counters are 64-bit; the ranges below say the rest
                raise ConfigError(f"training option {name} = {quantities.shown_value(value)}: must be at most "
                                  f"{quantities.shown(quantities.MAX_COUNT)} in size", name)
        whole = isinstance(self.threads, int) and not isinstance(self.threads, bool)
        most_episodes = max(1, self.buffer_capacity // self.fleet.horizon_years)  # one bridge's trajectory each
        checks = {  # option: (valid, what it must be)
            "seed": (self.seed >= 0, ">= 0"), "eval_seed": (self.eval_seed >= 0, ">= 0"),
            "target_sync_every": (self.target_sync_every >= 1, ">= 1"), "episodes": (self.episodes >= 1, ">= 1"),
            "num_envs": (self.num_envs >= 1, ">= 1"), "batch_size": (self.batch_size >= 1, ">= 1"),
            "buffer_capacity": (self.buffer_capacity >= self.batch_size, f">= batch_size ({self.batch_size})"),
            "n_step": (self.n_step >= 1, ">= 1"),
            "replay_episodes": (1 <= self.replay_episodes <= most_episodes,
                                f">= 1 and at most buffer_capacity / horizon_years ({most_episodes:,}), so that an "
                                "episode stores at least one bridge's whole trajectory"),
            "vector": (self.vector in ("native", "sync", "async"), "native, sync or async"),
            "reward_mode": (self.reward_mode in ("shared", "own"), "shared or own"),
            "urban_reward": (self.urban_reward in ("scalar", "per_bridge"), "scalar or per_bridge"),
            "eval_every": (self.eval_every >= 1, ">= 1"), "eval_episodes": (self.eval_episodes >= 2, ">= 2"),
            "checkpoint_every": (self.checkpoint_every >= 1, ">= 1"), "reward_scale": (self.reward_scale == "auto" or (
                isinstance(self.reward_scale, int | float) and not isinstance(self.reward_scale, bool)
                and math.isfinite(self.reward_scale) and self.reward_scale > 0), "a number > 0 or auto"),
            "learning_starts": (self.learning_starts >= 0, ">= 0"),
            "loss": (self.loss in ("mse", "huber"), "mse or huber"),
            "compile": (self.compile in ("off", "default", "reduce-overhead", "max-autotune"),
                        "off, default, reduce-overhead or max-autotune"),
            "schedule_episodes": (self.schedule_episodes is None or (isinstance(self.schedule_episodes, int)
                                                                     and self.schedule_episodes >= 1),
                                  "a whole number >= 1, or left out"),
            "amp": (self.amp in (True, False, "auto"), "true, false or auto"),
            "agent": (self.agent in ("fleet", "bridge"), "fleet or bridge"),
            "teacher": (self.teacher in (None, "lagrangian"), "lagrangian or left out"),
            "dagger_rounds": (self.dagger_rounds >= 0, ">= 0"), "fit_epochs": (self.fit_epochs >= 1, ">= 1"),
            "refit_epochs": (self.refit_epochs >= 1, ">= 1"), "teacher_rows": (self.teacher_rows >= 1, ">= 1"),
            "teacher_rows_kept": (self.teacher_rows_kept >= 1, ">= 1"),
            "threads": (self.threads == "auto" or (whole and self.threads >= 1), "a whole number >= 1 or auto"),
        }
        for name, (ok, need) in checks.items():
            if not ok:
                raise ConfigError(f"training option {name} = {getattr(self, name)!r}: must be {need}", name)
        if self.agent == "fleet" and self.fleet.agencies != "urban_rural":
            # the plan's agents: the urban agent's bridges and the rural strategies, each with its agency's budget
            self.fleet = self.fleet.replace(agencies="urban_rural")
        if self.teacher is not None and self.agent != "bridge":
            raise ConfigError(f"training option teacher = {self.teacher!r}: a teacher trains the per-bridge network, "
                              f"not agent: {self.agent}; use agent: bridge (or a preset without a teacher)", "teacher")
        self._check_seeds()

    def _check_seeds(self) -> None:
        """Training, validation and test fleets stay apart (:mod:`bridgefleet.config.seeds`)."""
        test = (TEST_SEED, TEST_SEED + TEST_FLEETS)
        ev = (self.eval_seed, self.eval_seed + self.eval_episodes)
        if ev[0] < test[1] and test[0] < ev[1]:
            raise ConfigError(f"training option eval_seed = {self.eval_seed}: the evaluations during training would "
                              f"use test fleets (seeds {TEST_SEED:,} …), which nothing may be tuned or chosen on; "
                              f"evaluate on the validation fleets (eval_seed {VALIDATION_SEED}, the default)",
                              "eval_seed")
        self.check_training_seeds()

    def check_training_seeds(self, paths: int | None = None) -> None:
        """The run's training fleets meet no validation or test fleet; ``paths``: the fleets a teacher's round
        simulates when an inventory gives it more than ``num_envs`` (``training.distill_run.teacher_paths``).

        Raises:
            ConfigError: naming the first seed that would be met.
        """
        e = self.num_envs if paths is None else paths
        n = self.training_fleets if paths is None else (self.dagger_rounds + 1) * paths
        for what, (lo, hi) in (("validation", (self.eval_seed, self.eval_seed + self.eval_episodes)),
                               ("test", (TEST_SEED, TEST_SEED + TEST_FLEETS))):
            hit = training_seeds_hit(self.seed, e, n, lo, hi)
            if hit is not None:
                fleets = f"{n} episodes" if self.teacher is None else f"{n} teacher's fleets"
                per = f"num_envs {e}" if paths is None else f"{e} sample paths a round"
                raise ConfigError(f"training option seed = {self.seed}: with {per} and {fleets} the run would train "
                                  f"on fleet seed {hit}, one of the {what} fleets ({lo} … {hi - 1}); pick another "
                                  "seed", "seed")

    @property
    def training_fleets(self) -> int:
        """Fleets (episodes) the run learns on: ``episodes``, or with ``teacher`` ``num_envs`` sample paths (simulated
        at each of the ``teacher_levels``) in the first fit and in each DAgger round (the first round's fleets on new
        paths)."""
        if self.teacher is None:
            return self.episodes
        return (self.dagger_rounds + 1) * self.num_envs

    @property
    def trained_budget_scales(self) -> tuple[float, float]:
        """(lowest, highest) multiple of the sized budget the run learned at: the ``teacher_levels``' ends with a
        teacher, else ``budget_scale_range`` (per-bridge agent), else (1, 1), the sized budget alone."""
        if self.teacher is not None:
            return min(self.teacher_levels), max(self.teacher_levels)
        if self.agent == "bridge" and self.budget_scale_range is not None:
            return self.budget_scale_range
        return 1.0, 1.0

    @property
    def schedule_total(self) -> int:
        """Episodes the ε and β schedules span (``schedule_episodes``, else ``episodes``)."""
        return self.schedule_episodes or self.episodes

    def lr_at(self, episodes_done: int) -> float:
        """Learning rate after ``episodes_done`` episodes (cosine from lr to lr × lr_end_fraction)."""
        return self.lr * cosine_share(min(1.0, episodes_done / max(1, self.schedule_total)), self.lr_end_fraction)

    def lr_scale_after(self, scale: float, best: float | None, value: float, episodes_done: int) -> float:
        """The learning rate's multiplier after an evaluation at ``episodes_done`` episodes: ``scale`` ×
        ``lr_drop_factor`` if the validation return ``value`` fell more than :data:`LR_DROP_TOLERANCE` × |``best``|
        below ``best``, the best before it (None: the first evaluation), once ε has decayed (while it decays the
        validation return dips as the policy changes: Indiana's seed 2 cut twice by episode 480), else ``scale``."""
        explored = episodes_done >= self.eps_decay_episodes
        dropped = best is not None and value < best - LR_DROP_TOLERANCE * abs(best)
        return scale * self.lr_drop_factor if explored and dropped else scale

    @property
    def eps_decay_episodes(self) -> float:
        """Episodes over which ε decays (``eps_decay_fraction`` of the schedule, at least 1)."""
        return max(1.0, self.eps_decay_fraction * self.schedule_total)

    def epsilon(self, episodes_done: int) -> float:
        """ε after ``episodes_done`` episodes: linear from eps_start to eps_end over eps_decay_fraction of the
        run, then constant."""
        frac = min(1.0, episodes_done / self.eps_decay_episodes)
        return self.eps_start + frac * (self.eps_end - self.eps_start)

    def learner_config(self, hidden: tuple[int, ...], amp: bool | None = None, target: str | None = None
                       ) -> LearnerConfig:
        """The learner's settings; ``amp`` as resolved for this machine (default: only ``amp: true``); ``target``
        the TD target's bootstrap (default "double" with ``double: true``, else "max")."""
        target = target or ("double" if self.double else "max")
        return LearnerConfig(lr=self.lr, gamma=self.fleet.discount, n_step=self.n_step, target=target,
                             dueling=self.dueling, noisy=self.noisy, loss=self.loss, grad_clip=self.grad_clip,
                             target_sync_every=self.target_sync_every, polyak_tau=self.polyak_tau,
                             amp=self.amp is True if amp is None else amp, compile=self.compile,
                             device=self.device, hidden=hidden)

    def unread_options(self) -> set[str]:
        """The options this run never reads: its agent's (:data:`IGNORED_BY_AGENT`), and with a ``teacher`` those of
        :data:`IGNORED_BY_TEACHER`, else the teacher's own (:data:`TEACHER_OPTIONS`)."""
        return set(IGNORED_BY_AGENT.get(self.agent, ())) | set(IGNORED_BY_TEACHER if self.teacher else TEACHER_OPTIONS)

    def to_dict(self, unread: bool = True) -> dict[str, Any]:
        """Every option as plain YAML/JSON values; ``unread=False`` leaves out :meth:`unread_options` (a run's
        config.yaml: what it shows changes the run, and :meth:`from_dict` gives the rest their defaults)."""
        d = self._as_dict()
        return d if unread else {k: v for k, v in d.items() if k not in self.unread_options()}

    def _as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["fleet"] = self.fleet.to_dict()
        d["urban_hidden"] = list(self.urban_hidden)
        d["rural_hidden"] = list(self.rural_hidden)
        d["bridge_hidden"] = list(self.bridge_hidden)
        if self.budget_scale_range is not None:
            d["budget_scale_range"] = list(self.budget_scale_range)
        d["teacher_levels"] = list(self.teacher_levels)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> TrainConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown training option(s) {unknown_names(unknown, known)}")
        try:
            return cls(**data)
        except TypeError as exc:
            raise ConfigError(f"{source}: {exc}") from None


def _check_real(name: str, value: Any) -> None:
    """A real-valued training option (a number, or each number of a list) in its range
    (:data:`bridgefleet.config.quantities.TRAINING`).

    Raises:
        ConfigError: ``training option NAME = VALUE: must be in [low, high] (why)``.
    """
    limits = quantities.TRAINING[name]
    many = isinstance(value, list | tuple)
    for i, x in enumerate(value if many else [value]):
        why = limits.problem(x)
        if why is not None:
            left_out = ", or left out" if name in ("polyak_tau", "weight_average", "budget_scale_range") else ""
            raise ConfigError(f"training option {name}{f'[{i}]' if many else ''} = {quantities.shown_value(x)}: "
                              f"{why}{left_out}", name)


LR_DROP_TOLERANCE = 0.01
"""How far below the best validation return so far an evaluation must fall, as a share of the best's size, for
``lr_drop_factor`` to cut the learning rate (issue 27 calls a run stable when it ends within 2 % of its best)."""

IGNORED_BY_AGENT: dict[str, tuple[str, ...]] = {
    # The per-bridge agent bootstraps on actions of its knapsack (funded, or greedy: greedy_bootstrap), so no
    # double targets; its network has no noisy layers; it steps the batched simulator itself (no gymnasium vector
    # env) and learns one reward per bridge with one network.
    "bridge": ("double", "noisy", "vector", "reward_mode", "urban_reward", "urban_hidden", "rural_hidden"),
    # The urban and rural agents do not build the shared per-bridge network, nor train across budget levels.
    "fleet": ("bridge_hidden", "budget_scale_range", "user_cost_feature", "greedy_bootstrap",
              "min_samples_per_transition", "replay_episodes", "rating_ramps", "budget_level_feature",
              "component_features"),
}
"""Training options each agent never reads; :func:`bridgefleet.config.presets.resolve_config` refuses them when the
file or the overrides set one to anything but the preset's value (a preset's own settings are never refused)."""
TEACHER_OPTIONS = ("teacher_levels", "dagger_rounds", "fit_epochs", "refit_epochs", "teacher_rows", "teacher_rows_kept",
                   "margin_weight", "input_scaling", "fit_warmup")
"""Options only a run with ``teacher`` reads."""
IGNORED_BY_TEACHER = ("episodes", "buffer_capacity", "updates_per_step", "min_samples_per_transition",
                      "replay_episodes", "learning_starts", "target_sync_every", "polyak_tau", "weight_average",
                      "grad_clip", "loss", "compile", "n_step", "per", "per_alpha", "per_beta_start", "eps_start",
                      "eps_end", "eps_decay_fraction", "lr_end_fraction", "lr_drop_factor", "reward_scale",
                      "eval_every", "checkpoint_every", "checkpoint_replay", "schedule_episodes", "budget_scale_range",
                      "greedy_bootstrap", "stop_at_target")
"""Options a run with ``teacher`` never reads (it fits the network to the teacher's benefits: no replay, ε, TD
target or episode schedule; it evaluates after each fit and learns at the ``teacher_levels``)."""
