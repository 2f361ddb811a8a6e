"""Every test gets its own cache of hardware choices, so no test reads another's (or the user's) probe.

The suite was written on the continuous fleet model, the default until 2026-12-07: a test that names no fleet model
runs on ``continuous-2026`` as it was written for, unless marked ``@pytest.mark.default_model`` (those run on today's
default, the component model, and check that it is the default: tests/test_default_model.py). Tests of the component
model name it."""

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "default_model: run on the package's default fleet model (components-2026)")


@pytest.fixture(autouse=True)
def _hardware_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BRIDGEFLEET_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(autouse=True)
def _fleet_model_written_for(request, monkeypatch):
    if request.node.get_closest_marker("default_model") is None:
        monkeypatch.setattr("bridgefleet.config.fleet.DEFAULT_FLEET_MODEL", "continuous-2026")
