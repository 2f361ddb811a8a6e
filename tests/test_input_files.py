"""Issue 79's remaining instances on the input-file side (probe of 439d36d): an encoding refusal is the file's (no
column; the file's own format to re-save as), a mapping's condition_scale and constants checked as written, record
types that are not codes counted as bad values, tiny traffic and deck areas, the config's closed ranges echoing
the value as the user wrote it, and a constant that would override a mapped column refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_inventory import nbi_text
from test_snbi import _bridge

from bridgefleet.config import ConfigError, read_yaml
from bridgefleet.inventory.load import InventoryError, load_inventory

# -- 1. an encoding refusal names the file and its format, never a column ------------------------------------


@pytest.mark.parametrize(("codec", "says"), [
    ("utf-16", "the file is UTF-16-encoded (byte-order mark FF FE at byte 0)"),
    ("utf-16-le", "NUL byte at byte 1: the file looks UTF-16-encoded (little-endian, no byte-order mark)"),
    ("utf-16-be", "NUL byte at byte 0: the file looks UTF-16-encoded (big-endian, no byte-order mark)"),
])
def test_a_utf16_snbi_file_is_refused_as_a_json_file_not_a_column(tmp_path: Path, codec: str, says: str) -> None:
    p = tmp_path / "s.json"
    p.write_bytes(json.dumps([_bridge("Brücke-1")], ensure_ascii=False).encode(codec))
    with pytest.raises(InventoryError) as exc:
        load_inventory(p)
    msg = str(exc.value)
    assert msg == (f"{p}: {says}, not 8-bit text; " if "NUL" in says else f"{p}: {says}; ") + (
        "expected UTF-8 or Windows-1252 text: re-save it as UTF-8 JSON")
    assert exc.value.column is None and exc.value.line is None and "BID01" not in msg


def test_a_utf16_nbi_file_names_no_column(tmp_path: Path) -> None:
    p = tmp_path / "XX19.txt"
    p.write_bytes(nbi_text([{}]).encode("utf-16"))
    with pytest.raises(InventoryError) as exc:
        load_inventory(p)
    assert str(exc.value) == (f"{p}: the file is UTF-16-encoded (byte-order mark FF FE at byte 0); expected UTF-8 "
                              "or Latin-1 text: re-save it as UTF-8 CSV")


@pytest.mark.parametrize(("data", "says"), [
    ("id: id\n".encode("utf-16"), "the file is UTF-16-encoded (byte-order mark FF FE at byte 0)"),
    ("id: id\n".encode("utf-16-le"), "the file looks UTF-16-encoded (little-endian, no byte-order mark)"),
    ("id: id\n".encode("utf-32"), "the file is UTF-32-encoded (byte-order mark FF FE 00 00 at byte 0)"),
    # “ is 0x93 in Windows-1252, after the 10 bytes of "id: id\nx: " (0-based offset 10), on line 2
    ("id: id\nx: “a”\n".encode("cp1252"), "line 2: byte 0x93 at byte 10 is not UTF-8 ('“' in Windows-1252)"),
])
def test_a_yaml_file_that_is_not_utf8_says_what_it_is(tmp_path: Path, data: bytes, says: str) -> None:
    p = tmp_path / "m.yaml"
    p.write_bytes(data)
    with pytest.raises(ConfigError) as exc:
        read_yaml(p)
    assert says in str(exc.value) and str(exc.value).endswith("expected UTF-8 text: re-save it as UTF-8 YAML")
    assert "\n" not in str(exc.value)
    p.write_bytes("\ufeffid: Brücke\n".encode())  # UTF-8 with a byte-order mark is UTF-8
    assert read_yaml(p) == {"id": "Brücke"}
