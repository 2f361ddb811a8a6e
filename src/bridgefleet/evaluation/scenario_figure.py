"""The scenarios' figure: budget against the share of deck area poor by year, the rule's line and the least
budgets (``scenarios.png``, and the report's section "what each budget buys")."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bridgefleet.outputs import figure_out

SHOW_YEARS = (1, 5, 10, 30)
"""The years the scenario table, its figure and the report show."""


def plot_scenarios(data: dict, path: Path | None = None, today: float | None = None) -> str | None:
    """Budget (USD a year) against the share of deck area poor by year, the rule and the least budgets, from
    :func:`bridgefleet.evaluation.scenario_tables.summary`'s data; ``today``: the share poor today (year 0, the same
    at every budget), drawn as a line where given; written to ``path``, or returned as an ``<svg>`` element when
    ``path`` is None."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    levels = data["levels"]
    y_n = len(levels[0]["deck_poor_by_year"])
    sized = data["sized_usd"]
    usd = np.array([lv["budget_usd"] for lv in levels]) / 1e6
    fig, ax = plt.subplots(figsize=(9, 5))
    for y in [y for y in SHOW_YEARS if y <= y_n]:
        ax.plot(usd, [100 * lv["deck_poor_by_year"][y - 1] for lv in levels], marker="o", label=f"year {y}")
    if today is not None:
        ax.axhline(100 * today, color="#555", lw=1.5, label=f"today (year 0): {today:.1%}")
    ax.plot(usd, [100 * max(lv["deck_poor_by_year"]) for lv in levels], "k:", marker=".", label="worst year (mean)")
    if "agent" in levels[0]:
        ax.plot(usd, [100 * max(lv["agent"]["deck_poor_by_year"]) for lv in levels], color="#ef6c00", ls="--",
                marker="s", label="trained agent, worst year")
    ax.axhline(100 * data["rule"], color="#c62828", ls="--", label=f"rule: {data['rule']:.0%} poor")
    ax.axvline(data["certified_least_scale"] * sized / 1e6, color="#6a1b9a", ls="-.", label="certified least budget")
    if data["planner_least_scale"] is not None:
        ax.axvline(data["planner_least_scale"] * sized / 1e6, color="#1565c0", ls=":", label="planner's least budget")
    ax.axvline(sized / 1e6, color="grey", lw=0.8, label="sized budget")
    ax.set_xlabel("annual budget, million USD")
    ax.set_ylabel(f"deck area poor, % ({data['basis']})")
    ax.set_title("What each budget buys: share of deck area poor (FHWA, ≤ 4) by year, lagrangian planner")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return figure_out(fig, path, dpi=100)
