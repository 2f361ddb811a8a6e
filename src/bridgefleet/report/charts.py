"""The report's charts as inline SVG text (matplotlib's SVG backend: vector, printable, no network)."""

from __future__ import annotations

import numpy as np

from bridgefleet.evaluation.evaluate import EvalResult
from bridgefleet.outputs import svg_text
from bridgefleet.report.basemap import draw_states
from bridgefleet.report.policies import Scale
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


CHART_POLICIES = 5
"""The most policies the policy chart shows: the trained agents, the planner and the best rules of thumb (the
table lists every one; do nothing, at 0, would set the scale and hide the differences that matter)."""


def policies_chart(results: list[EvalResult], sc: Scale, trained: str, names: dict[str, str]) -> str:
    """The score (0: do nothing, 100: the upper bound or the best shown, :class:`~bridgefleet.report.policies.
    Scale`) ± 95 % CI of the best few policies (:data:`CHART_POLICIES`, the trained agents and the planner
    always among them), best on top, on an axis that spans them alone; ``names``: each policy's name in words."""
    plt = _plt()
    ranked = sorted(results, key=lambda r: -r.mean_return)
    keep = [r for r in ranked if r.policy in (trained, "lagrangian")]
    keep += [r for r in ranked if r not in keep][: max(0, CHART_POLICIES - len(keep))]
    rs = sorted(keep, key=lambda r: r.mean_return)
    score = np.array([sc.score(r.mean_return) for r in rs])
    err = np.array([sc.points(r.ci95) for r in rs])
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rs) + 1.4))
    colours = ["#1565c0" if r.policy == trained else "#6a1b9a" if r.policy == "lagrangian" else "#616161"
               for r in rs]
    y = np.arange(len(rs))
    ax.errorbar(score, y, xerr=err, fmt="none", ecolor="#9e9e9e", capsize=4, lw=1.2)
    ax.scatter(score, y, c=colours, s=70, zorder=3)
    for k, v in enumerate(score):
        ax.annotate(f"{v:.1f}", (v, k), xytext=(0, 7), textcoords="offset points", ha="center", fontsize=8)
    ax.set_yticks(y, [names.get(r.policy, r.policy) for r in rs])
    ax.set_ylim(-0.6, len(rs) - 0.4)
    hi = max(100.0 if sc.top_is_bound else float((score + err).max()), float((score + err).max()))
    lo = float((score - err).min())
    pad = max(0.5, 0.08 * (hi - lo))
    ax.set_xlim(lo - pad, hi + pad)
    if sc.top_is_bound:
        ax.axvline(100, color="k", ls="--", lw=1, label="upper bound (100): no plan within the budgets can do better")
        ax.legend(loc="lower left", fontsize=8)
    ax.set_xlabel("score: 0 = do nothing, 100 = " + ("the upper bound" if sc.top_is_bound else "the best policy")
                  + " (higher is better; the axis shows the best few)")
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)


def training_chart(curve: list[tuple[int, float, float, float]], target_name: str) -> str | None:
    """The trained agents' result on the run's validation fleets during training (the run's own measure) against
    the yardstick it was trained beside, ``target_name`` in words."""
    if not curve:
        return None
    plt = _plt()
    ep, sec, ret, target = (np.array(v) for v in zip(*curve, strict=True))
    fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.plot(ep, ret, "o-", color="#1565c0", label="trained agent, on the training fleet's validation futures")
    ax.axhline(target[-1], color="#c62828", ls="--", label=target_name)
    ax.set_xlabel("training episodes")
    ax.set_ylabel("result during training\n(higher is better)")
    if len(np.unique(ep)) > 1:
        top = ax.secondary_xaxis("top", functions=(lambda e: np.interp(e, ep, sec), lambda s: np.interp(s, sec, ep)))
        top.set_xlabel("seconds of training")
    else:  # one evaluation: no span of episodes (or seconds) to draw an axis over
        ax.set_xlim(ep[0] - 1, ep[0] + 1)
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    return _svg(fig)


def map_chart(lat: np.ndarray, lon: np.ndarray, condition: np.ndarray, deck_area: np.ndarray,
              first_action_year: np.ndarray) -> str | None:
    """Bridges at their coordinates on the state outlines around them (bundled, no network:
    :mod:`bridgefleet.report.basemap`), coloured by today's band, sized by deck area, marked by the year of their
    first planned action. None when no bridge has coordinates."""
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
    box = []
    for v in (lon[ok], lat[ok]):
        lo, hi = float(v.min()), float(v.max())
        pad = max(0.02, 0.08 * (hi - lo))
        box.append((lo - pad, hi + pad))
    states = draw_states(ax, *box)
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
    ax.set_xlim(*box[0])
    ax.set_ylim(*box[1])
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    ax.grid(alpha=0.2)
    ax.set_title(f"{int(ok.sum())} bridges with coordinates (NBI items 16/17); size: deck area", fontsize=10)
    if states:
        ax.annotate("State outlines: US Census Bureau, 2017, 1:10,000,000", (0, 0), xytext=(0, -38),
                    xycoords="axes fraction", textcoords="offset points", fontsize=7, color="#777")
    return _svg(fig)
