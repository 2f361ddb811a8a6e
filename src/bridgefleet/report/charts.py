"""The report's charts as inline SVG text (matplotlib's SVG backend: vector, printable, no network)."""

from __future__ import annotations

import numpy as np

from bridgefleet.evaluation.evaluate import EvalResult
from bridgefleet.outputs import svg_text
from bridgefleet.sim.model import GOOD_RATING, POOR_BELOW

BAND_COLOURS = {"good": "#2e7d32", "fair": "#f9a825", "poor": "#c62828"}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"  # text stays text: searchable, crisp in print
    return plt


def _svg(fig) -> str:
    return svg_text(fig, bbox_inches="tight")


def policies_chart(results: list[EvalResult], bound: tuple[float, float] | None, trained: str) -> str:
    """Mean discounted return ± 95 % CI of every policy, best on top, the upper bound as a line."""
    plt = _plt()
    rs = sorted(results, key=lambda r: r.mean_return)
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rs) + 1.2))
    colours = ["#1565c0" if r.policy == trained else "#6a1b9a" if r.policy == "lagrangian" else "#9e9e9e"
               for r in rs]
    ax.barh([r.policy for r in rs], [r.mean_return for r in rs], xerr=[r.ci95 for r in rs], color=colours,
            capsize=3)
    if bound is not None:
        ax.axvline(bound[0], color="k", ls="--", lw=1, label=f"upper bound {bound[0]:.1f}")
        ax.legend(loc="lower right")
    ax.set_xlabel("mean discounted return over the evaluation fleets (higher is better)")
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)


def training_chart(curve: list[tuple[int, float, float, float]], target_name: str) -> str | None:
    """Evaluation return during training against the best heuristic's, in the table's units."""
    if not curve:
        return None
    plt = _plt()
    ep, sec, ret, target = (np.array(v) for v in zip(*curve, strict=True))
    fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.plot(ep, ret, "o-", color="#1565c0", label="trained policy (greedy), validation fleets")
    ax.axhline(target[-1], color="#c62828", ls="--", label=f"best rule of thumb ({target_name})")
    ax.set_xlabel("training episodes")
    ax.set_ylabel("mean discounted return")
    if len(np.unique(ep)) > 1:
        top = ax.secondary_xaxis("top", functions=(lambda e: np.interp(e, ep, sec), lambda s: np.interp(s, sec, ep)))
        top.set_xlabel("seconds of training")
    else:  # one evaluation: no span of episodes (or seconds) to draw an axis over
        ax.set_xlim(ep[0] - 1, ep[0] + 1)
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    return _svg(fig)


def map_chart(lat: np.ndarray, lon: np.ndarray, condition: np.ndarray, deck_area: np.ndarray,
              first_action_year: np.ndarray) -> str | None:
    """Bridges at their coordinates (no tiles), coloured by today's band, sized by deck area, marked by the
    year of their first planned action. None when no bridge has coordinates."""
    ok = np.isfinite(lat) & np.isfinite(lon)
    if not ok.any():
        return None
    plt = _plt()
    band = np.where(condition >= GOOD_RATING, "good", np.where(condition < POOR_BELOW, "poor", "fair"))
    size = 12 + 120 * np.sqrt(deck_area / max(float(deck_area[ok].max()), 1.0))
    groups = (("first work in years 1–5", (first_action_year >= 1) & (first_action_year <= 5), "o"),
              ("years 6–10", (first_action_year >= 6) & (first_action_year <= 10), "s"),
              ("after year 10", first_action_year > 10, "^"),
              ("no work planned", first_action_year == 0, "x"))
    fig, ax = plt.subplots(figsize=(8, 7))
    for label, mask, marker in groups:
        m = ok & mask
        if m.any():
            colours = [BAND_COLOURS[b] for b in band[m]]
            kw = {"edgecolors": "k", "linewidths": 0.3} if marker != "x" else {}
            ax.scatter(lon[m], lat[m], s=size[m], c=colours, marker=marker, alpha=0.8, label=label, **kw)
    for b, colour in BAND_COLOURS.items():
        ax.scatter([], [], c=colour, s=40, label=f"{b} today")
    ax.set_xlabel("longitude, °")
    ax.xaxis.set_major_locator(_plt().MaxNLocator(5))  # degree labels are long: few enough not to overlap
    ax.set_ylabel("latitude, °")
    ax.set_aspect(1.0 / np.cos(np.deg2rad(np.nanmean(lat[ok]))))  # degrees of longitude shrink with latitude
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    ax.grid(alpha=0.3)
    ax.set_title(f"{int(ok.sum())} bridges with coordinates (NBI items 16/17); size: deck area")
    return _svg(fig)
