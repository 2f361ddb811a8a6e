"""Large inventories stream (issue 78, item 5): the encoding is decided in one pass over the bytes, Coding-Guide rows
and SNBI records are read one at a time into compact arrays, and every refusal reads as it did when the file was
read whole (same words, position, line and column), whatever the chunk size."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bridgefleet import textfile
from bridgefleet.inventory import json_stream as stream_mod
from bridgefleet.inventory import rows as rows_mod
from bridgefleet.inventory.load import InventoryError, bundled_path, load_inventory
from bridgefleet.inventory.nbi import read_nbi
from bridgefleet.inventory.rows import read_text_file
from bridgefleet.inventory.snbi import read_snbi
from bridgefleet.textfile import TextEncodingError, decode_text, scan_encoding


def _outcome(call: Any, *args: Any) -> tuple:
    try:
        r = call(*args)
        return "ok", r.encoding, r.why
    except TextEncodingError as exc:
        return "refused", exc.what, exc.line


PIECES = [b"abc,def\n", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xe9", b"\x96", b"\x81", b"\x00", b"\n",
          b"xxxxxxx", b"\xe2\x82", b"\r\n", b"\x9d", b"\xff"]


def test_scan_encoding_decides_as_decode_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random mixes of ASCII, UTF-8, Latin-1 / Windows-1252 bytes, NULs, byte-order marks and binary heads, read a few
    bytes at a time (characters cut across chunks): the same encoding and reason, or the same refusal."""
    rng = random.Random(1)
    path = tmp_path / "f.txt"
    for _ in range(600):
        raw = b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        if rng.random() < 0.15:
            raw = b"\xef\xbb\xbf" + raw
        if rng.random() < 0.03:
            raw = rng.choice([b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\x00\x00"]) + raw
        if rng.random() < 0.03:
            raw = bytes(rng.randrange(1, 32) for _ in range(40)) + raw
        path.write_bytes(raw)
        for legacy in ("latin-1", "cp1252"):
            want = _outcome(decode_text, raw, legacy, "X")
            for chunk in (1, 3, 1 << 22):
                monkeypatch.setattr(textfile, "STREAM_CHUNK", chunk)
                assert _outcome(scan_encoding, path, legacy, "X") == want, (raw, legacy, chunk)


def _whole(path: Path) -> tuple:
    """What reading the whole text with ``json.loads`` said of the file (the reader before streaming)."""
    with read_text_file(path, "cp1252", "x").stream() as fh:
        text = fh.read()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        reason = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
        return "refused", f"not an SNBI file: not JSON ({reason})"
    if not isinstance(data, list):
        what = {dict: "an object", str: "a string", type(None): "null"}.get(type(data), "a number")
        return "refused", f"not an SNBI file: the JSON is {what}, not an array of bridge records"
    if not data:
        return "refused", "an SNBI file with no bridge record (an empty array)"
    if not any(isinstance(r, dict) and "BID01" in r for r in data):
        return "refused", "not an SNBI file: no record has a bridge number BID01"
    return "ok", data


def _streamed(path: Path) -> tuple:
    try:
        return "ok", list(stream_mod._JsonArray(path, read_text_file(path, "cp1252", "x")))
    except stream_mod._FileProblem as problem:
        return "refused", str(problem.error).split(": ", 1)[1]


ATOMS = ['{"BID01": "1", "a": [1, 2, {"b": "xyz"}]}', '{"BID01":12345678901234567890}', '"str"', "123.5e3", "true",
         "null", '{"x": "' + "long" * 30 + '"}', "[[]]", " ", "\n", ",", "]", "[", "{", "}", '"', "\\", "1", "-",
         "tru", '"\\u00', ":", "\r\n  ", "é"]


def test_json_records_stream_as_json_reads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrays of records, mangled at random, read a few characters at a time: the same records, or the refusal
    ``json.loads`` gives for the whole text (message, line, column and character position)."""
    rng = random.Random(3)
    path = tmp_path / "f.json"
    for _ in range(500):
        if rng.random() < 0.5:
            recs = [rng.choice(ATOMS[:7]) for _ in range(rng.randint(0, 6))]
            doc = (rng.choice(["", " ", "\n"]) + "[" + rng.choice([",", ", ", ",\n"]).join(recs) + "]"
                   + rng.choice(["", "\n", " x"]))
            if rng.random() < 0.7:
                k = rng.randrange(len(doc) + 1)
                doc = doc[:k] + rng.choice(ATOMS) + doc[k + rng.randint(0, 3):]
        else:
            doc = "".join(rng.choice(ATOMS) for _ in range(rng.randint(0, 8)))
        path.write_text(doc, encoding="utf-8")
        want = _whole(path)
        for chunk in (1, 2, 7, 1 << 20):
            monkeypatch.setattr(stream_mod, "JSON_CHUNK", chunk)
            assert _streamed(path) == want, (doc, chunk)


def _bridge(bid: str, **items: Any) -> dict:
    rec = {"BID01": bid, "BL01": 11, "BL02": "001", "BL05": 38.9, "BL06": -77.0, "BCL01": "S01", "BG16": 10000,
           "BC01": "7", "BC02": "6", "BC03": "5", "BC04": "N", "BW01": 1990,
           "Features": [{"BF01": "H", "BF02": "C", "BH02": "47900", "BH03": "Y", "BH09": 1000, "BH10": 100,
                         "BH17": 5, "Routes": [{"BRT01": "1"}]}],
           "Inspections": [{"BIE01": "2", "BIE03": "20250315"}],
           "Elements": [{"BE01": 12, "BE03": 5000, "BCS01": 4000, "BCS02": 0, "BCS03": 700, "BCS04": 300}]}
    rec.update(items)
    return rec


def _state_file(n: int, seed: int = 0) -> list[Any]:
    rng = random.Random(seed)
    recs: list[Any] = [_bridge(f"{k:05d}", BC02=str(rng.randint(3, 9)), BW01=rng.randint(1900, 2024),
                               BL01=rng.choice([11, 24]), BID02="Pont é",
                               Works=[{"BW02": rng.randint(1990, 2030), "BW03": rng.choice(["DK4", "0", "SP2-T"])}])
                       for k in range(n)]
    recs[5]["BC01"] = "5-T"
    recs[7]["Features"][0]["BH02"] = "S-T"
    recs[9] = "not a record"
    recs[11]["BC02"] = "6.5"
    recs[15]["Features"] = []
    return recs


def _same(a: Any, b: Any) -> None:
    assert a.dropped == b.dropped and a.notes == b.notes and a.year == b.year
    for name, value in vars(a).items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, getattr(b, name), err_msg=name)


@pytest.mark.parametrize("indent", [None, 1])
def test_records_cut_by_the_buffer_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 indent: int | None) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(_state_file(120), indent=indent, ensure_ascii=indent is None), encoding="utf-8")
    whole, given = read_snbi(path), read_snbi(path, year=2025)
    assert whole.kept == 116 and len(whole.dropped) == 4
    assert any("temporary codes: BC01 1, BH02 1, BW03" in n for n in whole.notes)
    for chunk in (5, 97, 4096):
        monkeypatch.setattr(stream_mod, "JSON_CHUNK", chunk)
        _same(read_snbi(path), whole)
        _same(read_snbi(path, year=2025), given)


def test_refusals_name_the_record_when_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The record's BID01 in a refusal is read back from the file (no record is kept for it)."""
    monkeypatch.setattr(stream_mod, "JSON_CHUNK", 64)
    recs = _state_file(30)
    path = tmp_path / "dup.json"
    path.write_text(json.dumps([*recs, recs[20], recs[3]]), encoding="utf-8")
    with pytest.raises(InventoryError) as exc:
        read_snbi(path)
    assert str(exc.value).startswith(f"{path}: record 31 (BID01 '00020'), tag BID01: duplicated structure number "
                                     "'00020' (first in record 21)")
    path.write_text(json.dumps([1, 2]), encoding="utf-8")
    with pytest.raises(InventoryError, match="no record has a bridge number BID01"):
        read_snbi(path, year=2020)
    path.write_text(json.dumps([_bridge("1")]) + "]", encoding="utf-8")  # the file's refusal before the year's
    with pytest.raises(InventoryError, match=r"not JSON \(Extra data: line 1 column"):
        read_snbi(path, year=1900)


def test_first_duplicate_in_file_order(tmp_path: Path) -> None:
    """Two numbers each given twice: the refusal names the row that repeats one first (line 4, '00002'), and the
    line where that number was first given."""
    lines = bundled_path("dc-2019").read_text(encoding="latin-1").splitlines(keepends=True)
    header, rows = lines[0], lines[1:6]
    path = tmp_path / "DC19.txt"
    path.write_text(header + rows[0] + rows[1] + rows[1] + rows[0] + rows[2], encoding="latin-1")
    with pytest.raises(InventoryError) as exc:
        read_nbi(path)
    assert "line 4, column STRUCTURE_NUMBER_008: duplicated structure number '0002' (first on line 3)" in str(
        exc.value)


def _peak(call: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        out = call()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_a_record_stays_under_a_kilobyte(tmp_path: Path) -> None:
    """Peak memory (Python and numpy allocations) of reading 3,000 records stays under 1 kB a record beyond the
    chunks read at a time (bytes for the encoding, characters for the JSON); read whole, a Coding-Guide row took
    about 6 kB and an SNBI record 13 kB."""
    chunks = textfile.STREAM_CHUNK + 2 * stream_mod.JSON_CHUNK
    n = 3000
    lines = bundled_path("dc-2019").read_text(encoding="latin-1").splitlines(keepends=True)
    nbi = tmp_path / "nation2019.txt"
    with nbi.open("w", encoding="latin-1", newline="") as fh:
        fh.write(lines[0])
        for k in range(n):
            _, _, rest = lines[1 + k % 244].split(",", 2)
            fh.write(f"11,{k + 1:<15d},{rest}")
    inv, peak = _peak(lambda: load_inventory(nbi))
    assert inv.kept == n
    assert peak < chunks + 1024 * n, peak
    snbi = tmp_path / "nation.json"
    snbi.write_text(json.dumps([_bridge(f"{k:06d}", Elements=[{"BE01": 12, "BE03": 100, "BCS03": k % 7}] * 8)
                                for k in range(n)]), encoding="utf-8")
    inv, peak = _peak(lambda: load_inventory(snbi))
    assert inv.kept == n
    assert peak < chunks + 1024 * n, peak


def test_a_large_file_shows_progress_only_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(rows_mod, "PROGRESS_MIN_BYTES", 0)  # every file is large
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_state_file(20)), encoding="utf-8")
    assert load_inventory(path).kept == 16
    assert load_inventory("dc-2019").kept == 244
    assert capsys.readouterr().err == ""  # stderr is not a terminal here: tqdm's disable=None keeps it quiet
    bars: list[dict] = []

    class Bar:
        def __init__(self, **kw: Any):
            bars.append(kw)
            self.n, self.total = 0, kw["total"]

        def update(self, k: int) -> None:
            self.n += k

        def close(self) -> None:
            bars[-1]["done"] = self.n

    monkeypatch.setattr("tqdm.tqdm", Bar)
    load_inventory("dc-2019")
    assert [b["desc"].split(": ")[1] for b in bars] == ["checking the encoding", "reading rows", "reading bridges"]
    assert bars[0]["done"] == bars[0]["total"] == bundled_path("dc-2019").stat().st_size
    assert all(b["disable"] is None and b["leave"] is False for b in bars)
