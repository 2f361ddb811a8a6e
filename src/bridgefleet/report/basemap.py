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
    where its largest ring's centre lies in the box, else (a neighbour) near the first of the box's corners and edge
    midpoints that it holds; returns the names drawn."""
    from matplotlib.patches import Polygon
    from matplotlib.path import Path

    (x0, x1), (y0, y1) = lon, lat
    dx, dy = 0.06 * (x1 - x0), 0.04 * (y1 - y0)
    spots = [(x0 + dx, y0 + dy, "left", "bottom"), (x1 - dx, y0 + dy, "right", "bottom"),
             (x0 + dx, y1 - dy, "left", "top"), (x1 - dx, y1 - dy, "right", "top"),
             ((x0 + x1) / 2, y0 + dy, "center", "bottom"), ((x0 + x1) / 2, y1 - dy, "center", "top"),
             (x0 + dx, (y0 + y1) / 2, "left", "center"), (x1 - dx, (y0 + y1) / 2, "right", "center")]
    names, taken = [], set()
    for name, rings in outlines_within(lon, lat):
        for r in rings:
            ax.add_patch(Polygon(r, closed=True, facecolor="#f1f1ec", edgecolor="#8a8a80", lw=0.8, zorder=0))
        cx, cy = max(rings, key=len).mean(0)
        style = {"fontsize": 9, "color": "#6b6b62", "zorder": 0.5, "style": "italic"}
        if x0 <= cx <= x1 and y0 <= cy <= y1:
            ax.text(cx, cy, name, ha="center", va="center", **style)
        else:
            spot = next((k for k, (x, y, _, _) in enumerate(spots) if k not in taken
                         and any(Path(r).contains_point((x, y)) for r in rings)), None)
            if spot is not None:
                taken.add(spot)
                x, y, ha, va = spots[spot]
                ax.text(x, y, name, ha=ha, va=va, **style)
        names.append(name)
    return names
