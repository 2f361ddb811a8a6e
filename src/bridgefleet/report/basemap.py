"""State outlines under the report's map, drawn without a network: the US Census Bureau's cartographic state
boundaries (2017, 1:10,000,000, public domain) as us-atlas 3.0.1 redistributes them (``states-10m.json``, TopoJSON,
bundled unchanged as ``bridgefleet/data/us-states-10m.json``; its source and licence in ``data/README.md``).

TopoJSON (the TopoJSON specification, §2.1.5 and §2.2): each arc is a list of quantized positions, the first
absolute and the rest deltas, ``position × scale + translate`` in degrees; a polygon's ring is its arcs joined,
``~i`` meaning arc ``i`` reversed, each arc after the first without its first point (the previous one's last).
"""

from __future__ import annotations

import functools
import json
from importlib import resources

import numpy as np

STATES_FILE = "us-states-10m.json"
"""The bundled TopoJSON of the states (``bridgefleet/data``)."""


@functools.cache
def state_outlines() -> tuple[tuple[str, tuple[np.ndarray, ...]], ...]:
    """Every state's (and territory's) name and rings, each ring float64 (N, 2) longitude, latitude in degrees
    (WGS 84 as the Census Bureau publishes them), read once from :data:`STATES_FILE`."""
    text = resources.files("bridgefleet").joinpath("data", STATES_FILE).read_text(encoding="utf-8")
    topo = json.loads(text)
    scale = np.asarray(topo["transform"]["scale"], dtype=np.float64)
    shift = np.asarray(topo["transform"]["translate"], dtype=np.float64)
    arcs = [np.cumsum(np.asarray(a, dtype=np.float64), axis=0) * scale + shift for a in topo["arcs"]]

    def ring(indices: list[int]) -> np.ndarray:
        parts = [arcs[i] if i >= 0 else arcs[~i][::-1] for i in indices]
        return np.concatenate([parts[0], *(p[1:] for p in parts[1:])])

    out = []
    for geom in topo["objects"]["states"]["geometries"]:
        polygons = geom["arcs"] if geom["type"] == "MultiPolygon" else [geom["arcs"]]
        out.append((geom["properties"]["name"], tuple(ring(r) for poly in polygons for r in poly)))
    return tuple(out)


def outlines_within(lon: tuple[float, float], lat: tuple[float, float]) -> list[tuple[str, tuple[np.ndarray, ...]]]:
    """The states with a ring whose bounding box meets the box ``lon`` × ``lat`` (degrees, (min, max) each)."""
    near = []
    for name, rings in state_outlines():
        if any(r[:, 0].min() <= lon[1] and r[:, 0].max() >= lon[0] and r[:, 1].min() <= lat[1]
               and r[:, 1].max() >= lat[0] for r in rings):
            near.append((name, rings))
    return near


def draw_states(ax, lon: tuple[float, float], lat: tuple[float, float]) -> list[str]:
    """Fill the states within the box on the matplotlib axes ``ax`` in light grey with their borders, each named
    where its largest ring's centre lies in the box; returns the names drawn."""
    from matplotlib.patches import Polygon

    names = []
    for name, rings in outlines_within(lon, lat):
        for r in rings:
            ax.add_patch(Polygon(r, closed=True, facecolor="#f1f1ec", edgecolor="#8a8a80", lw=0.8, zorder=0))
        big = max(rings, key=len)
        cx, cy = big.mean(0)
        if lon[0] <= cx <= lon[1] and lat[0] <= cy <= lat[1]:
            ax.text(cx, cy, name, ha="center", va="center", fontsize=8, color="#77776e", zorder=0.5)
        names.append(name)
    return names
