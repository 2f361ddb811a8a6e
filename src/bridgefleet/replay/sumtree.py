"""Array-based binary sum-tree for proportional prioritized sampling.

Reference: T. Schaul, J. Quan, I. Antonoglou, D. Silver, "Prioritized Experience Replay",
ICLR 2016, appendix B.2.1 (sum-tree for proportional prioritization).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["SumTree"]


class SumTree:
    """Binary sum-tree over ``capacity`` non-negative float64 priorities (Schaul et al. 2016, B.2.1).

    The tree is stored in one flat float64 array of length ``2 * P`` where ``P`` is ``capacity``
    rounded up to a power of two: node ``1`` is the root, node ``i`` has children ``2i`` and
    ``2i + 1`` and leaf ``j`` lives at node ``P + j``. Padding leaves ``j >= capacity`` stay zero,
    so they can never be sampled.

    All operations are vectorized over a batch of indices: a Python loop runs only over the
    ``log2(P)`` tree levels, never over items.

    Args:
        capacity: Number of leaves, ``>= 1``; need not be a power of two.

    Raises:
        ValueError: If ``capacity < 1``.
    """

    def __init__(self, capacity: int) -> None:
        capacity = int(capacity)
        if capacity < 1:
            raise ValueError(f"SumTree capacity must be >= 1, got {capacity}")
        self._capacity = capacity
        self._depth = max(0, (capacity - 1).bit_length())  # number of levels below the root
        self._num_leaves = 1 << self._depth
        self._tree = np.zeros(2 * self._num_leaves, dtype=np.float64)

    @property
    def capacity(self) -> int:
        """Number of usable leaves (``int``)."""
        return self._capacity

    @property
    def total(self) -> float:
        """Sum of all leaf priorities (python ``float``, exact sum of the float64 children)."""
        return float(self._tree[1])

    @property
    def leaves(self) -> NDArray[np.float64]:
        """Read-only view of the leaf priorities, shape ``(capacity,)``, dtype float64."""
        view = self._tree[self._num_leaves : self._num_leaves + self._capacity]
        view.flags.writeable = False
        return view

    def __len__(self) -> int:
        return self._capacity

    def update(self, indices: ArrayLike, priorities: ArrayLike) -> None:
        """Set leaf priorities and recompute all their ancestors.

        Parents are recomputed from their children level by level (not by adding deltas), so
        every internal node is exactly ``left + right`` in float64 and no drift accumulates
        over millions of updates.

        Args:
            indices: Leaf indices, int array of shape ``(N,)`` (or scalar) in ``[0, capacity)``.
                Duplicates are allowed: the LAST priority given for an index wins.
            priorities: Non-negative finite priorities, float array of shape ``(N,)`` (or a scalar,
                broadcast to ``(N,)``).

        Raises:
            ValueError: If shapes differ, an index is out of range, or a priority is negative,
                NaN or infinite.
        """
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        pri = np.asarray(priorities, dtype=np.float64)
        if pri.ndim == 0:
            pri = np.full(idx.shape, float(pri))
        pri = pri.reshape(-1)
        if pri.shape != idx.shape:
            raise ValueError(f"indices shape {idx.shape} != priorities shape {pri.shape}")
        if idx.size == 0:
            return
        if idx.min() < 0 or idx.max() >= self._capacity:
            raise ValueError(f"SumTree index out of range [0, {self._capacity})")
        if not np.all(np.isfinite(pri)) or pri.min() < 0.0:
            raise ValueError("SumTree priorities must be finite and >= 0")
        self._write(idx, pri)

    def _write(self, idx: NDArray[np.int64], pri: NDArray[np.float64]) -> None:
        """:meth:`update` without its checks, for callers that validated already: ``idx`` int64 ``(N,)``,
        N ≥ 1, in range; ``pri`` float64 ``(N,)`` finite and ≥ 0."""
        # Keep the last occurrence of each index: unique over the reversed array picks it.
        uniq, first_in_rev = np.unique(idx[::-1], return_index=True)
        nodes = uniq + self._num_leaves
        self._tree[nodes] = pri[::-1][first_in_rev]
        tree = self._tree
        for _ in range(self._depth):
            nodes >>= 1
            # `nodes` stays sorted, so duplicates are adjacent; dropping them only saves work.
            if nodes.size > 1:
                keep = np.empty(nodes.size, dtype=bool)
                keep[0] = True
                np.not_equal(nodes[1:], nodes[:-1], out=keep[1:])
                nodes = nodes[keep]
            left = nodes << 1
            tree[nodes] = tree[left] + tree[left + 1]

    def get(self, indices: ArrayLike) -> NDArray[np.float64]:
        """Leaf priorities at ``indices`` (int array ``(N,)``) as float64 array ``(N,)``."""
        idx = np.asarray(indices, dtype=np.int64)
        return self._tree[idx + self._num_leaves]

    def find(self, prefix_sums: ArrayLike) -> NDArray[np.int64]:
        """Find, for each prefix sum ``v``, the leaf ``j`` with ``cumsum[j-1] <= v < cumsum[j]``.

        Values are clamped to ``[0, total)``. During the descent a query never enters a
        zero-sum subtree (if float rounding would send it into an empty right child it goes
        left instead), so the returned leaf always has a strictly positive priority and hence
        an index below ``capacity`` and below any region never given a priority.

        Args:
            prefix_sums: Float array of shape ``(N,)`` (or scalar).

        Returns:
            int64 array of shape ``(N,)`` with leaf indices in ``[0, capacity)``.

        Raises:
            ValueError: If the tree total is zero (nothing to sample).
        """
        total = self._tree[1]
        if not total > 0.0:
            raise ValueError("SumTree.find called on a tree with zero total priority")
        v = np.asarray(prefix_sums, dtype=np.float64).reshape(-1)
        v = np.clip(v, 0.0, np.nextafter(total, 0.0))
        node = np.ones(v.shape, dtype=np.int64)
        tree = self._tree
        for _ in range(self._depth):
            left = node << 1
            left_sum = tree[left]
            go_right = (v >= left_sum) & (tree[left + 1] > 0.0)
            v = np.where(go_right, v - left_sum, v)
            node = left + go_right
        return node - self._num_leaves

    def state_dict(self) -> dict[str, np.ndarray | int]:
        """Return ``{"capacity": int, "leaves": float64 (capacity,)}`` (a copy)."""
        return {"capacity": self._capacity, "leaves": np.array(self.leaves, copy=True)}

    def load_state_dict(self, state: dict[str, np.ndarray | int]) -> None:
        """Restore leaves from :meth:`state_dict` and rebuild all internal sums.

        Raises:
            ValueError: If the capacity or leaf shape does not match.
        """
        leaves = np.asarray(state["leaves"], dtype=np.float64)
        if int(state["capacity"]) != self._capacity or leaves.shape != (self._capacity,):
            raise ValueError(
                f"SumTree state capacity {state['capacity']} / shape {leaves.shape} "
                f"does not match capacity {self._capacity}"
            )
        self._tree[:] = 0.0
        self._tree[self._num_leaves : self._num_leaves + self._capacity] = leaves
        for level in range(self._depth - 1, -1, -1):
            lo, hi = 1 << level, 1 << (level + 1)
            self._tree[lo:hi] = self._tree[2 * lo : 2 * hi : 2] + self._tree[2 * lo + 1 : 2 * hi : 2]
