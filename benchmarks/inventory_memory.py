"""Peak memory and wall time of ``bridgefleet inventory FILE`` on a nation-sized inventory (issue 78, item 5).

Writes, in a temporary folder, an SNBI submittal file (JSON) of N records, built like the tests' SNBI fixtures
(tests/test_snbi.py) with the nested data sets a real submittal carries (Features with Routes, Elements,
Inspections, Works, SpanSets, SubstructureSets, PostingEvaluations), each record perturbed (bridge number, state,
ratings, year built, traffic, deck area); and a Coding-Guide NBI file of N records, the bundled DC 2019 rows
(src/bridgefleet/data/DC19.txt) replicated with new structure numbers and state codes. Runs ``bridgefleet inventory``
on each in a subprocess and reports its peak resident memory (``wait4``'s ``ru_maxrss``) and wall time, beside a
20-record file of the same kind: MB in all, and kB a record beyond the 20-record run. The Inventory's own arrays
(and the fleet ``to_fleet`` makes of them, which ``inventory`` builds too) are sized from a 2,000-record file, in
bytes a record. Target: ≤ 2 GB and ≤ 1 kB a record beyond those arrays at 600,000 records.

    nice .venv/bin/python benchmarks/inventory_memory.py [--records 600000] [--kinds snbi,nbi] [--keep DIR]

Read whole (before the readers streamed) the 600,000-record files took 8,167 MB / 81 s (SNBI) and 3,725 MB / 27 s
(Coding Guide), 13.7 and 6.1 kB a record; streamed, 317 MB / 74 s and 313 MB / 19 s, 0.35 kB a record
(docs/benchmarks.md, "Reading a nation's inventory").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bridgefleet.inventory.load import bundled_path, load_inventory

STATES = (6, 11, 17, 18, 19)  # FHWA state codes with a bundled unit cost: several states, as the national file
URBAN_AREAS = ("47900", "51445", "16264", "99999", "99998")
WORK_CODES = ("DK4", "SP2", "DK5", "SB3", "JT1", "RT1", "0")


def _snbi_record(k: int, rng: random.Random) -> dict:
    """Record ``k`` (1-based): a bridge as tests/test_snbi.py's ``_bridge`` builds one, with the nested data sets of a
    real submittal; ratings, year built, traffic and deck area drawn from ``rng``."""
    built = rng.randint(1900, 2018)
    culvert = rng.random() < 0.15
    r = [str(rng.randint(3, 9)) for _ in range(3)]
    ratings = ({"BC01": "N", "BC02": "N", "BC03": "N", "BC04": str(rng.randint(3, 9))} if culvert else
               {"BC01": r[0], "BC02": r[1], "BC03": r[2], "BC04": "N"})
    aadt = rng.randint(50, 150_000)
    length = round(rng.uniform(21.0, 900.0), 1)
    width = round(rng.uniform(16.0, 90.0), 1)
    highway = {"BF01": "H", "BF02": "C", "BH01": str(rng.randint(1, 7)), "BH02": rng.choice(URBAN_AREAS),
               "BH03": rng.choice("YN"), "BH04": "1", "BH05": "5", "BH06": "0", "BH07": 2, "BH08": 0, "BH09": aadt,
               "BH10": int(aadt * rng.uniform(0.02, 0.25)), "BH11": 2024, "BH12": 12.5, "BH13": 14.0, "BH14": 99.9,
               "BH15": 0, "BH16": 0, "BH17": rng.randint(0, 40), "BH18": "N",
               "Routes": [{"BRT01": "1", "BRT02": f"{rng.randint(1, 999):05d}", "BRT03": "1", "BRT04": "0",
                           "BRT05": "N"}]}
    under = {"BF01": rng.choice("WHR"), "BF02": "B", "BF03": "STREAM", "Routes": []}
    deck_el = 38 if rng.random() < 0.3 else 12
    q = round(length * width)
    cs = [rng.randint(0, q // 3) for _ in range(3)]
    elements = [{"BE01": deck_el, "BE02": None, "BE03": q, "BCS01": q - sum(cs), "BCS02": cs[0], "BCS03": cs[1],
                 "BCS04": cs[2]}]
    for number, unit in ((107, length * 4), (215, width * 2), (234, width * 2), (311, 8), (300, length * 2),
                         (510, q), (331, length * 2)):
        qq = round(unit)
        elements.append({"BE01": number, "BE02": None, "BE03": qq, "BCS01": qq, "BCS02": 0, "BCS03": 0,
                         "BCS04": 0})
    inspections = [{"BIE01": "2", "BIE02": f"{y}{rng.randint(1, 12):02d}15", "BIE03": f"{y}{rng.randint(1, 12):02d}20",
                    "BIE04": "ABC123", "BIE05": 24, "BIE06": f"{y + 2}0601", "BIE07": "Y"}
                   for y in (2021, 2023, 2025)]
    works = [{"BW02": rng.randint(built, 2025), "BW03": rng.choice(WORK_CODES)} for _ in range(rng.randint(0, 3))]
    return {
        "BID01": f"{k:09d}", "BID02": f"BRIDGE {k}", "BID03": f"{k:09d}", "BL01": STATES[k % len(STATES)],
        "BL02": f"{rng.randint(1, 199):03d}", "BL03": "00000", "BL04": "01", "BL05": round(rng.uniform(30, 47), 6),
        "BL06": round(-rng.uniform(70, 120), 6), "BL07": "0", "BL08": "OVER CREEK", "BL09": "1.2 MI N OF US 1",
        "BL10": None, "BL11": "N", "BL12": 0, "BCL01": rng.choice(("S01", "L01", "L03", "S02")), "BCL02": "S01",
        "BCL03": "1", "BCL04": "0", "BCL05": "0", "BCL06": "N",
        "BRH01": "Y", "BRH02": "N", "BG01": length, "BG02": length + 2, "BG03": width + 2, "BG04": width,
        "BG05": width + 1, "BG06": width - 2, "BG07": 0, "BG08": 0, "BG09": 2, "BG10": 0, "BG11": 0, "BG12": 0,
        "BG13": 0, "BG14": 0, "BG15": None, "BG16": round(length * width, 1), "BG17": 0,
        "BLR01": "1", "BLR02": 1.2, "BLR03": 1.5, "BLR04": "N", "BLR05": 36.0, "BLR06": 48.0, "BLR07": "1",
        "BLR08": "N", "BIR01": 24, "BIR02": "N", "BIR03": "N", "BIR04": "N",
        **ratings, "BC05": "7", "BC06": "7", "BC07": "6", "BC08": "6", "BC09": "7", "BC10": "7", "BC11": "8",
        "BC14": "N", "BC15": "N", "BAP01": "N", "BAP02": "N", "BAP03": "3", "BAP04": "N", "BAP05": "N",
        "BW01": built, "BW02": None, "BW03": None,
        "Features": [highway, under], "Elements": elements, "Inspections": inspections, "Works": works,
        "SpanSets": [{"BSP01": "M", "BSP02": 3, "BSP03": 0, "BSP04": "C02", "BSP05": "CS1", "BSP06": "0",
                      "BSP07": "N", "BSP08": "N", "BSP09": "D01", "BSP10": "W01", "BSP11": "N", "BSP12": "0",
                      "BSP13": "N"}],
        "SubstructureSets": [{"BSB01": "A", "BSB02": 2, "BSB03": "C01", "BSB04": "AA", "BSB05": "F01",
                              "BSB06": "P01", "BSB07": "0"}],
        "PostingEvaluations": [{"BEP01": "1", "BEP02": "N", "BEP03": "N", "BEP04": "N"}],
        "PostingStatuses": [{"BPS01": "A", "BPS02": "20200101"}],
    }


def write_snbi(path: Path, n: int, seed: int = 0) -> Path:
    """An SNBI JSON array of ``n`` records, written one record at a time (the generator holds one)."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[\n")
        for k in range(1, n + 1):
            fh.write(json.dumps(_snbi_record(k, rng), separators=(",", ":")))
            fh.write(",\n" if k < n else "\n")
        fh.write("]\n")
    return path


def write_nbi(path: Path, n: int) -> Path:
    """A Coding-Guide NBI file of ``n`` data rows: DC19.txt's rows over and over, each with a new structure number
    (item 8) and one of :data:`STATES` (item 1). The file name carries the inventory year (2019)."""
    lines = bundled_path("dc-2019").read_text(encoding="latin-1").splitlines(keepends=True)
    header, rows = lines[0], [r for r in lines[1:] if r.strip()]
    with path.open("w", encoding="latin-1", newline="") as fh:
        fh.write(header)
        for k in range(n):
            _, _, rest = rows[k % len(rows)].split(",", 2)
            fh.write(f"{STATES[k % len(STATES)]:02d},{k + 1:<15d},{rest}")
    return path


def run_inventory(path: Path) -> tuple[float, float, str]:
    """(peak RSS MB, wall s, the "Bridges kept" line) of ``bridgefleet inventory PATH`` in a child process, its peak
    from ``wait4`` (that child alone)."""
    cmd = [sys.executable, "-m", "bridgefleet", "inventory", str(path)]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                             f"{err.read().decode(errors='replace')[-3000:]}")
        lines = out.read().decode().splitlines()
    kept = next((x for x in lines if x.startswith("Bridges kept")), lines[-1] if lines else "")
    return usage.ru_maxrss / 1024.0, wall, kept


def array_bytes_per_record(path: Path) -> tuple[float, float]:
    """(Inventory arrays, fleet arrays) in bytes a bridge, from the file at ``path`` read in this process."""
    inv = load_inventory(path)
    names = [k for k, v in vars(inv).items() if isinstance(v, np.ndarray)]
    inv_bytes = sum(getattr(inv, k).nbytes for k in names)
    _, _, (profile, state) = inv.to_fleet(None)
    fleet_bytes = sum(v.nbytes for part in (profile, state) for v in part.values() if isinstance(v, np.ndarray))
    return inv_bytes / inv.kept, fleet_bytes / inv.kept


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=600_000, help="records in the large files (default 600,000)")
    p.add_argument("--kinds", default="snbi,nbi", help="which files: snbi, nbi or both (default)")
    p.add_argument("--keep", help="write the files here and keep them, or read those already there (default: a "
                   "temporary folder, removed)")
    args = p.parse_args()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    with tempfile.TemporaryDirectory(prefix="inventory_memory_") as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for kind in kinds:
            write = write_snbi if kind == "snbi" else write_nbi
            suffix = ".json" if kind == "snbi" else ".txt"
            name = "nation2019"  # the NBI reader takes the inventory year from the file name
            files = {n: folder / f"{name}_{n}{suffix}" for n in (20, 2000, args.records)}
            for n, f in files.items():
                if not (args.keep and f.exists()):  # --keep: a file written before is read again
                    write(f, n)
            size_mb = files[args.records].stat().st_size / 1e6
            inv_b, fleet_b = array_bytes_per_record(files[2000])
            base_mb, base_s, _ = run_inventory(files[20])
            mb, wall, kept = run_inventory(files[args.records])
            beyond = (mb - base_mb) * 1024.0 / (args.records - 20)
            print(f"{kind}: {args.records:,} records, {size_mb:,.0f} MB file; {kept}")
            print(f"  20 records:      peak RSS {base_mb:8,.0f} MB, {base_s:6.1f} s")
            print(f"  {args.records:<9,} records: peak RSS {mb:8,.0f} MB, {wall:6.1f} s; {mb - base_mb:,.0f} MB "
                  f"more, {beyond:.2f} kB a record")
            print(f"  arrays a bridge: Inventory {inv_b:.0f} B, fleet (to_fleet) {fleet_b:.0f} B; beyond them "
                  f"{beyond - (inv_b + fleet_b) / 1024.0:.2f} kB a record")
            if not args.keep:
                for f in files.values():
                    f.unlink()
            sys.stdout.flush()


if __name__ == "__main__":
    main()
