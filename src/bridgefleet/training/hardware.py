"""Precision and threads chosen for the machine a run is on, not assumed.

Two measured traps on CPUs without native bf16 and on shared machines (docs/benchmarks.md, "Precision and
threads"):

- bf16 autocast on a CPU without AVX512-BF16 / AMX is emulated by oneDNN: one update of the plan's urban
  net took 66 ms in fp32 and 1,327 ms under bf16 autocast on an AVX2-only EPYC.
- torch's intra-op threads thrash when another process holds a core: a 512×1024 @ 1024×512 matmul took
  7.1 ms with 1 thread and 19.9 ms with 2.

``amp: auto`` therefore takes fp16 + GradScaler on CUDA, bf16 on a CPU whose oneDNN reports native bf16,
each only where a probe of a few learner updates finds it faster than fp32, else fp32. ``threads: auto`` takes
the cores this process may run on (``os.sched_getaffinity``) and probes the learner update at 1, 2, 4, …
of them (two interleaved rounds, the best of each), keeping the fastest (fewer threads when within 10 %,
since other work shares the machine). Both choices are cached per machine (CPU model, allowed cores, torch
version, ``ONEDNN_MAX_CPU_ISA``, network shape) in ``$BRIDGEFLEET_CACHE_DIR`` (default
``~/.cache/bridgefleet``) with when and under what load they were measured (the 1-minute load average and the
machine's cores), and re-probed when asked (``--reprobe``), when a cached field is not what the probe writes (a
hand-edited ``threads: 64`` on 2 cores, ``"abc"``, a probe time in the future: :func:`cache_problem`), when the
cached choice is older than :data:`CACHE_MAX_AGE_DAYS`, or when the machine's load now differs from the load at
the probe by :data:`LOAD_CHANGE_SHARE` of its cores or more (at least :data:`LOAD_CHANGE_MIN`): a probe taken
while another job ran (1 thread 31.4 ms an update, 2 threads 47.4 ms) must not decide every later run on the idle
machine. The choice, with its probe's time and load, is written to summary.json. The threads chosen stay torch's:
Numba's kernels run on its own pool (``bridgefleet/__init__.py`` sets ``NUMBA_THREADING_LAYER=workqueue``), not on
the OpenMP runtime whose thread count torch reads.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from bridgefleet.outputs import write_json

NO_BF16_ISAS = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_CORE", "AVX512_CORE_VNNI")
"""``ONEDNN_MAX_CPU_ISA`` values below AVX512_CORE_BF16: oneDNN then emulates bf16 (oneDNN docs, CPU ISA
hints)."""

FEWER_THREADS_TOLERANCE = 1.10
"""Fewer threads are kept unless more are at least 10 % faster (a shared machine's other work needs cores)."""

CACHE_MAX_AGE_DAYS = 7.0
"""A cached choice older than this is probed again (the machine, its neighbours and its jobs change)."""

LOAD_CHANGE_SHARE = 0.25
"""A cached choice is probed again when the 1-minute load average differs from the one at its probe by this share
of the machine's cores (``os.cpu_count``) or more ..."""

LOAD_CHANGE_MIN = 1.0
"""... and by at least this much (one busy core), so a small machine's noise does not re-probe every run."""

FUTURE_SLACK_S = 300.0
"""A cached probe time later than now by more than this (seconds: clocks a little apart) is refused as in the
future (a hand edit, or a clock set back)."""


@dataclass
class HardwareChoice:
    """What a run uses, and why (written to summary.json and bench.md)."""

    amp: str  # "bf16", "fp16" or "off"
    amp_reason: str
    threads: int
    threads_reason: str
    probe_ms: dict[str, float]  # ms per learner update of each probed setting
    probed_at: str | None = None  # when the probe ran, ISO 8601 UTC (None: nothing probed)
    probe_load: float | None = None  # the machine's 1-minute load average then (None: unknown on this OS)
    probe_cores: int | None = None  # the machine's cores then (os.cpu_count), the scale of the load

    def to_dict(self) -> dict:
        return asdict(self)


def native_bf16() -> bool:
    """True when oneDNN runs bf16 natively on this CPU (AVX512-BF16 or AMX) and is not restricted below it
    by ``ONEDNN_MAX_CPU_ISA``."""
    isa = os.environ.get("ONEDNN_MAX_CPU_ISA", "").upper()
    if isa in NO_BF16_ISAS:
        return False
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def allowed_cores() -> int:
    """Cores this process may run on (its affinity set; ``os.cpu_count`` where affinity is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def use_threads(n: int) -> None:
    """Run Numba's parallel kernels (the DPs, the certificate, the knapsacks) and torch on ``n`` threads
    (``--threads`` of evaluate, bound, plan, report and scenarios; their default is Numba's and torch's own: every
    core this process may use).

    Raises:
        ValueError: ``n`` < 1, or more than the cores this process may use (:func:`allowed_cores`).
    """
    import numba

    cores = allowed_cores()
    if not 1 <= n <= cores:
        raise ValueError(f"--threads {n}: give 1 to {cores}, the cores this process may use")
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    torch.set_num_threads(n)


def thread_candidates(cores: int) -> list[int]:
    """1, 2, 4, … up to ``cores``, and ``cores`` itself."""
    out = [1]
    while out[-1] * 2 <= cores:
        out.append(out[-1] * 2)
    if out[-1] != cores:
        out.append(cores)
    return out


def machine_load() -> float | None:
    """The machine's 1-minute load average (runnable processes), None where the OS has none (Windows)."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def stale(cached: dict, now: float, load: float | None, cores: int, allowed: int | None = None,
          threads: int | str = "auto") -> str | None:
    """Why a cached choice (:meth:`HardwareChoice.to_dict`) must be probed again now, or None when it stands: a
    field that is not what the probe writes (:func:`cache_problem`: a hand-edited or damaged cache), no probe time
    recorded (a cache of an older version), a probe time in the future, older than :data:`CACHE_MAX_AGE_DAYS`,
    or a load that differs from the probe's by :data:`LOAD_CHANGE_SHARE` × ``cores`` (at least
    :data:`LOAD_CHANGE_MIN`). ``allowed``: the cores this process may use (default :func:`allowed_cores`), the
    most threads a cached choice may name; ``threads``: the threads asked (a number: the cached choice's)."""
    problem = cache_problem(cached, allowed_cores() if allowed is None else allowed, threads)
    if problem is not None:
        return problem
    try:
        when = datetime.datetime.fromisoformat(cached["probed_at"])
    except (KeyError, TypeError, ValueError):
        return "the cached choice records no probe time"
    if when.tzinfo is None:  # written in UTC (choose); a hand-written time without a zone is read so too
        when = when.replace(tzinfo=datetime.UTC)
    days = (now - when.timestamp()) / 86400.0
    if days < -FUTURE_SLACK_S / 86400.0:
        return f"the cached choice's probe time {cached['probed_at']} is in the future"
    if days > CACHE_MAX_AGE_DAYS:
        return f"the cached choice was probed {days:.1f} days ago (at most {CACHE_MAX_AGE_DAYS:g})"
    before = cached.get("probe_load")
    limit = max(LOAD_CHANGE_MIN, LOAD_CHANGE_SHARE * cores)
    if load is not None and before is not None and abs(load - before) >= limit:
        return (f"the machine's load is {load:.2f} now against {before:.2f} at the probe ({cores} cores; a change of "
                f"{limit:g} or more re-probes)")
    return None


def _shown(value: object) -> str:
    """A cached value as a message shows it (at most 40 characters: a hand-edited cache may hold anything)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _real(value: object) -> bool:
    """A JSON number (not a boolean), finite."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def cache_problem(cached: object, allowed: int, threads: int | str = "auto") -> str | None:
    """What in a cached choice is not what :func:`choose` writes, or None: a record with precision ``bf16``,
    ``fp16`` or ``off``; threads a whole number in 1 … ``allowed`` (the cores this process may use; the number
    asked where ``threads`` is one); reasons as text; probe timings finite and above 0 ms; the probe's load a
    finite number ≥ 0 or null, its cores a whole number ≥ 1 or null. (The probe time: :func:`stale`.)"""
    if not isinstance(cached, dict):
        return f"the cached entry {_shown(cached)} is not a record"
    missing = [k for k in ("amp", "amp_reason", "threads", "threads_reason", "probe_ms") if k not in cached]
    if missing:
        return f"the cached choice has no {', '.join(missing)}"
    if cached["amp"] not in ("bf16", "fp16", "off"):
        return f"the cached precision {_shown(cached['amp'])} is not bf16, fp16 or off"
    n = cached["threads"]
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= allowed:
        return (f"the cached threads {_shown(n)} are not a whole number in [1, {allowed}] (the cores this process "
                "may use)")
    if threads != "auto" and n != threads:
        return f"the cached threads {n} are not the {threads} asked"
    if not (isinstance(cached["amp_reason"], str) and isinstance(cached["threads_reason"], str)):
        return "the cached reasons are not text"
    ms = cached["probe_ms"]
    if not isinstance(ms, dict) or not all(_real(v) and v > 0 for v in ms.values()):
        return f"the cached probe timings {_shown(ms)} are not milliseconds above 0"
    load = cached.get("probe_load")
    if load is not None and not (_real(load) and load >= 0):
        return f"the cached probe load {_shown(load)} is not a number ≥ 0"
    probe_cores = cached.get("probe_cores")
    if probe_cores is not None and (isinstance(probe_cores, bool) or not isinstance(probe_cores, int)
                                    or probe_cores < 1):
        return f"the cached probe cores {_shown(probe_cores)} are not a whole number ≥ 1"
    return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cache_path() -> Path:
    root = os.environ.get("BRIDGEFLEET_CACHE_DIR") or Path.home() / ".cache" / "bridgefleet"
    return Path(root) / "hardware.json"


def choose(amp: bool | str, threads: int | str, device: torch.device,
           probe: Callable[[str, int], float] | None, key: str = "", reprobe: bool = False,
           bf16_check: Callable[[], bool] | None = None) -> HardwareChoice:
    """Resolve ``amp`` (True, False or "auto") and ``threads`` (int ≥ 1 or "auto") for ``device``.

    Args:
        probe: ``probe(amp, threads)`` → ms per learner update with that setting ("bf16", "fp16" on
            CUDA, or "off"); None skips probing (auto threads then take 1 on a machine with ≤ 2 allowed
            cores, else all of them, and auto amp takes bf16 wherever ``bf16_check`` is True).
        key: what the probe measures (network shape, batch); part of the cache key.
        reprobe: probe again even when this machine's choice is cached.
        bf16_check: the native-bf16 test (default :func:`native_bf16`; injectable for tests).

    Raises:
        ValueError: ``amp`` or ``threads`` not one of the accepted values.
    """
    if amp not in (True, False, "auto"):
        raise ValueError(f"amp = {amp!r}: must be true, false or auto")
    if threads != "auto" and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads = {threads!r}: must be a whole number >= 1 or auto")
    cores = allowed_cores()
    probe_ms: dict[str, float] = {}
    if device.type == "cuda":
        amp_name = "fp16" if amp else "off"
        amp_reason = "CUDA: fp16 autocast + GradScaler" if amp else "amp off"
        n = threads if threads != "auto" else 1
        if amp == "auto" and probe is not None:
            # A small network's update is kernel-launch bound; autocast's casts and the GradScaler's checks
            # then cost more than fp16 saves (measured on an H200: default preset 42 s in fp16, 29 s in fp32).
            amp_name, amp_reason = _keep_faster("fp16", n, probe, probe_ms, amp_reason)
        return HardwareChoice(amp_name, amp_reason, n, "CUDA: the host only feeds the GPU" if threads == "auto"
                              else "--threads", probe_ms)
    if amp is True:
        amp_name, amp_reason = "bf16", "amp on (bf16 autocast forced)"
    elif amp is False:
        amp_name, amp_reason = "off", "amp off"
    elif not (bf16_check or native_bf16)():
        amp_name, amp_reason = "off", "no native bf16 on this CPU (oneDNN): bf16 autocast would be emulated, fp32"
    else:
        amp_name, amp_reason = "bf16", "native bf16 on this CPU (oneDNN)"
    cache_key = "|".join([cpu_model(), str(cores), torch.__version__, os.environ.get("ONEDNN_MAX_CPU_ISA", ""),
                          key, str(amp), amp_name, str(threads)])
    needs_probe = probe is not None and (threads == "auto" or (amp == "auto" and amp_name == "bf16"))
    cached = _read_cache().get(cache_key) if needs_probe and not reprobe else None
    now, load, machine_cores = time.time(), machine_load(), os.cpu_count() or cores
    again = stale(cached, now, load, machine_cores, cores, threads) if cached is not None else None
    if cached is not None and again is None:
        field = "threads_reason" if threads == "auto" else "amp_reason"  # what the probe chose
        known = {k: v for k, v in cached.items() if k in HardwareChoice.__dataclass_fields__}
        at = "unknown load" if cached.get("probe_load") is None else f"load {cached['probe_load']:.2f}"
        return HardwareChoice(**{**known, field: f"{cached[field]} (cached: probed {cached['probed_at']} at {at} "
                                 f"on {cached.get('probe_cores')} cores; --reprobe)"})
    n = threads if threads != "auto" else 1
    if threads == "auto":
        if probe is None:
            n = 1 if cores <= 2 else cores
            threads_reason = f"{cores} allowed cores, not probed"
        else:
            ms: dict[int, float] = {}
            for _ in range(2):  # two interleaved rounds, best of each: a moment's load elsewhere does not decide
                for c in thread_candidates(cores):
                    ms[c] = min(ms.get(c, float("inf")), probe(amp_name, c))
            probe_ms.update({f"{amp_name}@{c}": v for c, v in ms.items()})
            n = min(ms, key=ms.get)
            for c in sorted(ms):  # the fewest threads within the tolerance of the fastest
                if ms[c] <= ms[n] * FEWER_THREADS_TOLERANCE:
                    n = c
                    break
            threads_reason = f"fastest learner update of {sorted(ms)} threads on {cores} allowed cores"
    else:
        threads_reason = f"--threads {threads}"
        if threads > cores:
            threads_reason += f", more than the {cores} cores this process may use (threads will thrash)"
            warnings.warn(f"--threads {threads} is more than the {cores} cores this process may use: torch's "
                          "threads will thrash; --threads auto probes the best number", stacklevel=2)
    if amp == "auto" and amp_name == "bf16" and probe is not None:
        amp_name, amp_reason = _keep_faster("bf16", n, probe, probe_ms, amp_reason)
    choice = HardwareChoice(amp_name, amp_reason, int(n), threads_reason, probe_ms)
    if needs_probe:
        choice.probed_at = datetime.datetime.fromtimestamp(now, datetime.UTC).isoformat(timespec="seconds")
        choice.probe_load, choice.probe_cores = load, machine_cores
        if again is not None:
            field = "threads_reason" if threads == "auto" else "amp_reason"
            setattr(choice, field, f"{getattr(choice, field)} (probed again: {again})")
        _write_cache(cache_key, choice)
    return choice


def _keep_faster(low: str, threads: int, probe: Callable[[str, int], float], probe_ms: dict[str, float],
                 reason: str) -> tuple[str, str]:
    """(amp, reason): ``low`` ("bf16" or "fp16") or "off", whichever learner update the probe measures faster
    at ``threads`` (a timing already in ``probe_ms`` is reused; both are recorded there)."""
    lo = probe_ms.get(f"{low}@{threads}") or probe(low, threads)
    fp = probe("off", threads)
    probe_ms.update({f"{low}@{threads}": lo, f"off@{threads}": fp})
    if fp < lo:
        return "off", f"{reason}, but fp32 was faster here ({fp:.1f} vs {lo:.1f} ms/update)"
    return low, f"{reason}, faster than fp32 ({lo:.1f} vs {fp:.1f} ms/update)"


def _read_cache() -> dict:
    """The cache's entries by key; {} where the file is missing, unreadable, not JSON or not an object (a damaged
    cache is rewritten, not a reason to stop)."""
    try:
        data = json.loads(_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_cache(key: str, choice: HardwareChoice) -> None:
    path = _cache_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = _read_cache()
        data[key] = choice.to_dict()
        write_json(path, data, indent=1)
    except OSError:  # a read-only home only loses the cache
        pass


def time_updates(update: Callable[[], object], threads: int, n: int = 8, warmup: int = 3) -> float:
    """Median ms of ``update()`` with ``threads`` torch intra-op threads (restored afterwards)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for _ in range(warmup):
            update()
        times = []
        for _ in range(n):
            t = time.perf_counter()
            update()
            times.append((time.perf_counter() - t) * 1000.0)
    finally:
        torch.set_num_threads(before)
    times.sort()
    return times[len(times) // 2]
