"""Every test gets its own cache of hardware choices, so no test reads another's (or the user's) probe."""

import pytest


@pytest.fixture(autouse=True)
def _hardware_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BRIDGEFLEET_CACHE_DIR", str(tmp_path / "cache"))
