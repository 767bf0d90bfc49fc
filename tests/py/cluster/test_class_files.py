"""cluster/class_files.py, the per-student files beside course.toml: the roster (read_roster, on_roster:
each refusal names the file and the line), the extensions file (load_extensions: the dates it gives and
each mistake it refuses) and where the class list comes from (class_source).

  /usr/bin/python3 -m pytest -q tests/py/cluster/test_class_files.py
"""
import datetime as dt

import pytest

from support import staff_class
from support.staff_class import DUE

import class_files  # noqa: E402  (cluster/, on sys.path through staff_class)
import config  # noqa: E402
from config import ConfigError  # noqa: E402

D = dt.timedelta(days=1)


def course(tmp_path, roster_text=None, extensions=None, accounts=False):
    """A course with roster.txt holding roster_text (None: no roster) and extensions.toml `extensions`."""
    extra = '[extensions]\nfile = "extensions.toml"\n' if extensions is not None else ""
    path = staff_class.write_config(tmp_path, extra, roster=[] if roster_text is not None else None)
    if roster_text is not None:
        (tmp_path / "roster.txt").write_text(roster_text)
    if accounts:
        path.write_text(path.read_text().replace("roster_accounts = false", "roster_accounts = true"))
    if extensions is not None:
        (tmp_path / "extensions.toml").write_text(extensions)
    return config.load(path)


# ---- the roster --------------------------------------------------------------------------------
def test_the_roster_is_its_names_in_file_order_without_comments_or_blanks(tmp_path):
    cfg = course(tmp_path, "# section A\ncarol\n\n  alice   # late joiner\nbob.smith\nx_y-9\n")
    assert class_files.read_roster(cfg) == ["carol", "alice", "bob.smith", "x_y-9"]
    assert class_files.on_roster(cfg, "alice") is True
    assert class_files.on_roster(cfg, "alicia") is False


def test_no_roster_is_no_names_and_no_answer(tmp_path):
    cfg = course(tmp_path)
    assert class_files.read_roster(cfg) == []
    assert class_files.on_roster(cfg, "alice") is None


@pytest.mark.parametrize("bad", ["al ice", "-alice", "alice@uni.edu", "a" * 33, "élodie"])
def test_a_name_that_is_no_user_name_is_refused_with_its_line(tmp_path, bad):
    cfg = course(tmp_path, f"alice\n# a comment\n{bad}\n")
    with pytest.raises(ConfigError) as e:
        class_files.read_roster(cfg)
    assert str(e.value).startswith(f"{tmp_path / 'roster.txt'}, line 3: {bad!r} is not a user name (letters, digits, "
                                   "'_', '.' and '-', no spaces, at most 32 characters)"), e.value


def test_a_32_character_name_is_a_user_name(tmp_path):
    cfg = course(tmp_path, "a" * 32 + "\n")
    assert class_files.read_roster(cfg) == ["a" * 32]


def test_a_name_listed_twice_is_refused_naming_both_lines(tmp_path):
    cfg = course(tmp_path, "alice\nbob\nalice  # again\n")
    with pytest.raises(ConfigError, match=r"roster\.txt, line 3: 'alice' is listed twice \(line 1 too\): remove one"):
        class_files.read_roster(cfg)


def test_names_differing_only_in_case_are_refused_naming_both_lines(tmp_path):
    cfg = course(tmp_path, "alice\nbob\nAlice\n")
    with pytest.raises(ConfigError) as e:
        class_files.read_roster(cfg)
    assert str(e.value).startswith(f"{tmp_path / 'roster.txt'}, lines 1 and 3: 'alice' and 'Alice' differ only in "
                                   "case"), e.value
    assert "keep the one the student logs in with" in str(e.value)


def test_a_missing_roster_file_says_how_to_create_it_or_turn_it_off(tmp_path):
    cfg = course(tmp_path, "alice\n")
    (tmp_path / "roster.txt").unlink()
    with pytest.raises(ConfigError) as e:
        class_files.read_roster(cfg)
    assert f"[cluster] roster = {str(tmp_path / 'roster.txt')!r}: cannot read" in str(e.value)
    assert "one user name per line, or set roster = \"\"" in str(e.value)


def test_with_roster_accounts_every_name_must_be_an_account_here(tmp_path):
    cfg = course(tmp_path, "root\nno-such-user-zq7\nnor-this-zq8\n", accounts=True)
    with pytest.raises(ConfigError) as e:
        class_files.read_roster(cfg)
    assert (f"{tmp_path / 'roster.txt'}: 2 name(s) are not accounts on this machine: 'no-such-user-zq7' (line 2), "
            "'nor-this-zq8' (line 3).") in str(e.value)
    assert "roster_accounts = false" in str(e.value)
    (tmp_path / "roster.txt").write_text("root\n")
    assert class_files.read_roster(cfg) == ["root"]


# ---- extensions -------------------------------------------------------------------------------------
def test_extensions_give_a_due_date_or_late_days_with_the_reason(tmp_path):
    cfg = course(tmp_path, extensions='[alice]\ndue = 2026-12-08T23:59:00-08:00\nreason = " medical note "\n'
                                      '[bob]\nlate_days = 2\n')
    ext = class_files.load_extensions(cfg, {"alice", "bob", "carol"})
    assert sorted(ext) == ["alice", "bob"]
    alice, bob = ext["alice"], ext["bob"]
    assert alice.due == dt.datetime(2026, 12, 9, 7, 59, tzinfo=dt.timezone.utc) and alice.late_days == 0
    assert alice.reason == "medical note" and alice.line == 1
    assert alice.describe() == "due 2026-12-09T07:59:00Z; medical note"
    assert bob.due == DUE + 2 * D and bob.late_days == 2 and bob.line == 4
    assert bob.describe() == "2 late days (due 2026-12-06T23:59:00Z)"
    assert bob.deadline(cfg.deadline).due == DUE + 2 * D


def test_no_extensions_file_setting_is_no_extensions(tmp_path):
    assert class_files.load_extensions(course(tmp_path), {"alice"}) == {}


def test_one_late_day_is_said_in_the_singular(tmp_path):
    cfg = course(tmp_path, extensions="[alice]\nlate_days = 1\n")
    assert class_files.load_extensions(cfg, None)["alice"].describe() == "1 late day (due 2026-12-05T23:59:00Z)"


@pytest.mark.parametrize("text, message", [
    ("[alcie]\nlate_days = 2\n",
     "line 1: 'alcie' is not a student of this course (did you mean 'alice'?): the class. Fix the name"),
    ("[alice]\nlate_day = 2\n", "line 2: [alice] late_day: unknown key; did you mean 'late_days'?"),
    ("[alice]\nlate_days = 2\ndue = 2026-12-09T00:00:00Z\n",
     "line 1: [alice] needs exactly one of due = <date-time> or late_days = <days> (it has both)"),
    ("[alice]\nreason = \"x\"\n", "line 1: [alice] needs exactly one of due = <date-time> or late_days = <days>"),
    ("[alice]\nlate_days = 0\n", "line 2: [alice] late_days = 0 should be a whole number of days, 1 or more"),
    ("[alice]\nlate_days = 1.5\n", "line 2: [alice] late_days = 1.5 should be a whole number of days"),
    ("[alice]\nlate_days = true\n", "line 2: [alice] late_days = True should be a whole number of days"),
    ("[alice]\nlate_days = 1\nreason = 3\n", "line 3: [alice] reason = 3 should be a text in quotes"),
    ("[alice]\ndue = 2026-12-01T00:00:00Z\n",
     "line 2: [alice] due = 2026-12-01T00:00:00Z is not after the course's due date (2026-12-04T23:59:00Z"),
    ("alice = 2\n", "line 1: alice = 2 should be a table"),
])
def test_each_mistake_in_the_extensions_file_is_refused_with_its_line(tmp_path, text, message):
    cfg = course(tmp_path, extensions=text)
    with pytest.raises(ConfigError) as e:
        class_files.load_extensions(cfg, {"alice", "bob"}, "the class")
    assert str(e.value).startswith(f"{tmp_path / 'extensions.toml'}, "), e.value
    assert message in str(e.value), e.value


def test_names_are_not_checked_without_a_class(tmp_path):
    cfg = course(tmp_path, extensions="[anyone]\nlate_days = 1\n")
    assert list(class_files.load_extensions(cfg, None)) == ["anyone"]


def test_an_extensions_file_that_is_not_toml_or_missing_says_so(tmp_path):
    cfg = course(tmp_path, extensions="[alice\nlate_days = 1\n")
    with pytest.raises(ConfigError, match=r"extensions\.toml: not valid TOML: .*A date is written like"):
        class_files.load_extensions(cfg, None)
    (tmp_path / "extensions.toml").unlink()
    with pytest.raises(ConfigError, match=r"\[extensions\] file = '.*extensions\.toml': no such file\. Create it"):
        class_files.load_extensions(cfg, None)


def test_line_of_finds_a_table_its_key_and_a_quoted_name():
    lines = ["# extensions", '["a.b"]', "late_days = 2", "[carol]", "reason = 'x'", "due = 2026-12-09T00:00:00Z",
             "dave = 1"]
    assert class_files.line_of(lines, "a.b") == 2
    assert class_files.line_of(lines, "a.b", "late_days") == 3
    assert class_files.line_of(lines, "a.b", "due") == 2  # not in its table: the table's line
    assert class_files.line_of(lines, "carol", "due") == 6
    assert class_files.line_of(lines, "dave") == 7
    assert class_files.line_of(lines, "erin") is None


# ---- where the class comes from ----------------------------------------------------------------------
def test_class_source_names_the_roster_or_the_drop_box(tmp_path):
    cfg = course(tmp_path, "alice\n")
    assert class_files.class_source(cfg) == (f"the roster {tmp_path / 'roster.txt'} does not list them (with a roster, "
                                             "only its students are students)")
    other = tmp_path / "no-roster"
    other.mkdir()
    cfg = course(other)
    assert class_files.class_source(cfg) == ("no roster is set ([cluster] roster), so the class is whoever has handed "
                                             f"in, and {other / 'dropbox'} has no folder of theirs")
