"""Precision and threads chosen by the hardware: injected bf16 checks and probes, the affinity set, the cache,
and the choice written to summary.json."""

import json
import os

import pytest
import torch

from bridgefleet.config.training import TrainConfig
from bridgefleet.training import hardware
from bridgefleet.training.hardware import choose, native_bf16, thread_candidates
from bridgefleet.training.runner import train

CPU = torch.device("cpu")


def _probe(table):
    calls = []

    def probe(amp, threads):
        calls.append((amp, threads))
        return table[(amp, threads)]

    probe.calls = calls
    return probe


def test_amp_auto_is_fp32_without_native_bf16_and_never_probes_bf16():
    probe = _probe({("off", 1): 5.0, ("off", 2): 4.0})
    c = choose("auto", 1, CPU, probe, bf16_check=lambda: False)
    assert c.amp == "off" and "no native bf16" in c.amp_reason
    assert not any(a == "bf16" for a, _ in probe.calls)


def test_amp_auto_takes_bf16_with_native_bf16_only_when_the_probe_finds_it_faster():
    fast_bf16 = _probe({("bf16", 1): 2.0, ("off", 1): 3.0})
    c = choose("auto", 1, CPU, fast_bf16, bf16_check=lambda: True)
    assert c.amp == "bf16" and c.probe_ms == {"bf16@1": 2.0, "off@1": 3.0}
    slow_bf16 = _probe({("bf16", 1): 9.0, ("off", 1): 3.0})
    c = choose("auto", 1, CPU, slow_bf16, key="other", bf16_check=lambda: True)
    assert c.amp == "off" and "fp32 was faster" in c.amp_reason


def test_amp_true_and_false_are_not_second_guessed_and_cuda_takes_fp16():
    assert choose(True, 1, CPU, None, bf16_check=lambda: False).amp == "bf16"
    assert choose(False, 1, CPU, None, bf16_check=lambda: True).amp == "off"
    assert choose("auto", 1, torch.device("cuda"), None).amp == "fp16"


def test_cuda_amp_auto_keeps_the_faster_of_fp16_and_fp32():
    cuda = torch.device("cuda")
    c = choose("auto", 1, cuda, _probe({("fp16", 1): 5.6, ("off", 1): 3.9}))
    assert c.amp == "off" and c.probe_ms == {"fp16@1": 5.6, "off@1": 3.9} and "fp32 was faster" in c.amp_reason
    assert choose("auto", 1, cuda, _probe({("fp16", 1): 2.0, ("off", 1): 3.9})).amp == "fp16"
    assert choose(True, 1, cuda, _probe({})).amp == "fp16"  # amp on is not second-guessed


def test_a_disturbed_thread_probe_does_not_decide(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    times = iter([3.6, 8.4, 3.6, 2.4])  # 1, 2, 1, 2 threads: the first 2-thread round met other load

    def probe(amp, threads):
        return next(times)

    c = choose(False, "auto", CPU, probe, key="disturbed")
    assert c.threads == 2 and c.probe_ms == {"off@1": 3.6, "off@2": 2.4}


def test_threads_auto_stays_within_the_affinity_set(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert thread_candidates(3) == [1, 2, 3] and thread_candidates(6) == [1, 2, 4, 6]
    faster = _probe({("off", 1): 9.0, ("off", 2): 5.0, ("off", 3): 3.0})
    c = choose(False, "auto", CPU, faster)
    assert c.threads == 3 and [t for _, t in faster.calls] == [1, 2, 3, 1, 2, 3]  # two interleaved rounds
    # Within 10 % of the fastest, fewer threads win (others share the machine).
    flat = _probe({("off", 1): 3.2, ("off", 2): 3.0, ("off", 3): 3.1})
    assert choose(False, "auto", CPU, flat, key="flat").threads == 1


def test_the_choice_is_cached_per_machine_and_reprobed_only_when_asked():
    probe = _probe({("off", t): 1.0 + t for t in range(1, 65)})
    first = choose(False, "auto", CPU, probe, key="k")
    n = len(probe.calls)
    again = choose(False, "auto", CPU, probe, key="k")
    assert len(probe.calls) == n and again.threads == first.threads and "cached" in again.threads_reason
    choose(False, "auto", CPU, probe, key="k", reprobe=True)
    assert len(probe.calls) == 2 * n


def test_onednn_restricted_to_avx2_is_not_native_bf16(monkeypatch):
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    assert native_bf16() is False


@pytest.mark.parametrize("amp, threads", [("yes", 1), (True, 0), (True, "many"), (True, True)])
def test_bad_settings_name_themselves(amp, threads):
    with pytest.raises(ValueError, match=r"^(amp|threads) = "):
        choose(amp, threads, CPU, None)


def test_summary_json_records_the_choice_with_an_injected_bf16_check(tmp_path, monkeypatch):
    tiny = {"urban_hidden": [16], "rural_hidden": [16], "batch_size": 32, "learning_starts": 64,
            "buffer_capacity": 2000, "num_envs": 4, "episodes": 4, "eval_every": 4, "eval_episodes": 2,
            "fleet": {"horizon_years": 3}, "amp": "auto", "threads": "auto"}
    for native, name in ((False, "no"), (True, "yes")):
        monkeypatch.setattr(hardware, "native_bf16", lambda native=native: native)
        _, summary = train(TrainConfig.from_dict(dict(tiny)), tmp_path / name, progress=False)
        saved = json.loads((tmp_path / name / "summary.json").read_text())["hardware"]
        assert saved == summary["hardware"]
        assert 1 <= saved["threads"] <= len(os.sched_getaffinity(0))
        # when and under what load the choice was measured (issue 79): the machine's 1-minute load and cores
        assert saved["probed_at"] and saved["probe_cores"] == os.cpu_count() and "probe_load" in saved
        if not native:
            assert saved["amp"] == "off" and not any(k.startswith("bf16") for k in saved["probe_ms"])
        else:  # probed: the faster of the two at the chosen threads is kept
            t = saved["threads"]
            bf, fp = saved["probe_ms"][f"bf16@{t}"], saved["probe_ms"][f"off@{t}"]
            assert saved["amp"] == ("bf16" if bf <= fp else "off")


def test_explicit_threads_beyond_the_allowed_cores_are_warned_about(monkeypatch):
    monkeypatch.setattr(hardware, "allowed_cores", lambda: 2)
    with pytest.warns(UserWarning, match="--threads 64 is more than the 2 cores"):
        choice = choose(False, 64, torch.device("cpu"), None, "k")
    assert choice.threads == 64 and "more than the 2 cores" in choice.threads_reason
    assert choose(False, 2, torch.device("cpu"), None, "k").threads_reason == "--threads 2"


def test_the_planning_commands_run_on_the_threads_asked_within_the_cores_allowed(monkeypatch, capsys):
    import numba

    from bridgefleet.cli import main

    before = numba.get_num_threads(), torch.get_num_threads()
    try:
        hardware.use_threads(1)
        assert numba.get_num_threads() == 1 and torch.get_num_threads() == 1
        monkeypatch.setattr(hardware, "allowed_cores", lambda: 1)
        for cmd in (["evaluate", "--episodes", "1", "--no-bound"], ["bound", "--episodes", "1"],
                    ["scenarios", "--budgets", "1"]):
            assert main([*cmd, "--threads", "2"]) == 2
            assert capsys.readouterr().err.strip().splitlines() == [
                f"bridgefleet {cmd[0]}: error: --threads 2: give 1 to 1, the cores this process may use"]
        with pytest.raises(SystemExit) as stop:
            main(["plan", "--policy", "worst_first", "--threads", "0"])
        assert stop.value.code == 2 and "at least 1 thread" in capsys.readouterr().err
    finally:
        numba.set_num_threads(before[0])
        torch.set_num_threads(before[1])


def test_numbas_kernels_leave_torchs_thread_count_alone():
    # With Numba's OpenMP layer each kernel launch set the OpenMP thread count torch reads (torch's wheel ships the
    # libgomp.so.1 Numba loads), so a learner told to use 1 thread ran on every core after the first knapsack.
    import numba
    import numpy as np

    from bridgefleet.planning.knapsack import allocate

    if os.environ.get("NUMBA_THREADING_LAYER") == "workqueue":
        assert numba.config.THREADING_LAYER == "workqueue"
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        ben = np.zeros((4, 3, 5))
        ben[..., 1] = [1.0, 2.0, 3.0]
        cost = np.ones((4, 3, 5))
        out = np.zeros((4, 3), dtype=np.int64)
        allocate(ben, cost, np.array([0, 0, 1]), np.full((4, 2), 1.0), out)
        assert out.tolist() == [[0, 1, 1]] * 4  # the urban agency's one USD funds its larger benefit
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize(("edit", "why"), [
    ({"threads": 64}, "the cached threads 64 are not a whole number in [1, 2] (the cores this process may use)"),
    ({"threads": "abc"}, "the cached threads 'abc' are not a whole number in [1, 2] (the cores this process "
                           "may use)"),
    ({"threads": 0}, "the cached threads 0 are not a whole number in [1, 2] (the cores this process "
                           "may use)"),
    ({"threads": True}, "the cached threads True are not a whole number in [1, 2] (the cores this process "
                           "may use)"),
    ({"amp": "fp8"}, "the cached precision 'fp8' is not bf16, fp16 or off"),
    ({"probe_load": "abc"}, "the cached probe load 'abc' is not a number ≥ 0"),
    ({"probe_load": float("nan")}, "the cached probe load nan is not a number ≥ 0"),
    ({"probe_load": -1.0}, "the cached probe load -1.0 is not a number ≥ 0"),
    ({"probe_cores": 0}, "the cached probe cores 0 are not a whole number ≥ 1"),
    ({"probe_ms": {"off@1": "fast"}}, "the cached probe timings {'off@1': 'fast'} are not milliseconds above 0"),
    ({"threads_reason": 7}, "the cached reasons are not text"),
    ({"probed_at": "2099-01-01T00:00:00+00:00"}, "the cached choice's probe time 2099-01-01T00:00:00+00:00 is in "
                                                 "the future"),
])
def test_a_hand_edited_cached_choice_is_probed_again_saying_why(monkeypatch, edit, why):
    # issue 79 kind 7 (probe): threads 64 on 2 cores was used as is, "abc" and 0 ended in a traceback, a load of
    # "abc" in "Unknown format code 'f'", a probe time in 2099 said "probed -26322.5 days ago", NaN was kept
    monkeypatch.setattr(hardware, "allowed_cores", lambda: 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(hardware, "machine_load", lambda: 0.5)
    probe = _probe({("off", 1): 5.0, ("off", 2): 4.0})
    assert choose(False, "auto", CPU, probe, key="k").threads == 2  # 4.0 ms is more than 10 % faster than 5.0
    assert len(probe.calls) == 4  # two rounds of 1 and 2 threads
    path = hardware._cache_path()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert choose(False, "auto", CPU, probe, key="k").threads == 2 and len(probe.calls) == 4  # the cache, as is
    for entry in data.values():
        entry.update(edit)
    path.write_text(json.dumps(data), encoding="utf-8")  # NaN as JSON's NaN, as Python writes it
    again = choose(False, "auto", CPU, probe, key="k")
    assert len(probe.calls) == 8 and again.threads == 2
    assert again.threads_reason == f"fastest learner update of [1, 2] threads on 2 allowed cores (probed again: {why})"


def test_a_cache_that_is_not_an_object_is_rewritten(monkeypatch):
    monkeypatch.setattr(hardware, "allowed_cores", lambda: 2)
    path = hardware._cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[1, 2]", encoding="utf-8")
    probe = _probe({("off", 1): 5.0, ("off", 2): 4.0})
    assert choose(False, "auto", CPU, probe, key="k").threads == 2
    assert [v["threads"] for v in json.loads(path.read_text(encoding="utf-8")).values()] == [2]


def test_an_explicit_thread_count_keeps_only_its_own_cached_choice(monkeypatch):
    assert hardware.cache_problem({"amp": "bf16", "amp_reason": "", "threads": 2, "threads_reason": "",
                                   "probe_ms": {}}, allowed=2, threads=1) == "the cached threads 2 are not the 1 asked"
    assert hardware.cache_problem({"amp": "bf16", "amp_reason": "", "threads": 1, "threads_reason": "",
                                   "probe_ms": {}}, allowed=2, threads=1) is None
    assert hardware.cache_problem({"amp": "off"}, allowed=2) == ("the cached choice has no amp_reason, threads, "
                                                                 "threads_reason, probe_ms")
    assert hardware.cache_problem([1], allowed=2) == "the cached entry [1] is not a record"
