"""Learner and replay throughput for the urban agent.

Measures, in one run and on the auto device (CUDA if available, else CPU):

* DQN updates per second of the plan's urban Q-network (81-dim obs, 20 branches × 5 actions,
  hidden 512-1024-512) at batch 512 in fp32, with AMP autocast (bf16 on CPU, fp16 on CUDA), and with
  ``torch.compile`` (mode selectable with ``--compile-mode``). Each update includes the host→device
  batch copy and the one device→host transfer of the TD errors, as in training.
* Prioritized replay ``sample`` + ``update_priorities`` at capacity 200,000 and batch 512
  (target < 1.5 ms), and uniform replay ``sample``.

Warm-up iterations run first (including compilation), then medians over timed repeats are reported.
Torch's default thread count is kept.

Usage:
    python benchmarks/learner_throughput.py [--quick] [--compile-mode MODE] [--batch 512] [--double]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch

from bridgefleet.agents import UrbanQNetwork
from bridgefleet.agents.learner import DQNLearner, resolve_device
from bridgefleet.config.learner import COMPILE_MODES, LearnerConfig
from bridgefleet.replay import PrioritizedReplayBuffer, ReplayBuffer

N_URBAN = 20
OBS_DIM = N_URBAN * 4 + 1
HIDDEN = (512, 1024, 512)
N_ACTIONS = 5
PER_TARGET_MS = 1.5


def make_batch(rng: np.random.Generator, batch: int) -> dict[str, np.ndarray]:
    return {
        "obs": rng.standard_normal((batch, OBS_DIM), dtype=np.float32),
        "action": rng.integers(0, N_ACTIONS, (batch, N_URBAN), dtype=np.int64),
        "reward": rng.standard_normal(batch).astype(np.float32),
        "next_obs": rng.standard_normal((batch, OBS_DIM), dtype=np.float32),
        "done": (rng.random(batch) < 0.03).astype(np.float32),
        "discount": np.full(batch, 0.95, dtype=np.float32),
        "weights": rng.random(batch).astype(np.float32),
    }


def time_calls(fn: Callable[[], object], warmup: int, repeats: int, per_repeat: int) -> tuple[float, float]:
    """Return (warm-up seconds, median seconds per call over ``repeats`` blocks of ``per_repeat`` calls)."""
    t0 = time.perf_counter()
    for _ in range(warmup):
        fn()
    warm_s = time.perf_counter() - t0
    per_call = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(per_repeat):
            fn()
        per_call.append((time.perf_counter() - t0) / per_repeat)
    return warm_s, statistics.median(per_call)


def bench_learner(
    name: str, config: LearnerConfig, batches: list[dict[str, np.ndarray]], args: argparse.Namespace
) -> tuple[str, float, float, float]:
    torch.manual_seed(0)
    learner = DQNLearner(lambda: UrbanQNetwork(OBS_DIM, N_URBAN, hidden=HIDDEN), config)
    it = 0

    def one_update() -> None:
        nonlocal it
        learner.update(batches[it % len(batches)])  # returns after the td_error transfer (synchronises)
        it += 1

    warm_s, sec = time_calls(one_update, args.warmup, args.repeats, args.per_repeat)
    return name, 1.0 / sec, sec * 1e3, warm_s


def bench_replay(args: argparse.Namespace) -> list[tuple[str, float, float]]:
    spec = {
        "obs": ((OBS_DIM,), np.float32),
        "action": ((N_URBAN,), np.int64),
        "reward": ((), np.float32),
        "next_obs": ((OBS_DIM,), np.float32),
        "done": ((), np.float32),
        "discount": ((), np.float32),
    }
    rng = np.random.default_rng(0)
    chunk = 10_000
    chunk_data = {
        "obs": rng.standard_normal((chunk, OBS_DIM), dtype=np.float32),
        "action": rng.integers(0, N_ACTIONS, (chunk, N_URBAN), dtype=np.int64),
        "reward": rng.standard_normal(chunk).astype(np.float32),
        "next_obs": rng.standard_normal((chunk, OBS_DIM), dtype=np.float32),
        "done": np.zeros(chunk, dtype=np.float32),
        "discount": np.full(chunk, 0.95, dtype=np.float32),
    }
    per = PrioritizedReplayBuffer(args.capacity, spec, beta_steps=100_000)
    uniform = ReplayBuffer(args.capacity, spec)
    for _ in range(args.capacity // chunk):
        per.add(chunk_data)
        uniform.add(chunk_data)
    # Spread priorities so the sum-tree is not flat.
    all_idx = np.arange(len(per))
    per.update_priorities(all_idx, rng.exponential(1.0, len(per)))

    def per_step() -> None:
        sample = per.sample(args.batch, rng)
        per.update_priorities(sample["indices"], rng.exponential(1.0, args.batch))

    def per_sample_only() -> None:
        per.sample(args.batch, rng)

    def uniform_sample() -> None:
        uniform.sample(args.batch, rng)

    rows = []
    n = args.replay_iters
    for name, fn in (
        ("PER sample + update_priorities", per_step),
        ("PER sample only", per_sample_only),
        ("uniform sample", uniform_sample),
    ):
        _, sec = time_calls(fn, warmup=20, repeats=n, per_repeat=1)
        rows.append((name, sec * 1e3, 1.0 / sec))
    return rows


def main() -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=fmt)
    parser.add_argument("--quick", action="store_true", help="few iterations (smoke run)")
    parser.add_argument(
        "--compile-mode", default="default", choices=COMPILE_MODES, help='torch.compile mode ("off" skips it)'
    )
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--capacity", type=int, default=200_000)
    parser.add_argument("--double", action="store_true", help="Double DQN targets (one more forward)")
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    args.warmup, args.repeats, args.per_repeat, args.replay_iters = (
        (3, 3, 3, 100) if args.quick else (10, 7, 10, 500)
    )

    device = resolve_device(args.device)
    print(f"torch {torch.__version__} | device {device} | threads {torch.get_num_threads()}", end="")
    if device.type == "cuda":
        print(f" | {torch.cuda.get_device_name(device)}", end="")
    print(f" | batch {args.batch} | urban net {OBS_DIM}→{'-'.join(map(str, HIDDEN))}→{N_URBAN}×{N_ACTIONS}")
    print(f"warm-up {args.warmup} updates, median of {args.repeats} × {args.per_repeat} updates\n")

    rng = np.random.default_rng(0)
    batches = [make_batch(rng, args.batch) for _ in range(4)]
    amp_name = "fp16 autocast + GradScaler" if device.type == "cuda" else "bf16 autocast"
    variants = [
        ("fp32", LearnerConfig(device=args.device, target="double" if args.double else "max")),
        (amp_name, LearnerConfig(device=args.device, target="double" if args.double else "max", amp=True)),
    ]
    if args.compile_mode != "off":
        variants.append(
            (
                f"torch.compile ({args.compile_mode})",
                LearnerConfig(device=args.device, target="double" if args.double else "max", compile=args.compile_mode),
            )
        )

    header = f"{'learner update':<34}{'updates/s':>12}{'ms/update':>12}{'warm-up s':>12}"
    print(header)
    print("-" * len(header))
    for name, config in variants:
        try:
            row = bench_learner(name, config, batches, args)
        except Exception as exc:  # keep the table going if e.g. inductor fails
            print(f"{name:<34}  failed: {type(exc).__name__}: {exc}")
            continue
        print(f"{row[0]:<34}{row[1]:>12.1f}{row[2]:>12.2f}{row[3]:>12.1f}")

    print(f"\nreplay: capacity {args.capacity:,}, batch {args.batch}, median of {args.replay_iters} calls")
    header = f"{'replay operation':<34}{'ms/call':>12}{'calls/s':>12}"
    print(header)
    print("-" * len(header))
    for name, ms, per_s in bench_replay(args):
        flag = ""
        if name.startswith("PER sample +"):
            flag = f"  (target < {PER_TARGET_MS} ms: {'ok' if ms < PER_TARGET_MS else 'MISSED'})"
        print(f"{name:<34}{ms:>12.3f}{per_s:>12.0f}{flag}")


if __name__ == "__main__":
    main()
