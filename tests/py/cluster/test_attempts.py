"""cluster/attempts.py, the drop box's one door, function by function: the names of students' folders
(folder_student, folder_of, planted_folders, folders_in, home_token), opening a directory and reading a
file without following a link (open_dir, read_file), the drop box's off-roster entries (off_roster), and
an attempt read through the door (at, one, Attempt.digest and verify).

Every test makes its own drop box under tmp_path and reads it with the real module; the hostile drop
boxes of a whole sweep are the gallery's (test_dropbox_gallery.py), dating and change detection
test_dropbox_door.py's.

  /usr/bin/python3 -m pytest -q tests/py/cluster/test_attempts.py
"""
import hashlib
import json
import os
import pwd
from pathlib import Path

import pytest

from support import staff_class

import attempt_records  # noqa: E402  (cluster/, on sys.path through staff_class)
import attempts  # noqa: E402
import config  # noqa: E402
import dropbox  # noqa: E402

TOKEN = "0123456789abcdef" * 2  # 32 hex digits: a folder's token
OTHER_TOKEN = "fedcba9876543210" * 2
ME = os.getuid()
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (gives a directory to another uid)")


def course(tmp_path, roster=("alice",)):
    cfg = config.load(staff_class.write_config(tmp_path, roster=list(roster)))
    dropbox.setup_dirs(cfg)
    return cfg


def another_account() -> pwd.struct_passwd:
    """An account of this machine that is not the one running the tests (root, where that is not us)."""
    return next(p for p in pwd.getpwall() if p.pw_uid != ME and attempts.USER_RE.match(p.pw_name))


def my_login() -> str:
    return pwd.getpwuid(ME).pw_name


def unused_uid() -> int:
    uid = 54321
    while True:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
        uid += 1


def stage_bytes() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((staff_class.ROOT / "student").glob("*.cu"))}


def store(cfg, student="alice") -> Path:
    return dropbox.store_attempt(cfg, student, dropbox.collect(cfg, staff_class.ROOT / "student", None))


# ---- folder names --------------------------------------------------------------------------------
@pytest.mark.parametrize("name, login", [
    (f"alice+{TOKEN}", "alice"),
    (f"a.b-c_9+{TOKEN}", "a.b-c_9"),
    (f"{'x' * 64}+{TOKEN}", "x" * 64),
])
def test_a_folder_name_is_a_login_and_32_hex_digits(name, login):
    assert attempts.FOLDER_RE.match(name)
    assert attempts.folder_student(name) == login


@pytest.mark.parametrize("name", [
    "alice",                       # an earlier term's plain directory
    f"alice+{TOKEN[:31]}",         # 31 digits
    f"alice+{TOKEN}0",             # 33 digits
    f"alice+{TOKEN.upper()}",      # upper-case hex
    f"alice+{TOKEN[:31]}g",        # not hex
    f".alice+{TOKEN}",             # a dot-entry is the staff's
    f"+{TOKEN}",                   # no login
    f"{'x' * 65}+{TOKEN}",         # a login longer than 64
    f"al ice+{TOKEN}",
])
def test_a_name_that_is_no_folders_names_no_student(name):
    assert attempts.folder_student(name) is None


def test_the_staff_find_a_students_one_folder(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    (box / f"alice+{TOKEN}").mkdir()
    (box / f"bob+{OTHER_TOKEN}").mkdir()
    (box / "alice").mkdir()  # a plain directory is no folder
    assert attempts.folder_of(box, "alice") == f"alice+{TOKEN}"
    assert attempts.folder_of(box, "bob") == f"bob+{OTHER_TOKEN}"
    assert attempts.folder_of(box, "carol") is None


def test_two_folders_of_one_student_are_a_case_naming_both_and_the_home_token(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    for token in (OTHER_TOKEN, TOKEN):
        (box / f"alice+{token}").mkdir()
    with pytest.raises(attempt_records.Case) as e:
        attempts.folder_of(box, "alice")
    assert str(e.value) == (
        f"alice has 2 folders in the drop box (alice+{TOKEN}, alice+{OTHER_TOKEN}): their commands lost the name of "
        f"the first (it is kept in their home, {attempts.home_token(box, '~')}). Nothing of theirs is graded until "
        "a person keeps one")


def test_more_than_three_folders_are_named_three_then_counted(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    names = sorted(f"alice+{d * 32}" for d in "0123")
    for n in names:
        (box / n).mkdir()
    with pytest.raises(attempt_records.Case) as e:
        attempts.folder_of(box, "alice")
    assert f"alice has 4 folders in the drop box ({', '.join(names[:3])}, ...)" in str(e.value)


@pytest.mark.parametrize("student", ["../alice", "alice/x", "", ".alice", "al ice"])
def test_folder_of_refuses_what_is_no_user_name(tmp_path, student):
    with pytest.raises(attempt_records.Case, match="is not a user name"):
        attempts.folder_of(tmp_path, student)


def test_a_folder_named_for_an_account_but_made_by_another_is_planted_not_theirs(tmp_path):
    """The folder of a student with an account counts only when that account made it; else it is
    its maker's case (planted_folders), named by the maker's login."""
    victim = another_account()
    box = tmp_path / "box"
    box.mkdir()
    (box / f"{victim.pw_name}+{TOKEN}").mkdir()  # made by this account, not the victim's
    (box / f"alice+{OTHER_TOKEN}").mkdir()       # no account: nobody's case
    assert attempts.folder_of(box, victim.pw_name) is None
    assert attempts.planted_folders(box) == {my_login(): [f"{victim.pw_name}+{TOKEN}"]}


@needs_root
def test_a_planted_folder_whose_maker_has_no_account_is_named_by_uid(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    folder = box / f"root+{TOKEN}"
    folder.mkdir()
    uid = unused_uid()
    os.chown(folder, uid, -1)
    assert attempts.folder_of(box, "root") is None
    assert attempts.planted_folders(box) == {f"uid {uid}": [f"root+{TOKEN}"]}


def test_a_drop_box_with_no_planted_folder_has_no_case(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    (box / f"alice+{TOKEN}").mkdir()
    assert attempts.planted_folders(box) == {}
    assert attempts.planted_folders(tmp_path / "none") == {}


def test_folders_in_an_earlier_terms_drop_box_of_plain_login_directories(tmp_path):
    box = tmp_path / "fall"
    for name in ("alice", "bob", ".course", "not a login"):
        (box / name).mkdir(parents=True)
    assert attempts.folders_in(box) == {"alice": "alice", "bob": "bob"}


def test_folders_in_a_drop_box_of_token_folders(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    (box / f"alice+{TOKEN}").mkdir()
    (box / f"bob+{OTHER_TOKEN}").mkdir()
    (box / "carol").mkdir()                 # a plain directory beside them: its login's
    (box / "alice").mkdir()                 # alice's token folder wins over a plain one
    assert attempts.folders_in(box) == {"alice": f"alice+{TOKEN}", "bob": f"bob+{OTHER_TOKEN}", "carol": "carol"}


def test_folders_in_keeps_the_first_of_several_folders_by_name(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    for token in (OTHER_TOKEN, TOKEN):
        (box / f"alice+{token}").mkdir()
    assert attempts.folders_in(box) == {"alice": f"alice+{TOKEN}"}


def test_folders_in_leaves_out_a_folder_planted_in_an_accounts_name(tmp_path):
    victim = another_account()
    box = tmp_path / "box"
    box.mkdir()
    (box / f"{victim.pw_name}+{TOKEN}").mkdir()
    assert attempts.folders_in(box) == {}


def test_folders_in_a_missing_drop_box_is_empty(tmp_path):
    assert attempts.folders_in(tmp_path / "none") == {}


def test_the_home_token_lies_in_the_home_under_a_key_of_the_drop_boxs_real_path(tmp_path):
    box = tmp_path / "box"
    box.mkdir()
    (tmp_path / "link").symlink_to(box)
    key = hashlib.sha256(os.path.realpath(box).encode()).hexdigest()[:16]
    want = Path("/home/alice/.local/state/gemmlab") / f"handin-{key}"
    assert attempts.home_token(box, "/home/alice") == want
    assert attempts.home_token(tmp_path / "link", "/home/alice") == want  # the same drop box by a link
    assert attempts.home_token(tmp_path / "other", "/home/alice") != want


# ---- opening a directory, reading a file ---------------------------------------------------------
@pytest.fixture
def parent(tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    yield tmp_path, fd
    os.close(fd)


def test_open_dir_opens_a_directory(parent):
    path, fd = parent
    (path / "d").mkdir()
    d = attempts.open_dir(fd, "d", "the directory d")
    try:
        assert os.path.samestat(os.fstat(d), os.stat(path / "d"))
    finally:
        os.close(d)


def test_open_dir_refuses_a_symbolic_link_naming_it(parent):
    path, fd = parent
    (path / "real").mkdir()
    (path / "d").symlink_to(path / "real")
    with pytest.raises(attempt_records.Case) as e:
        attempts.open_dir(fd, "d", "alice's folder")
    assert str(e.value) == "alice's folder is a symbolic link; the drop box holds directories and regular files only"


def test_open_dir_refuses_a_fifo_naming_it(parent):
    path, fd = parent
    os.mkfifo(path / "d")
    with pytest.raises(attempt_records.Case) as e:
        attempts.open_dir(fd, "d", "alice's folder")
    assert str(e.value) == "alice's folder is a FIFO (named pipe), not a directory"


def test_open_dir_refuses_a_regular_file(parent):
    path, fd = parent
    (path / "d").write_text("x")
    with pytest.raises(attempt_records.Case) as e:
        attempts.open_dir(fd, "d", "alice's folder")
    assert str(e.value) == "alice's folder is a regular file, not a directory"


def test_open_dir_of_nothing_is_file_not_found_naming_where(parent):
    _, fd = parent
    with pytest.raises(FileNotFoundError) as e:
        attempts.open_dir(fd, "gone", "alice's folder")
    assert e.value.filename == "alice's folder"


def test_read_file_reads_a_file_up_to_its_cap(parent):
    path, fd = parent
    (path / "f.cu").write_bytes(b"x" * 100)
    data, st = attempts.read_file(fd, "f.cu", 100, None, "files/f.cu")
    assert data == b"x" * 100 and st.st_size == 100


def test_read_file_refuses_a_file_one_byte_over_its_cap(parent):
    path, fd = parent
    (path / "f.cu").write_bytes(b"x" * 101)
    with pytest.raises(attempt_records.Case) as e:
        attempts.read_file(fd, "f.cu", 100, None, "files/f.cu")
    assert str(e.value) == "files/f.cu is 101 bytes, more than the 100 allowed"


def test_read_file_checks_the_owner_only_where_owners_are_given(parent):
    path, fd = parent
    (path / "f.cu").write_bytes(b"mine")
    assert attempts.read_file(fd, "f.cu", 10, {ME}, "files/f.cu")[0] == b"mine"
    assert attempts.read_file(fd, "f.cu", 10, None, "files/f.cu")[0] == b"mine"
    with pytest.raises(attempt_records.Case) as e:
        attempts.read_file(fd, "f.cu", 10, {ME + 1}, "files/f.cu")
    assert str(e.value) == (f"files/f.cu belongs to another account (uid {ME}); a hand-in holds its student's own "
                            "files only")


@pytest.mark.parametrize("make, kind", [
    (lambda p: p.symlink_to(p.parent / "target"), "a symbolic link"),
    (lambda p: os.mkfifo(p), "a FIFO (named pipe)"),
    (lambda p: p.mkdir(), "a directory"),
])
def test_read_file_refuses_what_is_not_a_regular_file(parent, make, kind):
    path, fd = parent
    (path / "target").write_bytes(b"secret")
    make(path / "f.cu")
    with pytest.raises(attempt_records.Case) as e:
        attempts.read_file(fd, "f.cu", 100, None, "files/f.cu")  # a FIFO never blocks
    assert str(e.value) == f"files/f.cu is {kind}; a hand-in holds regular files only"


def test_read_file_refuses_a_file_with_a_second_hard_link(parent):
    path, fd = parent
    (path / "target").write_bytes(b"secret")
    os.link(path / "target", path / "f.cu")
    with pytest.raises(attempt_records.Case) as e:
        attempts.read_file(fd, "f.cu", 100, None, "files/f.cu")
    assert str(e.value) == "files/f.cu has 2 hard links; a hand-in holds files of its own only (one link)"


def test_read_file_of_nothing_is_file_not_found(parent):
    _, fd = parent
    with pytest.raises(FileNotFoundError):
        attempts.read_file(fd, "gone", 100, None, "files/gone")


# ---- off the roster --------------------------------------------------------------------------------
def test_off_roster_names_every_entry_but_roster_students_own_folders_and_dot_entries(tmp_path):
    cfg = course(tmp_path, roster=["alice"])
    box = cfg.dropbox_dir
    for name in (f"alice+{TOKEN}", f"bob+{OTHER_TOKEN}", "stray", ".course", ".numbers"):
        (box / name).mkdir(exist_ok=True)
    (box / "loose-file").write_text("x")
    assert attempts.off_roster(cfg) == [f"bob+{OTHER_TOKEN}", "loose-file", "stray"]


def test_off_roster_names_the_maker_of_a_folder_in_a_roster_students_name(tmp_path):
    victim = another_account()
    cfg = course(tmp_path, roster=[victim.pw_name])
    (cfg.dropbox_dir / f"{victim.pw_name}+{TOKEN}").mkdir()
    assert attempts.off_roster(cfg) == [f"{victim.pw_name}+{TOKEN} (made by {my_login()})"]


def test_off_roster_names_up_to_its_cap_with_no_count(tmp_path):
    cfg = course(tmp_path)
    names = [f"squat{i:03d}" for i in range(attempts.OFF_ROSTER_SHOWN)]
    for n in reversed(names):
        (cfg.dropbox_dir / n).mkdir()
    assert attempts.off_roster(cfg) == names


def test_off_roster_past_its_cap_keeps_the_first_names_and_counts_the_rest(tmp_path):
    cfg = course(tmp_path)
    names = [f"squat{i:03d}" for i in range(attempts.OFF_ROSTER_SHOWN + 3)]
    for n in reversed(names):
        (cfg.dropbox_dir / n).mkdir()
    assert attempts.off_roster(cfg) == names[:attempts.OFF_ROSTER_SHOWN] + ["(and 3 more)"]


def test_off_roster_without_a_roster_is_empty(tmp_path):
    path = staff_class.write_config(tmp_path)  # no roster: everyone with a folder is a student
    cfg = config.load(path)
    dropbox.setup_dirs(cfg)
    (cfg.dropbox_dir / "stray").mkdir()
    assert cfg.roster_path is None and attempts.off_roster(cfg) == []


# ---- an attempt, read through the door ---------------------------------------------------------------
def test_one_reads_a_stored_attempt(tmp_path):
    cfg = course(tmp_path)
    stored = store(cfg)
    a = attempts.one(cfg, stored)
    assert (a.path, a.number, a.student, a.label, a.where) == (stored, 1, "alice", "#1", "alice's attempt #1")
    assert a.problem == "" and not a.entered and not a.withdrawn
    assert a.stage_bytes() == stage_bytes()
    assert a.file_hashes() == {n: hashlib.sha256(b).hexdigest() for n, b in stage_bytes().items()}
    manifest = json.loads((stored / "manifest.json").read_text())
    assert a.manifest == manifest and a.manifest["user"] == "alice"
    assert a.digest == a.claimed_digest == manifest["attempt_sha256"]
    assert a.verify() == "" and a.integrity_problem() == ""


def test_at_reads_the_same_attempt_with_the_default_caps(tmp_path):
    cfg = course(tmp_path)
    stored = store(cfg)
    store(cfg)
    a = attempts.at(stored)
    assert a.number == 1 and a.digest == attempts.one(cfg, stored).digest
    second = attempts.at(stored.parent / sorted(p.name for p in stored.parent.glob("attempt-*"))[1])
    assert second.number == 2 and second.label == "#2"


def test_at_with_a_source_cap_below_a_file_names_the_case_and_reads_nothing(tmp_path):
    cfg = course(tmp_path)
    stored = store(cfg)
    a = attempts.at(stored, attempt_records.Caps(source=10, report=10))
    assert a.problem.startswith("alice's attempt #1: files/") and "more than the 10 allowed" in a.problem
    assert a.stage_bytes() == {} and a.digest == ""
    assert a.verify() == a.problem


def test_one_refuses_a_path_outside_the_drop_box(tmp_path):
    cfg = course(tmp_path)
    stored = store(cfg)
    elsewhere = tmp_path / "copy" / "alice" / stored.name
    elsewhere.parent.mkdir(parents=True)
    os.rename(stored, elsewhere)
    with pytest.raises(attempt_records.Case) as e:
        attempts.one(cfg, elsewhere)
    assert str(e.value) == f"{elsewhere} is not an attempt in {cfg.dropbox_dir}/<student>/"


def test_at_refuses_a_directory_not_named_like_an_attempt(tmp_path):
    cfg = course(tmp_path)
    stored = store(cfg)
    renamed = stored.with_name("attempt-1-today")
    os.rename(stored, renamed)
    with pytest.raises(attempt_records.Case) as e:
        attempts.at(renamed)
    assert str(e.value) == f"{renamed} is not named like an attempt (attempt-NNNN-<time>)"


def test_at_an_attempt_whose_files_are_a_link_names_it(tmp_path):
    cfg = course(tmp_path)
    stored = store(cfg)
    os.rename(stored / "files", tmp_path / "elsewhere")
    (stored / "files").symlink_to(tmp_path / "elsewhere")
    a = attempts.at(stored)
    assert a.problem == ("alice's attempt #1: files/ is a symbolic link; the drop box holds directories and "
                         "regular files only")
    assert a.stage_bytes() == {} and a.digest == ""


def test_a_changed_file_changes_the_digest_and_fails_verify(tmp_path):
    cfg = course(tmp_path)
    stored = store(cfg)
    claimed = attempts.one(cfg, stored).digest
    tiled = stored / "files" / "tiled.cu"
    tiled.write_bytes(tiled.read_bytes() + b"// changed\n")
    a = attempts.one(cfg, stored)
    hashes = {n: hashlib.sha256(b).hexdigest() for n, b in stage_bytes().items()}
    hashes["tiled.cu"] = hashlib.sha256(tiled.read_bytes()).hexdigest()
    assert a.digest == attempt_records.attempt_digest({n: {"sha256": h} for n, h in hashes.items()})
    assert a.digest != claimed and a.claimed_digest == claimed
    assert a.verify() == "tiled.cu does not match its sha256 in the manifest"


def test_a_removed_or_added_file_fails_verify_naming_it(tmp_path):
    cfg = course(tmp_path)
    stored = store(cfg)
    (stored / "files" / "naive.cu").unlink()
    assert attempts.one(cfg, stored).verify() == "files ['naive.cu'] differ from the manifest"
    (stored / "files" / "naive.cu").write_bytes(stage_bytes()["naive.cu"])
    (stored / "files" / "extra.cu").write_bytes(b"// more\n")
    assert attempts.one(cfg, stored).verify() == "files ['extra.cu'] differ from the manifest"


def test_a_manifest_whose_attempt_digest_is_not_its_files_fails_verify(tmp_path):
    cfg = course(tmp_path)
    stored = store(cfg)
    m = json.loads((stored / "manifest.json").read_text())
    m["attempt_sha256"] = "0" * 64
    (stored / "manifest.json").write_text(json.dumps(m))
    a = attempts.one(cfg, stored)
    assert a.claimed_digest == "0" * 64 and a.digest != a.claimed_digest
    assert a.verify() == "the manifest's attempt_sha256 does not match its files"


@pytest.mark.parametrize("name", [f"alice+{TOKEN}\n", "alice\n", "attempt-0001-20261204T235501Z\n",
                                  "entered-0001-20261204T235501Z\n"])
def test_a_name_with_a_trailing_newline_is_no_name_of_the_drop_box(name):
    """`$` would take a trailing newline: every name the door accepts ends where the pattern does (\\Z)."""
    assert attempts.folder_student(name) is None
    assert not attempts.USER_RE.match(name) and not attempt_records.FILE_NAME_RE.match(name)
    assert not attempt_records.ATTEMPT_RE.match(name) and not attempt_records.ENTERED_RE.match(name)


def test_a_record_time_or_hash_with_a_trailing_newline_is_refused():
    assert not attempt_records.TIME_RE.match("2026-12-04T23:55:01Z\n")
    assert not attempt_records.SHA256_RE.match("a" * 64 + "\n")


def test_a_folder_made_within_one_tick_of_the_listing_is_found(tmp_path):
    """The listing is kept while the drop box is unchanged; a folder made since — even within one tick of
    a coarse clock, which leaves the modification time as it was — is found: the link count changed."""
    box = tmp_path / "box"
    box.mkdir()
    (box / f"bob+{TOKEN}").mkdir()
    assert attempts.folder_of(box, "alice") is None
    st = os.stat(box)
    (box / f"alice+{TOKEN}").mkdir()
    os.utime(box, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same modification time: a coarse clock's tick
    assert attempts.folder_of(box, "alice") == f"alice+{TOKEN}"
