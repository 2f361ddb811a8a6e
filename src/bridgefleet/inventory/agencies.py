"""Who holds the budgets of an inventory: its bridges' owners, one agency per owner code (and state).

An inventory's agencies are the owners the file codes: NBI item 22 ``OWNER_022`` (FHWA, *Recording and Coding
Guide for the Structure Inventory and Appraisal of the Nation's Bridges*, 1995, item 22) or SNBI item B.CL.01
``BCL01`` (FHWA-HIF-22-017, 2022), or a mapped CSV's ``owner`` column. A code names a class of owner (01 "state
highway agency", 02 "county highway agency" …): one agency per code, and per state code where a file holds several
states (each state's highway agency has its own budget). Each county, town and city holds its own budget, so with
``county`` and ``place`` given (the ``owners_by_locality`` agencies of :class:`~bridgefleet.config.FleetConfig`) a
county highway agency's bridges (:data:`COUNTY_OWNERS`) are one agency per county code (NBI item 3
``COUNTY_CODE_003``, SNBI ``BL02``) and a town's or city's (:data:`PLACE_OWNERS`) one per place code (NBI item 4
``PLACE_CODE_004``; an SNBI file's are not read, so its towns and cities stay one agency per code), where the
file's bridges of that owner lie in more than one. The urban / rural split of functional class (item 26) says where
a bridge is, not who pays for it, so it is not used here. Where no bridge has an owner code (a mapped CSV with no
``owner`` column, such as Indiana's GIAMS table) the whole inventory is one agency, ``all bridges``; bridges with a
blank code in a file that codes others form the agency ``owner not coded``.
"""

from __future__ import annotations

import numpy as np

NBI_OWNERS: dict[str, str] = {
    "01": "state highway agency", "02": "county highway agency", "03": "town or township highway agency",
    "04": "city or municipal highway agency", "11": "state park, forest or reservation agency",
    "12": "local park, forest or reservation agency", "21": "other state agencies", "25": "other local agencies",
    "26": "private (other than railroad)", "27": "railroad", "31": "state toll authority", "32": "local toll authority",
    "60": "other federal agencies", "61": "Indian tribal government", "62": "Bureau of Indian Affairs",
    "63": "Bureau of Fish and Wildlife", "64": "U.S. Forest Service", "66": "National Park Service",
    "67": "Tennessee Valley Authority", "68": "Bureau of Land Management", "69": "Bureau of Reclamation",
    "70": "Corps of Engineers (civil)", "71": "Corps of Engineers (military)", "72": "Air Force",
    "73": "Navy / Marines", "74": "Army", "75": "NASA", "76": "Metropolitan Washington Airports Service",
    "80": "unknown"}
"""NBI item 22 owner codes and their owners (FHWA Coding Guide, 1995, item 22)."""

SNBI_OWNERS: dict[str, str] = {"S01": "state transportation department", "L01": "county highway agency",
                               "L02": "town or township highway agency", "L03": "city or municipal highway agency"}
"""SNBI item B.CL.01 owner codes named one by one (FHWA-HIF-22-017); the others by their first letter
(:data:`SNBI_CLASSES`)."""
SNBI_CLASSES: dict[str, str] = {"S": "other state agency", "L": "other local agency", "F": "federal agency",
                                "I": "tribal government", "D": "defence agency"}
"""SNBI owner codes by first letter: ``S02``–``SX`` other state agencies, ``L04``–``LX`` other local agencies,
``F..`` / ``FL..`` federal agencies, ``I..`` tribal, ``D..`` defence (FHWA-HIF-22-017, item B.CL.01)."""

COUNTY_OWNERS = ("02", "L01")
"""Owner codes of a county highway agency (NBI item 22, SNBI ``BCL01``): one agency per county where counties are
told apart."""
PLACE_OWNERS = ("03", "04", "L02", "L03")
"""Owner codes of a town or township and of a city or municipal highway agency: one agency per place (NBI item 4)
where places are told apart."""

ALL_BRIDGES = "all bridges"
"""The one agency of an inventory that codes no owner."""
NOT_CODED = "owner not coded"
"""The agency of the bridges whose owner code is blank, in an inventory that codes others."""


def owner_name(code: str) -> str:
    """The agency's label of one owner code: the code and its owner (``"01 state highway agency"``, ``"L01 county
    highway agency"``, ``"S05 other state agency"``); a code of neither table as written, and ``"58 (not a Coding
    Guide item 22 code)"`` for digits the NBI table lacks; :data:`NOT_CODED` for a blank."""
    code = code.strip()
    if not code:
        return NOT_CODED
    if code.isdigit() and len(code) <= 2:
        code = code.zfill(2)
        return f"{code} {NBI_OWNERS[code]}" if code in NBI_OWNERS else f"{code} (not a Coding Guide item 22 code)"
    upper = code.upper()
    if upper in SNBI_OWNERS:
        return f"{upper} {SNBI_OWNERS[upper]}"
    if len(upper) >= 2 and upper[0] in SNBI_CLASSES and upper[1:].isalnum() and any(c.isdigit() for c in upper):
        return f"{upper} {SNBI_CLASSES[upper[0]]}"
    return code


def owner_labels(owner: np.ndarray, state: np.ndarray, county: np.ndarray | None = None,
                 place: np.ndarray | None = None) -> np.ndarray:
    """Each bridge's agency label, str (N,), from its owner code and state code (str (N,) each, '' where not
    coded): :func:`owner_name`; where a county highway agency's bridges (:data:`COUNTY_OWNERS`) lie in more than one
    county of ``county`` str (N,), ``", county C"`` appended to each (``", no county coded"`` to a blank), and a
    town's or city's (:data:`PLACE_OWNERS`) ``", place P"`` by ``place`` str (N,) likewise; then ``", state S"``
    where the bridges are in more than one state. :data:`ALL_BRIDGES` for every bridge where none has an owner
    code. One call of :func:`owner_name` per distinct code, not per bridge."""
    owner = np.asarray(owner, dtype=str)
    if not (np.char.strip(owner) != "").any():
        return np.full(len(owner), ALL_BRIDGES)
    codes, inverse = np.unique(owner, return_inverse=True)
    labels = np.array([owner_name(c) for c in codes.tolist()], dtype=object)[inverse]
    clean = np.char.zfill(np.char.upper(np.char.strip(codes)), 2)  # each distinct code once
    for where, owners, word, digits in ((county, COUNTY_OWNERS, "county", 3), (place, PLACE_OWNERS, "place", 5)):
        if where is not None:
            labels = _split(labels, np.isin(clean, owners)[inverse], np.asarray(where, dtype=str), word, digits)
    states = np.asarray(state, dtype=str)
    if len(np.unique(states)) > 1:
        labels = labels + ", state " + states.astype(object)
    return labels.astype(str)


def _split(labels: np.ndarray, local: np.ndarray, codes: np.ndarray, word: str, digits: int) -> np.ndarray:
    """``labels`` object (N,) with ``", {word} C"`` appended where ``local`` bool (N,) and the bridge's code C (str
    (N,), digits padded to ``digits``; "3" and "003" alike) is not blank, ``", no {word} coded"`` where it is, for
    the labels whose ``local`` bridges have more than one code, blank counted as one. A code of zeros counts as blank
    (item 4: 00000, not in a census place; a county 000 is none)."""
    if not local.any():
        return labels
    codes = np.char.strip(codes)
    codes = np.where(np.char.isdigit(codes), np.char.zfill(codes, digits), codes)
    codes = np.where(np.char.strip(codes, "0") == "", "", codes)
    pairs = np.unique(np.stack([labels[local].astype(str), codes[local]]), axis=1)  # distinct (label, code)
    names, count = np.unique(pairs[0], return_counts=True)
    several = local & np.isin(labels.astype(str), names[count > 1])
    suffix = np.where(codes != "", f", {word} " + codes.astype(object), f", no {word} coded")
    return np.where(several, labels + suffix, labels)


def group(labels: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    """The agencies of bridges labelled ``labels`` str (B,): (their names sorted, A of them; each bridge's agency,
    int64 (B,) in 0 … A−1). Sorted names put NBI codes in code order (``01 …`` before ``66 …``)."""
    names, index = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    return tuple(names.tolist()), index.astype(np.int64).reshape(-1)


def budget_shares(index: np.ndarray, size: np.ndarray, n_agencies: int) -> np.ndarray:
    """Each agency's share of the fleet's budget, float64 (A,) summing to 1: its bridges' part of ``size`` float
    (B,) (replacement value at USD 1 a m², or deck area m², as the budget is sized); equal shares where ``size`` sums
    to 0."""
    size = np.asarray(size, dtype=np.float64)
    total = float(size.sum())
    if total <= 0:
        return np.full(n_agencies, 1.0 / n_agencies)
    return np.bincount(index, weights=size, minlength=n_agencies) / total


def agency_lines(labels: np.ndarray, urban: np.ndarray, size: np.ndarray, usd_per_unit: float, how: str) -> list[str]:
    """The ``inventory`` summary's lines on who holds the budgets: each agency (:func:`group` of ``labels`` str
    (N,)) with its bridges (urban / rural, bool ``urban`` (N,)) and its annual budget, ``usd_per_unit`` × its part
    of ``size`` float (N,) (USD a year), then the total; ``how`` says how the budget is sized (its sources)."""
    names, index = group(labels)
    a_n = len(names)
    n = np.bincount(index, minlength=a_n)
    n_urban = np.bincount(index, weights=np.asarray(urban, dtype=np.float64), minlength=a_n).astype(np.int64)
    usd = usd_per_unit * np.bincount(index, weights=np.asarray(size, dtype=np.float64), minlength=a_n)
    width = max(len(s) for s in (*names, "agency", "total"))
    whose = ("no owner coded (NBI item 22 / SNBI BCL01), so one agency" if names == (ALL_BRIDGES,) else
             "owner codes, NBI item 22 / SNBI BCL01" + "".join(
                 f"; {who} by {word}, {item}" for who, word, item in (
                     ("a county highway agency's", "county", "item 3 / BL02"),
                     ("a town's or city's", "place", "item 4")) if any(f", {word} " in n for n in names)))
    out = [f"Agencies holding budgets ({whose}): {a_n}; each annual budget {how}",
           f"  {'agency':<{width}}  {'bridges':>7}  {'urban':>6}  {'rural':>6}  {'USD a year':>14}"]
    rows = [*zip(names, n.tolist(), n_urban.tolist(), usd.tolist(), strict=True),
            ("total", int(n.sum()), int(n_urban.sum()), float(usd.sum()))]
    out += [f"  {name:<{width}}  {k:>7,}  {u:>6,}  {k - u:>6,}  {m:>14,.0f}" for name, k, u, m in rows]
    return out
