"""Ray, when installed (the ``[ray]`` extra): importing it with a one-line error when it is not, and starting it
on this machine or joining a cluster, and tasks of one core each. Used by ``sweep``, ``bench --ray``,
``scenarios --ray-address`` and ``bound --ray-address``."""

from __future__ import annotations

import os
import socket

INSTALL = "Ray is not installed: pip install 'bridgefleet[ray]' (Ray Tune 2.x, an optional extra)"


def import_ray():
    """``ray`` and ``ray.tune``, or a one-line error saying how to install them."""
    try:
        import ray
        from ray import tune
    except ImportError:
        raise ModuleNotFoundError(INSTALL) from None
    return ray, tune


def connect(address: str | None, option: str = "--ray-address") -> None:
    """Start Ray on this machine with its cores (no address), or join the cluster at ``address`` (host:port).

    Raises:
        ConnectionError: the address cannot be reached (checked in 3 s, one line).
    """
    ray, _ = import_ray()
    if address and address != "auto":
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host or "127.0.0.1", int(port)), timeout=3):
                pass
        except (OSError, ValueError):
            raise ConnectionError(f"{option} {address}: no Ray head answers there (start one with "
                                  "`ray start --head`; give host:port)") from None
    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    import logging

    for name in ("ray", "ray.tune"):  # Tune's INFO lines would bury the table the command prints
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 **({} if address else {"num_cpus": len(os.sched_getaffinity(0))}))
    except ConnectionError as exc:  # e.g. a head with token authentication joined without its token
        if not address:
            raise
        raise ConnectionError(f"{option} {address}: {exc}. If the head was started with RAY_AUTH_MODE=token, "
                              "set RAY_AUTH_MODE=token here too, with the head's ~/.ray/auth_token copied to this "
                              "machine (docs/sweep.md)") from None


def on_one_core(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a Ray worker that holds one CPU, with Numba's threads limited to it."""
    import numba

    numba.set_num_threads(1)
    return fn(*args, **kwargs)


def one_core_tasks(address: str | None):
    """Ray joined at ``address`` (host:port; None or "local": started on this machine) and :func:`on_one_core`
    as a Ray task of one CPU: ``task.remote(fn, *args)``.

    Raises:
        ConnectionError, ModuleNotFoundError: as :func:`connect` and :func:`import_ray`.
    """
    ray, _ = import_ray()
    connect(None if address in (None, "local") else address)
    return ray, ray.remote(num_cpus=1)(on_one_core)
