"""The header-only C++ libraries the grader builds with, where make setup cannot install Debian's packages
(no root: a cluster's login node): grader/scripts/header_libs.py fetches Debian 12's own packages, pinned
by SHA-256, and unpacks their headers and licences into the user prefix; the Makefile builds with them
where the system has none; a build that finds them nowhere says what to do before it compiles anything;
make setup without root plans and names them."""
import functools
import http.server
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "grader/scripts"))
import header_libs  # noqa: E402

SYSTEM_HEADERS = Path("/usr/include")


def debian_reachable():
    try:
        socket.create_connection(("deb.debian.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


@pytest.fixture
def mirror(tmp_path):
    """A local web server over a folder laid out as a Debian mirror (pool/...): (its URL, the folder)."""
    root = tmp_path / "mirror"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()


def test_a_mirror_serving_other_files_is_refused_and_nothing_is_written(tmp_path, mirror):
    url, root = mirror
    for lib in header_libs.HEADER_LIBS:  # a file at every pinned path, none of them Debian's
        (root / lib.pool).parent.mkdir(parents=True, exist_ok=True)
        (root / lib.pool).write_bytes(b"!<arch>\nnot the package\n")
    prefix = tmp_path / "prefix"
    with pytest.raises(header_libs.FetchError) as e:
        header_libs.fetch(prefix, [url])
    said = str(e.value)
    assert "doctest-dev could not be fetched" in said, said
    assert f"{url}/pool/main/d/doctest/doctest-dev_2.4.9~ds-1_all.deb: SHA-256 " in said, said
    assert "not the pinned b1b43598" in said and "Nothing was installed" in said, said
    assert not (prefix / "include").exists()


def test_an_unreachable_mirror_is_named_with_what_to_do(tmp_path, capsys):
    rc = header_libs.main(["fetch", "--prefix", str(tmp_path / "prefix"), "--mirror", "http://127.0.0.1:9"])
    # the real mirrors follow the named one; where they cannot be reached either, all are named
    if rc == 0:
        assert (tmp_path / "prefix/include/toml++/toml.h").is_file()
        return
    err = capsys.readouterr().err
    assert "http://127.0.0.1:9/pool/main/d/doctest/" in err and "GEMMLAB_DEBIAN_MIRROR" in err, err
    assert not (tmp_path / "prefix/include").exists()


@pytest.mark.skipif(not debian_reachable(), reason="needs deb.debian.org (the packages are fetched from it)")
def test_fetch_unpacks_debians_headers_and_licences_after_a_bad_mirror(tmp_path, mirror):
    """A first mirror serving another file is passed over; Debian's own copies are unpacked, with their
    licences, and only those (no library file, no link); a second fetch leaves them as they are."""
    url, root = mirror
    bad = root / header_libs.HEADER_LIBS[0].pool
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"tampered")
    prefix = tmp_path / "prefix"
    put = header_libs.fetch(prefix, [url, *header_libs.MIRRORS])
    assert [lib.package for lib in put] == [lib.package for lib in header_libs.HEADER_LIBS]
    for lib in header_libs.HEADER_LIBS:
        assert (prefix / "include" / lib.header).is_file(), lib
        licence = (prefix / "share/doc" / lib.package / "copyright").read_text()
        assert "Copyright" in licence or "License" in licence, lib
        if (SYSTEM_HEADERS / lib.folder).is_dir():  # the same package make setup installs with root
            same = subprocess.run(["diff", "-r", str(SYSTEM_HEADERS / lib.folder), str(prefix / "include" / lib.folder)],
                                  capture_output=True, text=True)
            assert same.returncode == 0, same.stdout[:2000]
    files = [p for p in prefix.rglob("*") if not p.is_dir()]
    assert not [p for p in files if p.is_symlink()]
    assert {p.relative_to(prefix).parts[0] for p in files} == {"include", "share"}
    stamp = (prefix / "share/doc/doctest-dev" / header_libs.STAMP).stat().st_mtime_ns
    assert header_libs.fetch(prefix, ["http://127.0.0.1:9"]) == []  # nothing to do: nothing fetched
    assert (prefix / "share/doc/doctest-dev" / header_libs.STAMP).stat().st_mtime_ns == stamp


def copy_system_headers(prefix):
    missing = [lib.header for lib in header_libs.HEADER_LIBS if not (SYSTEM_HEADERS / lib.header).is_file()]
    if missing:
        pytest.skip(f"needs the system's header libraries to copy ({', '.join(missing)} missing): make setup")
    for lib in header_libs.HEADER_LIBS:
        shutil.copytree(SYSTEM_HEADERS / lib.folder, prefix / "include" / lib.folder)


def make_object(tmp_path, *args):
    """make one grader object in a build folder of its own, the system's headers out of the way."""
    return subprocess.run(["make", "--no-print-directory", f"BUILD={tmp_path / 'build'}", "SYSTEM_INCLUDE=/nonexistent",
                           "CCACHE=", *args, f"{tmp_path / 'build'}/grader/judge/config.o"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != "CPATH"})


def test_the_build_takes_the_user_prefixs_headers_where_the_system_has_none(tmp_path):
    """The prefix's toml++ is marked so that a compile that reads it stops: the grader's sources are
    compiled with the prefix's headers (and this build's flags say so)."""
    prefix = tmp_path / "prefix"
    copy_system_headers(prefix)
    toml = prefix / "include/toml++/toml.h"
    toml.write_text("#error the user prefix's toml++ was read\n" + toml.read_text())
    proc = make_object(tmp_path, f"GEMMLAB_PREFIX={prefix}", "V=1")
    assert proc.returncode != 0
    assert "the user prefix's toml++ was read" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert f"-isystem {prefix}/include" in proc.stdout, proc.stdout


def test_a_build_that_finds_them_nowhere_says_what_to_do_before_compiling(tmp_path):
    """A compiler that sees no system include directory stands for a machine without the libraries."""
    proc = make_object(tmp_path, f"GEMMLAB_PREFIX={tmp_path / 'empty'}", "CXX=g++ -nostdinc")
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0
    for lib in header_libs.HEADER_LIBS:
        assert f"the grader builds with {lib.header} ({lib.what}; Debian's package {lib.package})" in said, said
    assert f"nor in {tmp_path / 'empty'}/include, nor on CPATH" in said, said
    assert "run `make setup` (without root it fetches them into the user prefix)" in said, said
    assert "CXX " not in said and not (tmp_path / "build/grader/judge/config.o").exists()  # nothing compiled


def test_setup_without_root_plans_the_headers_the_machine_lacks(tmp_path):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "CPATH": "", "SYSTEM_INCLUDE": "/nonexistent",
           "GEMMLAB_SETUP_PLAN": "1"}
    proc = subprocess.run(["bash", str(ROOT / "grader/scripts/setup-user.sh")], capture_output=True, text=True,
                          env=env, timeout=120)
    said = proc.stdout + proc.stderr
    assert ("plan: the header-only C++ libraries, Debian 12's packages pinned by SHA-256, from deb.debian.org into "
            f"{tmp_path}/home/.local/share/gemmlab/include (missing here: doctest/doctest.h nlohmann/json.hpp "
            "CLI/CLI.hpp toml++/toml.h)") in said, said
    assert "setup: missing: toml++/toml.h, header of course.toml in C++ (toml++)" in said, said
    assert proc.returncode == 1 and not (tmp_path / "home").exists()
    # where the prefix has them, nothing is planned and nothing is missing
    copy_system_headers(tmp_path / "home/.local/share/gemmlab")
    proc = subprocess.run(["bash", str(ROOT / "grader/scripts/setup-user.sh")], capture_output=True, text=True,
                          env=env, timeout=120)
    said = proc.stdout + proc.stderr
    assert "header-only C++ libraries" not in said and "missing: toml++" not in said, said


def test_setup_with_root_installs_the_same_packages_as_are_pinned():
    """setup.sh keeps its own list (it runs before python3 is installed): the same packages."""
    text = (ROOT / "grader/scripts/setup.sh").read_text()
    block = re.search(r"^HEADER_PACKAGES=\((.*?)^\)", text, re.S | re.M).group(1)
    listed = [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]
    assert listed == [lib.package for lib in header_libs.HEADER_LIBS]


@pytest.mark.skipif(not debian_reachable(), reason="needs deb.debian.org (the packages are fetched from it)")
def test_setup_without_root_fetches_them_into_the_prefix(tmp_path):
    """make setup's install without root, up to PyPI (held offline here, so it stops there): the header
    libraries are in the prefix first, and the build would take them."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "CPATH": "", "SYSTEM_INCLUDE": "/nonexistent",
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path / "no-wheels")}
    proc = subprocess.run(["bash", str(ROOT / "grader/scripts/setup-user.sh")], capture_output=True, text=True,
                          env=env, timeout=300)
    said = proc.stdout + proc.stderr
    prefix = tmp_path / "home/.local/share/gemmlab"
    assert f"setup: header libraries from Debian 12's packages (pinned by SHA-256) into {prefix}/include" in said, said
    for lib in header_libs.HEADER_LIBS:
        assert (prefix / "include" / lib.header).is_file(), said
    assert proc.returncode != 0 and "installing from PyPI" in said  # and then PyPI, which is not there
    flags = subprocess.run(["make", "-s", "-n", "-p", "SYSTEM_INCLUDE=/nonexistent", f"GEMMLAB_PREFIX={prefix}"],
                           cwd=ROOT, capture_output=True, text=True, timeout=120).stdout
    assert f"THIRD_PARTY_INCLUDE := -isystem {prefix}/include" in flags.splitlines()


def test_make_handout_ships_the_user_prefixs_headers_and_licences(tmp_path, monkeypatch):
    """Where the system has none of them (here: only the prefix is looked at), make handout copies the
    prefix's headers and licences, as make setup without root left them."""
    if any((Path("/usr/local/include") / lib.folder).exists() for lib in header_libs.HEADER_LIBS):
        pytest.skip("/usr/local/include holds one of the libraries: make handout would take that copy first")
    sys.path.insert(0, str(ROOT / "grader/scripts/handout"))
    import handout_files
    prefix = tmp_path / "prefix"
    copy_system_headers(prefix)
    for lib in header_libs.HEADER_LIBS:
        (prefix / "share/doc" / lib.package).mkdir(parents=True)
        (prefix / "share/doc" / lib.package / "copyright").write_text(f"the prefix's licence of {lib.package}\n")
    (prefix / "include/toml++/toml.h").write_text("// the prefix's toml++\n")
    monkeypatch.setattr(handout_files, "prefixes", lambda: [prefix])
    monkeypatch.setenv("CPATH", "")
    out = tmp_path / "handout"
    written = handout_files.copy_third_party(out)
    assert (out / "grader/third_party/include/toml++/toml.h").read_text() == "// the prefix's toml++\n"
    for lib in header_libs.HEADER_LIBS:
        assert f"grader/third_party/licences/{lib.folder}.txt" in written
        assert (out / f"grader/third_party/licences/{lib.folder}.txt").read_text() == \
            f"the prefix's licence of {lib.package}\n"
