"""Vectorized n-step (first-last) transitions and a PTAN-style experience source.

The n-step return ``R = Σ_{k<m} γ^k r_{t+k}`` with bootstrap ``γ^m max_a Q(s_{t+m}, a)`` is the
multi-step target of R. S. Sutton, "Learning to predict by the methods of temporal differences",
Machine Learning 3, 1988, used with DQN in M. Hessel et al., "Rainbow: Combining Improvements in
Deep Reinforcement Learning", AAAI 2018. Time-limit truncation bootstraps while termination does
not, following F. Pardo, A. Tavakoli, V. Levdik, P. Kormushev, "Time Limits in Reinforcement
Learning", ICML 2018. :class:`ExperienceSourceFirstLast` mirrors the class of that name in
M. Lapan's PTAN library (https://github.com/Shmuma/ptan), which cannot be installed beside torch 2.13.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ExperienceFirstLast", "ExperienceSourceFirstLast", "NStepAccumulator"]

#: An array ``(E, ...)`` or a mapping of named arrays, each ``(E, ...)``.
Batch = np.ndarray | Mapping[str, np.ndarray]


def _as_batch(x: Any, num_envs: int, what: str) -> Batch:
    if isinstance(x, Mapping):
        out = {k: np.asarray(v) for k, v in x.items()}
        for k, v in out.items():
            if v.ndim == 0 or v.shape[0] != num_envs:
                raise ValueError(f"{what}[{k!r}] must have leading dim num_envs={num_envs}, got {v.shape}")
        return out
    arr = np.asarray(x)
    if arr.ndim == 0 or arr.shape[0] != num_envs:
        raise ValueError(f"{what} must have leading dim num_envs={num_envs}, got shape {arr.shape}")
    return arr


def _alloc(x: Batch, n: int) -> Batch:
    if isinstance(x, Mapping):
        return {k: np.zeros((n, *v.shape), dtype=v.dtype) for k, v in x.items()}
    return np.zeros((n, *x.shape), dtype=x.dtype)


def _check_like(x: Batch, ref: Batch, what: str) -> None:
    if isinstance(ref, Mapping):
        if not isinstance(x, Mapping) or set(x) != set(ref):
            raise ValueError(f"{what} must be a mapping with keys {sorted(ref)}")
        for k in ref:
            if x[k].shape != ref[k].shape[1:]:
                raise ValueError(f"{what}[{k!r}] has shape {x[k].shape}, expected {ref[k].shape[1:]}")
    elif isinstance(x, Mapping) or x.shape != ref.shape[1:]:
        raise ValueError(f"{what} has shape {getattr(x, 'shape', None)}, expected {ref.shape[1:]}")


def _write(buf: Batch, slot: int, x: Batch) -> None:
    if isinstance(buf, Mapping):
        for k, v in buf.items():
            v[slot] = x[k]
    else:
        buf[slot] = x


def _take2(buf: Batch, slots: np.ndarray, envs: np.ndarray) -> Batch:
    if isinstance(buf, Mapping):
        return {k: v[slots, envs] for k, v in buf.items()}
    return buf[slots, envs]


def _rows(x: Batch, envs: np.ndarray) -> Batch:
    if isinstance(x, Mapping):
        return {k: v[envs] for k, v in x.items()}
    return x[envs]


class NStepAccumulator:
    """Turn vector-env steps into n-step first-last transitions, vectorized over environments.

    Each :meth:`add` takes one step of ``E`` environments and returns every transition that
    finished at this step. A transition starting at step ``t`` covers ``m <= n`` steps and holds
    ``obs`` / ``action`` of step ``t``, ``reward = Σ_{k<m} γ^k r_{t+k}``, ``next_obs`` (the
    observation after step ``t+m-1``), ``done`` (1.0 iff that step terminated: no bootstrap) and
    ``discount = γ^m`` for the bootstrap term ``discount * (1 - done) * max_a Q(next_obs, a)``.

    Rules: mid-episode, a transition is emitted once it has ``n`` steps. When an environment's
    episode ends (terminated or truncated), all its pending transitions are emitted, the shorter
    tails included; a truncated end bootstraps (``done = 0``), a terminated one does not. Nothing
    crosses into the next episode. Environments must use gymnasium's SAME_STEP autoreset: at an
    episode end pass the true final observation as ``next_obs``; the next call's ``obs`` is then
    the new episode's first observation. With ``n = 1`` this yields plain one-step transitions.

    Storage is a ring of shape ``(n, E, ...)`` per field, shared write slot for all envs; the
    per-step cost is a loop over at most ``n`` ages with NumPy work over ``E``.

    Args:
        num_envs: Number of environments ``E >= 1``.
        n: Number of steps ``n >= 1``.
        gamma: Discount factor in ``[0, 1]``.

    Raises:
        ValueError: On invalid arguments.
    """

    def __init__(self, num_envs: int, n: int, gamma: float) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {gamma}")
        self.num_envs = int(num_envs)
        self.n = int(n)
        self.gamma = float(gamma)
        self._discounts = (self.gamma ** np.arange(1, self.n + 1, dtype=np.float64)).astype(np.float32)
        self._count = np.zeros(self.num_envs, dtype=np.int64)  # pending steps per env, 0..n-1 between calls
        self._t = 0  # ring write pointer source (all envs step together)
        self._obs: Batch | None = None
        self._act: Batch | None = None
        self._rew: np.ndarray | None = None

    @property
    def pending(self) -> NDArray[np.int64]:
        """Pending (not yet emitted) steps per env, int64 ``(E,)``, each in ``[0, n)``."""
        return self._count.copy()

    def reset(self, envs: ArrayLike | None = None) -> None:
        """Drop pending steps (all envs, or the envs selected by an index/bool array) without
        emitting them, e.g. after resetting environments by hand."""
        if envs is None:
            self._count[:] = 0
        else:
            self._count[np.asarray(envs)] = 0

    def add(
        self,
        obs: Batch,
        action: Batch,
        reward: ArrayLike,
        next_obs: Batch,
        terminated: ArrayLike,
        truncated: ArrayLike,
        *,
        with_meta: bool = False,
    ) -> dict[str, Any]:
        """Record one vector-env step and return the transitions that finished.

        Args:
            obs: Observations before the step, array ``(E, ...)`` or mapping of such arrays.
            action: Actions taken, array ``(E, ...)`` or mapping of such arrays.
            reward: Rewards, float array ``(E,)`` or per-branch ``(E, K)`` (any ``(E, ...)``).
            next_obs: Observations after the step, same structure as ``obs``; for envs whose
                episode ended this must be the true final observation (SAME_STEP autoreset).
            terminated: bool ``(E,)``.
            truncated: bool ``(E,)``; ignored where ``terminated`` is also set.
            with_meta: Also return ``"env"`` (source env) and ``"steps"`` (``m``), int64 ``(M,)``.
                Off by default so the result feeds a :class:`ReplayBuffer` spec directly.

        Returns:
            Dict with leading dim ``M >= 0`` on every entry, ordered by env then start step:
            ``"obs"`` and ``"next_obs"`` (structure of ``obs``), ``"action"`` (structure of
            ``action``), ``"reward"`` float32 ``(M, *reward.shape[1:])``, ``"done"`` float32
            ``(M,)``, ``"discount"`` float32 ``(M,)`` equal to ``γ^m``.

        Raises:
            ValueError: If a leading dim is not ``E`` or shapes/keys change between calls.
        """
        e = self.num_envs
        obs = _as_batch(obs, e, "obs")
        next_obs = _as_batch(next_obs, e, "next_obs")
        action = _as_batch(action, e, "action")
        rew = np.asarray(reward, dtype=np.float64)
        if rew.ndim == 0 or rew.shape[0] != e:
            raise ValueError(f"reward must have leading dim num_envs={e}, got shape {rew.shape}")
        term = np.asarray(terminated, dtype=bool).reshape(-1)
        trunc = np.asarray(truncated, dtype=bool).reshape(-1)
        if term.shape != (e,) or trunc.shape != (e,):
            raise ValueError(f"terminated/truncated must have shape ({e},), got {term.shape}, {trunc.shape}")
        if self._obs is None:
            self._obs = _alloc(obs, self.n)
            self._act = _alloc(action, self.n)
            self._rew = np.zeros((self.n, *rew.shape), dtype=np.float64)
        assert self._act is not None and self._rew is not None
        _check_like(obs, self._obs, "obs")
        _check_like(next_obs, self._obs, "next_obs")
        _check_like(action, self._act, "action")
        if rew.shape != self._rew.shape[1:]:
            raise ValueError(f"reward has shape {rew.shape}, expected {self._rew.shape[1:]}")

        n = self.n
        pos = self._t % n
        self._t += 1
        _write(self._obs, pos, obs)
        _write(self._act, pos, action)
        self._rew[pos] = rew
        count = self._count + 1  # pending steps including this one, 1..n
        done = term | trunc
        full = ~done & (count == n)
        ages_needed = int(count.max()) if done.any() else (n if full.any() else 0)

        # returns[a] = Σ_{k<=a} γ^k r of the transition that started `a` steps ago (all envs).
        returns = np.empty((ages_needed, *rew.shape), dtype=np.float64)
        acc = np.zeros_like(rew)
        for a in range(ages_needed):
            acc = self._rew[(pos - a) % n] + self.gamma * acc
            returns[a] = acc

        ages = np.arange(ages_needed)[:, None]
        emit = (done[None, :] & (count[None, :] > ages)) | (full[None, :] & (ages == n - 1))
        # Transpose + reverse age axis: order by env, then oldest start first.
        env_idx, rev_age = np.nonzero(emit.T[:, ::-1])
        age = (ages_needed - 1 - rev_age).astype(np.int64)
        slots = (pos - age) % n

        self._count = np.where(done, 0, np.where(full, n - 1, count))

        out: dict[str, Any] = {
            "obs": _take2(self._obs, slots, env_idx),
            "action": _take2(self._act, slots, env_idx),
            "reward": returns[age, env_idx].astype(np.float32),
            "next_obs": _rows(next_obs, env_idx),
            "done": term[env_idx].astype(np.float32),
            "discount": self._discounts[age],
        }
        if with_meta:
            out["env"] = env_idx.astype(np.int64)
            out["steps"] = age + 1
        return out


class ExperienceFirstLast(NamedTuple):
    """One n-step transition, as PTAN's ``ExperienceFirstLast`` plus two fields.

    Attributes:
        state: Observation at the first step (array, or dict of arrays for Dict spaces).
        action: Action at the first step.
        reward: Discounted sum ``Σ_{k<m} γ^k r_k`` (float, or float32 array for vector rewards).
        last_state: Observation after the last step, or ``None`` when the episode terminated
            (no bootstrap). Present (bootstrap) after a time-limit truncation.
        truncated: True when the episode was truncated at the last step.
        steps: Number ``m <= steps_count`` of steps summed; bootstrap with ``γ ** steps``
            (tails at an episode end are shorter than ``steps_count``).
    """

    state: Any
    action: Any
    reward: Any
    last_state: Any | None
    truncated: bool = False
    steps: int = 1


def _final_next_obs(next_obs: Batch, info: Mapping[str, Any], done: np.ndarray) -> Batch:
    """Copy of ``next_obs`` with rows of finished envs replaced by ``info["final_obs"]``."""
    if "final_obs" not in info:
        raise RuntimeError(
            "episode ended but info has no 'final_obs'; use a gymnasium vector env with "
            "autoreset_mode=AutoresetMode.SAME_STEP"
        )
    final, mask = info["final_obs"], np.asarray(info.get("_final_obs", done), dtype=bool)
    out = {k: v.copy() for k, v in next_obs.items()} if isinstance(next_obs, Mapping) else next_obs.copy()
    # Loop only over envs that just finished (few per step); gymnasium stores them as objects.
    for i in np.nonzero(mask & done)[0]:
        if isinstance(out, Mapping):
            for k in out:
                out[k][i] = final[i][k]
        else:
            out[i] = final[i]
    return out


class ExperienceSourceFirstLast:
    """Iterate a gymnasium vector env and yield n-step :class:`ExperienceFirstLast` items (PTAN-style).

    Built on :class:`NStepAccumulator`. The env must use SAME_STEP autoreset
    (``SyncVectorEnv(..., autoreset_mode=AutoresetMode.SAME_STEP)``), where gymnasium 1.x
    puts the true final observation of finished env ``i`` in ``info["final_obs"][i]`` (an object
    array, masked by ``info["_final_obs"]``) and already returns the reset observation in ``obs``.

    Args:
        env: Gymnasium ``VectorEnv`` with ``num_envs`` environments.
        agent: Callable ``agent(obs_batch) -> actions`` with actions array-like ``(E, ...)``.
        gamma: Discount factor.
        steps_count: n of the n-step return (``>= 1``).
        seed: Passed to the first ``env.reset``.

    Raises:
        ValueError: If the env declares an autoreset mode other than SAME_STEP.
    """

    def __init__(
        self,
        env: Any,
        agent: Callable[[Any], ArrayLike],
        gamma: float,
        steps_count: int = 1,
        *,
        seed: int | None = None,
    ) -> None:
        mode = getattr(env, "metadata", {}).get("autoreset_mode")
        if mode is not None and getattr(mode, "name", str(mode)) != "SAME_STEP":
            raise ValueError(f"env must use AutoresetMode.SAME_STEP, got {mode}")
        self.env = env
        self.agent = agent
        self.gamma = float(gamma)
        self.steps_count = int(steps_count)
        self.seed = seed
        self.num_envs = int(env.num_envs)
        self._accumulator = NStepAccumulator(self.num_envs, self.steps_count, self.gamma)
        self._total_rewards: list[Any] = []
        self._total_steps: list[int] = []

    def __iter__(self) -> Iterator[ExperienceFirstLast]:
        obs, _ = self.env.reset(seed=self.seed)
        self._accumulator.reset()
        ep_reward: np.ndarray | None = None
        ep_steps = np.zeros(self.num_envs, dtype=np.int64)
        while True:
            actions = np.asarray(self.agent(obs))
            next_obs, reward, term, trunc, info = self.env.step(actions)
            reward = np.asarray(reward, dtype=np.float64)
            term = np.asarray(term, dtype=bool)
            trunc = np.asarray(trunc, dtype=bool)
            done = term | trunc
            last_obs = _final_next_obs(next_obs, info, done) if done.any() else next_obs
            out = self._accumulator.add(obs, actions, reward, last_obs, term, trunc, with_meta=True)

            ep_reward = reward.copy() if ep_reward is None else ep_reward + reward
            ep_steps += 1
            for i in np.nonzero(done)[0]:
                r = ep_reward[i]
                self._total_rewards.append(float(r) if r.ndim == 0 else r.copy())
                self._total_steps.append(int(ep_steps[i]))
            ep_reward[done] = 0.0
            ep_steps[done] = 0

            # Per-item Python objects are this API's contract; use NStepAccumulator for speed.
            envs = out["env"]
            for j in range(envs.size):
                ended = bool(out["done"][j])
                e = int(envs[j])
                rew = out["reward"][j]
                yield ExperienceFirstLast(
                    state=_rows(out["obs"], np.int64(j)),
                    action=_rows(out["action"], np.int64(j)),
                    reward=float(rew) if rew.ndim == 0 else rew,
                    last_state=None if ended else _rows(out["next_obs"], np.int64(j)),
                    truncated=bool(trunc[e] and not term[e]),
                    steps=int(out["steps"][j]),
                )
            # Copy: with SyncVectorEnv(copy=False) the env reuses its observation buffer.
            obs = (
                {k: v.copy() for k, v in next_obs.items()}
                if isinstance(next_obs, Mapping)
                else next_obs.copy()
            )

    def pop_total_rewards(self) -> list[Any]:
        """Undiscounted returns of episodes finished since the last pop (float, or float64 array
        ``(K,)`` for vector rewards), oldest first; clears them and the step counts."""
        res = self._total_rewards
        self._total_rewards, self._total_steps = [], []
        return res

    def pop_rewards_steps(self) -> list[tuple[Any, int]]:
        """Like :meth:`pop_total_rewards` but ``(return, episode_length)`` pairs."""
        res = list(zip(self._total_rewards, self._total_steps, strict=True))
        self._total_rewards, self._total_steps = [], []
        return res
