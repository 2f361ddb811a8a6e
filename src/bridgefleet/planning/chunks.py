"""The single-bridge DP over chunks of bridges as Ray tasks across a cluster.

Given the prices, the bridges' DPs are independent (:mod:`bridgefleet.planning.dp`), so a solve splits into
chunks of bridges that run anywhere; the price search's master LP stays with the driver. Each chunk's
:class:`~bridgefleet.planning.transitions.BridgeMDPs` is put into Ray's object store once per fleet and reused
by every solve of the search; a task gets only its prices. Each bridge is computed by the same kernel with the
same numbers as in one process, so the results are identical (``tests/test_cluster.py``).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from bridgefleet.planning.dp import Layout, Solution, solve
from bridgefleet.planning.transitions import BridgeMDPs


def _solve_here(mdps: BridgeMDPs, *args) -> tuple[Solution, str]:
    """One chunk's :func:`bridgefleet.planning.dp.solve` and the Ray node it ran on."""
    import ray

    return solve(mdps, *args), ray.get_runtime_context().get_node_id()


class RaySolver:
    """:func:`bridgefleet.planning.dp.solve` with the bridges split into chunks that run as Ray tasks (one core
    each), for ``lagrangian_bound(solver=…)`` and ``LagrangianPlanner(solver=…)``.

    Args:
        address: the Ray head, host:port (``ray start --head``; docs/sweep.md), "auto", or None / "local" to
            start Ray on this machine with its cores.
        chunks: chunks per solve (at most one per bridge); default: the cluster's CPUs, at most one per 64
            bridges.

    Attributes:
        nodes: the Ray node ids the chunks ran on so far.

    Raises:
        ConnectionError: no Ray head answers at ``address``; ModuleNotFoundError: Ray is not installed.
    """

    def __init__(self, address: str | None = None, chunks: int | None = None):
        from bridgefleet.cluster import one_core_tasks

        self.ray, self.task = one_core_tasks(address)
        self.chunks = chunks
        self.cpus = max(1, int(self.ray.cluster_resources().get("CPU", 1)))
        self.nodes: set[str] = set()
        self._refs: dict[int, tuple[BridgeMDPs, list[tuple[slice, Any]]]] = {}

    def _parts(self, mdps: BridgeMDPs) -> list[tuple[slice, Any]]:
        """The chunks of ``mdps`` in the object store: put there once, kept for the last two MDPs solved (the
        search grid and the reported grid of one price search)."""
        hit = self._refs.get(id(mdps))
        if hit is not None and hit[0] is mdps:
            return hit[1]
        k = min(self.chunks, mdps.n) if self.chunks else min(self.cpus, max(1, mdps.n // 64))
        edges = np.linspace(0, mdps.n, k + 1).round().astype(int)
        parts = [slice(int(a), int(b)) for a, b in itertools.pairwise(edges) if b > a]
        if len(self._refs) >= 2:
            self._refs.pop(next(iter(self._refs)))
        self._refs[id(mdps)] = (mdps, [(p, self.ray.put(mdps.select(p))) for p in parts])
        return self._refs[id(mdps)][1]

    def __call__(self, mdps: BridgeMDPs, price_cost: np.ndarray, price_count: np.ndarray,
                 active: np.ndarray | None = None, store: tuple[int, int] | None = None,
                 price_poor: np.ndarray | None = None, eval_utility: np.ndarray | None = None,
                 keep: tuple[int, ...] = (), start: tuple[int, np.ndarray] | None = None,
                 layout: Layout | None = None, eval_step: np.ndarray | None = None, forward: bool = True) -> Solution:
        """As :func:`bridgefleet.planning.dp.solve` (same arguments, shapes and result)."""
        def rows(a, p):
            return None if a is None else np.ascontiguousarray(a[p])

        parts = self._parts(mdps)
        futures = [self.task.remote(_solve_here, ref, rows(price_cost, p), rows(price_count, p), rows(active, p), store,
                                    rows(price_poor, p), rows(eval_utility, p), keep,
                                    None if start is None else (start[0], rows(start[1], p)),
                                    None if layout is None else layout._replace(diag=rows(layout.diag, p)),
                                    rows(eval_step, p), forward)
                   for p, ref in parts]
        done = self.ray.get(futures)
        self.nodes.update(node for _, node in done)
        sols = [s for s, _ in done]  # every field is per bridge (eu None without ``store``)
        return Solution(*(None if field[0] is None else np.concatenate(field) for field in zip(*sols, strict=True)))
