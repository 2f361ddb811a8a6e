"""Training options the run's agent never reads are refused when set (by a file or the command line), in one
line naming them and the agent; the presets' own settings never are."""

import numpy as np
import pytest
import yaml

from bridgefleet.cli import main
from bridgefleet.config import ConfigError
from bridgefleet.config.presets import PRESETS, resolve_config
from bridgefleet.config.training import IGNORED_BY_AGENT, TrainConfig

# A value other than TrainConfig's default (and the default preset's) for every option one agent ignores.
OTHER = {"double": True, "noisy": True, "vector": "sync", "reward_mode": "own", "urban_reward": "scalar",
         "urban_hidden": [8], "rural_hidden": [8], "bridge_hidden": [8], "budget_scale_range": [0.5, 2.0],
         "user_cost_feature": True, "greedy_bootstrap": 0.25, "min_samples_per_transition": 3.0, "rating_ramps": True,
         "replay_episodes": 2, "budget_level_feature": True, "component_features": True}
CLI_TRAIN = dict.fromkeys(("episodes", "num_envs", "vector", "device", "seed", "inventory", "max_urban", "county",
                           "owner", "inventory_mapping", "amp", "threads", "agent", "checkpoint_replay", "fleet"))
"""The overrides of a plain `bridgefleet train --preset X` (every flag left out)."""


def test_the_ignored_options_are_the_ones_listed_here():
    assert sorted(OTHER) == sorted(IGNORED_BY_AGENT["bridge"] + IGNORED_BY_AGENT["fleet"])


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("agent", [None, "fleet", "bridge"])
def test_every_preset_resolves_with_either_agent(preset, agent):
    if PRESETS[preset].get("teacher") is not None and agent == "fleet":  # a teacher teaches the per-bridge network
        with pytest.raises(ConfigError, match="teacher = 'lagrangian': a teacher trains the per-bridge network, not "
                           "agent: fleet"):
            resolve_config(preset, None, {**CLI_TRAIN, "agent": agent})
        return
    cfg = resolve_config(preset, None, {**CLI_TRAIN, "agent": agent})
    assert cfg.preset == preset and cfg.agent == (agent or PRESETS[preset].get("agent", "fleet"))


@pytest.mark.parametrize(("agent", "name"), [(a, n) for a, names in IGNORED_BY_AGENT.items() for n in names])
def test_an_option_the_agent_ignores_is_refused_naming_it_and_the_agent(agent, name):
    preset = "sarsa" if agent == "bridge" else "fleet"
    with pytest.raises(ConfigError) as err:
        resolve_config(preset, None, {name: OTHER[name]})
    msg = str(err.value)
    assert f"{name} = " in msg and f"no effect with agent: {agent}" in msg and "\n" not in msg
    another = "baseline" if agent == "bridge" else "sarsa"
    if PRESETS[another].get(name) == OTHER[name]:  # that preset's own setting: never refused
        assert getattr(resolve_config(another, None, {name: OTHER[name], "agent": agent}), name) == OTHER[name]
    else:
        with pytest.raises(ConfigError, match=f"{name} = .*no effect with agent: {agent}"):  # --agent on it
            resolve_config(another, None, {name: OTHER[name], "agent": agent})
    # the other agent reads it: accepted
    other = "fleet" if agent == "bridge" else "bridge"
    want = tuple(OTHER[name]) if isinstance(OTHER[name], list) else OTHER[name]
    assert getattr(resolve_config(preset, None, {name: OTHER[name], "agent": other}), name) == want


def test_the_default_or_the_presets_value_is_accepted(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({"compile": "off", "double": False, "vector": "native",
                                    "urban_hidden": [512, 1024, 512]}))
    assert resolve_config("sarsa", path).agent == "bridge"
    path.write_text(yaml.safe_dump({"bridge_hidden": [128, 128]}))
    assert resolve_config("fleet", path).agent == "fleet"
    # the fleet preset's own double / urban_hidden under --agent bridge are not the user's: not refused, and
    # repeating the preset's value in the file is not either
    path.write_text(yaml.safe_dump({"urban_hidden": [256, 256], "double": True}))
    assert resolve_config("fleet", path, {"agent": "bridge"}).urban_hidden == (256, 256)
    # a run folder's config.yaml (every field written out) is still read as it was: the check is the resolution's
    assert TrainConfig.from_dict({"agent": "bridge", "double": True, "lr_end_fraction": 0.5}).double


def test_a_file_setting_ignored_options_is_refused_naming_the_file_and_all_of_them(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({"double": True, "noisy": True, "episodes": 10}))
    with pytest.raises(ConfigError) as err:
        resolve_config("sarsa", path)
    assert str(err.value) == (f"{path}: training option(s) double = True, noisy = True: no effect with agent: bridge "
                              "(only agent: fleet reads them); leave them out, or train agent: fleet")


def test_cli_train_refuses_in_one_line_before_writing_anything(tmp_path, capsys):
    out = tmp_path / "run"
    cfg = tmp_path / "t.yaml"
    cfg.write_text(yaml.safe_dump({"preset": "fleet", "bridge_hidden": [8]}))
    assert main(["train", "--config", str(cfg), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"bridgefleet train: error: {cfg}: training option(s) bridge_hidden = (8,): no effect with agent: "
                   "fleet (only agent: bridge reads it); leave it out, or train agent: bridge"]
    assert main(["train", "--vector", "sync", "--out", str(out), "--quiet"]) == 2  # default preset: agent bridge
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["bridgefleet train: error: training option(s) vector = 'sync': no effect with agent: bridge "
                   "(only agent: fleet reads it); leave it out, or train agent: fleet"]
    assert not out.exists()


def test_a_sweep_searching_an_option_its_agent_ignores_is_refused(tmp_path):
    from bridgefleet.sweep.space import load_space

    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump({"preset": "sarsa", "space": {"double": {"grid": [False, True]}}}))
    with pytest.raises(ConfigError, match=r"field 'double' = True: training option\(s\) double = True: no effect "
                                          "with agent: bridge"):
        load_space(path)
    path.write_text(yaml.safe_dump({"preset": "sarsa", "space": {"lr_end_fraction": {"grid": [0.1, 1.0]}}}))
    assert load_space(path).trials(samples=1, seeds=1) == 2
    # an ignored option under fixed: is named there, not as the searched field's fault
    path.write_text(yaml.safe_dump({"preset": "sarsa", "fixed": {"double": True},
                                    "space": {"lr_end_fraction": {"grid": [0.1, 1.0]}}}))
    with pytest.raises(ConfigError, match=r"space.yaml: fixed: training option\(s\) double = True: no effect"):
        load_space(path)


def test_training_validation_and_test_fleets_stay_apart():
    from bridgefleet.config.seeds import TEST_FLEETS, TEST_SEED, VALIDATION_SEED, training_seeds_hit

    assert TrainConfig().eval_seed == VALIDATION_SEED
    for preset in PRESETS:  # no preset evaluates on the test fleets, nor trains on its validation fleets
        cfg = resolve_config(preset)
        assert not TEST_SEED <= cfg.eval_seed < TEST_SEED + TEST_FLEETS
    with pytest.raises(ConfigError, match="eval_seed = 1000000000: the evaluations during training would use test"):
        resolve_config("sarsa", None, {"eval_seed": TEST_SEED})
    # default preset: 16 fleets a vector episode, so vector episode 15 of seed 99,440 starts at fleet
    # 99,440 + 15 × 16 × 7,919 = 2,000,000, the first validation fleet
    with pytest.raises(ConfigError, match=r"seed = 99440: .* fleet seed 2000000, one of the validation fleets "
                                          r"\(2000000 … 2000049\); pick another seed"):
        resolve_config("sarsa", None, {"seed": 99_440})
    assert resolve_config("sarsa", None, {"seed": 99_440, "episodes": 240}).seed == 99_440  # stops before it
    # the arithmetic equals listing every training fleet
    rng = np.random.default_rng(0)
    for _ in range(500):
        seed, e, n = int(rng.integers(0, 5000)), int(rng.choice([1, 3, 16])), int(rng.integers(1, 60))
        lo = int(rng.integers(0, 500_000))
        hi = lo + int(rng.integers(1, 20_000))
        fleets = [seed + 7919 * k + i for k in range(0, -(-n // e) * e, e) for i in range(e)]
        assert training_seeds_hit(seed, e, n, lo, hi) == min((x for x in fleets if lo <= x < hi), default=None)


def test_the_default_preset_trains_across_budget_levels_unless_a_config_file_says_null(tmp_path):
    """One run for every budget level of `scenarios` (issue 27); `budget_scale_range: null` in a file trains at the
    sized budget alone, and a range in a file replaces the preset's."""
    assert resolve_config("sarsa").budget_scale_range == (0.25, 2.0)
    assert resolve_config("fleet").budget_scale_range is None
    path = tmp_path / "t.yaml"
    path.write_text("budget_scale_range: null\n")
    assert resolve_config("sarsa", path).budget_scale_range is None
    path.write_text("budget_scale_range: [0.5, 1.5]\n")
    assert resolve_config("sarsa", path).budget_scale_range == (0.5, 1.5)


def test_lr_cut_on_a_validation_drop_only():
    """lr_drop_factor cuts the learning rate on an evaluation after ε's decay more than 1 % of the best's size below
    the best, for the rest of the run; a plateau, a small dip, the first evaluation or a drop while ε decays leaves
    it."""
    cfg = TrainConfig.from_dict({"lr_drop_factor": 0.5, "episodes": 2000, "eps_decay_fraction": 0.5})
    assert cfg.lr_scale_after(1.0, 100.0, 50.0, 999) == 1.0  # ε still decays
    assert cfg.lr_scale_after(1.0, 100.0, 98.9, 1000) == 0.5
    assert cfg.lr_scale_after(1.0, None, -5.0, 1600) == 1.0  # the first evaluation
    assert cfg.lr_scale_after(1.0, 100.0, 99.5, 1600) == 1.0  # 0.5 % below
    assert cfg.lr_scale_after(1.0, 100.0, 100.0, 1600) == 1.0  # a plateau
    assert cfg.lr_scale_after(1.0, 100.0, 98.9, 1600) == 0.5  # 1.1 % below
    assert cfg.lr_scale_after(0.5, 100.0, 90.0, 1600) == 0.25  # cuts compound
    assert cfg.lr_scale_after(1.0, -200.0, -203.0, 1600) == 0.5  # 1.5 % of |best| below a negative best
    assert cfg.lr_scale_after(1.0, -200.0, -201.0, 1600) == 1.0
    assert TrainConfig.from_dict({}).lr_scale_after(1.0, 100.0, 50.0, 1600) == 1.0  # off by default
    with pytest.raises(ConfigError, match="lr_drop_factor"):
        TrainConfig.from_dict({"lr_drop_factor": 0.0})


def test_a_runs_config_shows_only_the_options_it_reads_and_trains_the_same_run_again():
    for preset, absent, present in (("default", ("eps_start", "buffer_capacity", "n_step", "episodes", "urban_hidden"),
                                     ("teacher_levels", "fit_epochs", "bridge_hidden", "lr", "batch_size")),
                                    ("sarsa", ("teacher_levels", "fit_epochs", "urban_hidden", "double"),
                                     ("eps_start", "buffer_capacity", "episodes", "bridge_hidden")),
                                    ("fleet", ("bridge_hidden", "teacher_levels", "budget_scale_range"),
                                     ("urban_hidden", "rural_hidden", "double", "episodes"))):
        cfg = resolve_config(preset, None, {})
        shown = cfg.to_dict(unread=False)
        assert not set(absent) & set(shown) and set(present) <= set(shown), preset
        assert set(cfg.to_dict()) - set(shown) == cfg.unread_options()
        # read back (as `train --config` reads it), every option the run reads is the same
        again = resolve_config(preset, None, yaml.safe_load(yaml.safe_dump(shown)))
        assert again.to_dict(unread=False) == shown, preset


def test_a_preset_flag_over_a_file_written_for_another_preset_is_refused(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(resolve_config("default", None, {}).to_dict(unread=False)))
    with pytest.raises(ConfigError, match=r"config.yaml: written for preset 'default', and --preset sarsa would not "
                                          r"change its settings, only the name"):
        resolve_config("sarsa", path)
    assert resolve_config("default", path).teacher == "lagrangian"  # the same name, or none, is the file's run
    assert resolve_config(None, path).teacher == "lagrangian"


def test_dueling_is_read_by_a_run_with_a_teacher():
    from bridgefleet.config.training import IGNORED_BY_TEACHER

    assert "dueling" not in IGNORED_BY_TEACHER  # the distilled network is built with it (training/distill_run.py)
    assert resolve_config("default", None, {"dueling": True}).dueling


def test_unknown_names_suggest_the_known_name_a_typo_was_meant_for_and_no_other():
    from bridgefleet.config.names import unknown_names

    known = ["batch_size", "learning_starts", "lr", "n_urban", "n_rural"]
    assert unknown_names(["n_urbann"], known) == "'n_urbann' (did you mean 'n_urban'?)"
    # sorted, each on its own; a different word (similarity 0.79 to learning_starts) gets no suggestion
    assert (unknown_names(["learning_rate", "batchsize"], known)
            == "'batchsize' (did you mean 'batch_size'?), 'learning_rate'")
    assert unknown_names([3], known) == "'3'"
