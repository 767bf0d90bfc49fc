"""cluster/records.py, the cluster tools' bottom layer: times written and read back (iso, iso_seconds,
parse_iso, utc_stamp), durations as a person says them (duration_text), a student's text made safe to
print (escaped), and the JSON records written whole (write_atomic, write_json_atomic, read_json).

  /usr/bin/python3 -m pytest -q tests/py/cluster/test_records.py
"""
import datetime as dt
import json
import os
import stat

import pytest

from support import staff_class  # noqa: F401  (puts cluster/ on sys.path)

import records  # noqa: E402

UTC = dt.timezone.utc
PACIFIC = dt.timezone(dt.timedelta(hours=-8))


# ---- times ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("t, text", [
    (dt.datetime(2026, 12, 4, 23, 59, tzinfo=UTC), "2026-12-04T23:59:00Z"),
    (dt.datetime(2026, 12, 4, 23, 59, 1, 250, tzinfo=UTC), "2026-12-04T23:59:01.000250Z"),
    (dt.datetime(2026, 12, 4, 15, 59, tzinfo=PACIFIC), "2026-12-04T23:59:00Z"),
])
def test_iso_writes_utc_with_a_z_and_parse_iso_reads_it_back(t, text):
    assert records.iso(t) == text
    back = records.parse_iso(text)
    assert back == t and back.utcoffset() == dt.timedelta(0)


def test_iso_seconds_drops_the_fraction_and_parse_iso_reads_it():
    t = dt.datetime(2026, 12, 4, 15, 59, 30, 999999, tzinfo=PACIFIC)
    assert records.iso_seconds(t) == "2026-12-04T23:59:30Z"
    assert records.parse_iso("2026-12-04T23:59:30Z") == t.replace(microsecond=0)


def test_parse_iso_keeps_an_offset_it_is_given():
    t = records.parse_iso("2026-12-04T15:59:00-08:00")
    assert t.utcoffset() == dt.timedelta(hours=-8) and records.iso(t) == "2026-12-04T23:59:00Z"


def test_iso_of_now_round_trips_to_the_microsecond():
    t = records.now()
    assert t.tzinfo is not None and records.parse_iso(records.iso(t)) == t


def test_utc_stamp_is_a_file_names_time():
    assert records.utc_stamp(dt.datetime(2026, 11, 27, 10, 30, 5, tzinfo=PACIFIC)) == "20261127T183005Z"


# ---- durations ----------------------------------------------------------------------------------
@pytest.mark.parametrize("d, text", [
    (dt.timedelta(0), "0 s"),
    (dt.timedelta(seconds=12), "12 s"),
    (dt.timedelta(seconds=59, milliseconds=999), "59 s"),
    (dt.timedelta(minutes=40), "40 min"),
    (dt.timedelta(minutes=40, seconds=30), "40 min"),
    (dt.timedelta(hours=2, minutes=5), "2 h 5 min"),
    (dt.timedelta(hours=3), "3 h"),
    (dt.timedelta(days=1), "1 day"),
    (dt.timedelta(days=1, hours=3, minutes=5), "1 day 3 h"),  # with days, the minutes are not said
    (dt.timedelta(days=2, minutes=5), "2 days"),
])
def test_duration_text_says_a_duration_as_a_person_does(d, text):
    assert records.duration_text(d) == text


# ---- escaped -------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, shown", [
    ("alice", "alice"),
    ("naïve kernel.cu", "naïve kernel.cu"),
    ("\x1b[31mred", "\\x1b[31mred"),
    ("bell\x07", "bell\\x07"),
    ("line\nforged: graded 100/100", "line\\nforged: graded 100/100"),
    ("over\rwrite", "over\\rwrite"),
    ("tab\tin", "tab\\tin"),
    ("del\x7f", "del\\x7f"),
    ("c1\x9b", "c1\\x9b"),
    ("abc\u202edcba", "abc\\u202edcba"),
    ("zero\u200bwidth", "zero\\u200bwidth"),
])
def test_escaped_writes_every_unprintable_character_as_repr_does(raw, shown):
    assert records.escaped(raw) == shown
    assert records.escaped(raw).isprintable()


def test_escaped_takes_any_value_as_its_text():
    assert records.escaped(None) == "None"
    assert records.escaped(3) == "3"


# ---- JSON records -----------------------------------------------------------------------------------
def test_write_json_atomic_writes_indented_json_and_read_json_reads_it(tmp_path):
    data = {"schema": "x/1", "students": ["alice", "bob"], "n": 2, "when": "2026-12-04T23:59:00Z"}
    path = records.write_json_atomic(tmp_path / "plan.json", data)
    assert path == tmp_path / "plan.json"
    assert path.read_text() == json.dumps(data, indent=2) + "\n"
    assert records.read_json(path) == data
    assert os.listdir(tmp_path) == ["plan.json"]  # nothing left beside it


def test_write_json_atomic_replaces_a_file_whole_with_its_mode(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"old": true}')
    records.write_json_atomic(path, [1, 2], mode=0o640)
    assert records.read_json(path) == [1, 2]
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_read_json_is_none_for_a_missing_or_broken_file(tmp_path):
    assert records.read_json(tmp_path / "absent.json") is None
    (tmp_path / "broken.json").write_text('{"cut": ')
    assert records.read_json(tmp_path / "broken.json") is None
    (tmp_path / "a-dir").mkdir()
    assert records.read_json(tmp_path / "a-dir") is None


def test_write_atomic_writes_bytes_and_without_switch_leaves_the_replacement_beside(tmp_path):
    path = tmp_path / "blob"
    records.write_atomic(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    tmp = records.write_atomic(path, "new", switch=False)
    assert tmp.parent == tmp_path and tmp.name.startswith(".blob.") and tmp.name.endswith(".tmp")
    assert path.read_bytes() == b"\x00\x01" and tmp.read_text() == "new"
    os.replace(tmp, path)
    assert path.read_text() == "new"


def test_a_failed_write_leaves_nothing_beside_the_file(tmp_path):
    with pytest.raises(TypeError):
        records.write_atomic(tmp_path / "x", 12345)  # neither text nor bytes
    assert os.listdir(tmp_path) == []


def test_sha256_file_is_the_files_digest(tmp_path):
    (tmp_path / "f").write_bytes(b"abc")
    assert records.sha256_file(tmp_path / "f") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
