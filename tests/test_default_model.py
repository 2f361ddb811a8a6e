"""The component model is the default of whatever names no fleet; what was written before it keeps its model."""

import pytest
import yaml

from bridgefleet.cli import main
from bridgefleet.config import FleetConfig
from bridgefleet.config.presets import resolve_config
from bridgefleet.envs.fleet_env import FleetEnv

pytestmark = pytest.mark.default_model


def test_a_fleet_named_by_nothing_is_the_component_model():
    cfg = FleetConfig.default_model()
    assert cfg.component_model == "massachusetts-2026" and cfg.model_name() == "components-2026"
    assert resolve_config().fleet.model_name() == "components-2026"  # a new run of the default preset
    assert FleetEnv().sim.config.component_model == "massachusetts-2026"


def test_a_command_without_a_fleet_runs_on_the_component_model(capsys):
    assert main(["evaluate", "--episodes", "2", "--policy", "worst_first", "--no-bound"]) == 0
    assert "fleet model: components-2026" in capsys.readouterr().out


def test_configs_and_runs_written_before_keep_the_continuous_model(tmp_path):
    # a fleet mapping without model: (every fleet file and run config.yaml written before 2026-12-07)
    assert FleetConfig.from_dict({"n_urban": 3}).component_model is None
    assert FleetConfig.named("default").model_name() == "continuous-2026"  # the former name, read in old files
    old = tmp_path / "fleet.yaml"
    old.write_text("model: default\nn_rural: 4\n")
    assert FleetConfig.from_yaml(old).model_name() == "continuous-2026"
    run = tmp_path / "config.yaml"  # a run's config.yaml: its fleet section holds every field but the new one
    fleet = FleetConfig().to_dict()
    fleet.pop("component_model")
    run.write_text(yaml.safe_dump({"preset": "default", "fleet": fleet}))
    assert resolve_config(None, run).fleet.model_name() == "continuous-2026"


def test_the_former_name_on_the_command_line_says_what_it_is_called_now(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--fleet-model", "default", "--episodes", "1", "--no-bound"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "'default' is now named 'continuous-2026' (the default fleet model is components-2026" in err
    assert err.count("\n") == 1
