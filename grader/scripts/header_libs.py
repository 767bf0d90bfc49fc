#!/usr/bin/env python3
"""header_libs.py — the header-only C++ libraries the grader builds with, and where a machine without
root gets them.

Each library is Debian 12's package of it, the one `make setup` installs with root (setup.sh), pinned
here by its file in Debian's pool and that file's SHA-256. Where make setup cannot install packages
(setup-user.sh), `header_libs.py fetch --prefix P` downloads the four packages, checks each against its
pin, and unpacks only the headers and the licence of each into the user prefix:

    P/include/<folder>/...                      the headers (the Makefile's include path, where the
                                                system has none of them)
    P/share/doc/<package>/copyright             the licence (make handout ships it beside the headers),
                                                and beside it the name of the package file unpacked

It needs no root, no apt and no dpkg: `ar` (binutils, which g++ needs) opens a package, Python's tarfile
its contents. Nothing is written until every package has downloaded and matched its pin; a package
already unpacked at its pinned version is left as it is. GEMMLAB_DEBIAN_MIRROR=<url> (or --mirror) names
a Debian mirror to try first (a cluster's own); deb.debian.org and archive.debian.org follow.

make handout ships the same folders (grader/scripts/handout/handout_files.py reads this table).
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import NamedTuple


class HeaderLib(NamedTuple):
    folder: str      # the folder under an include directory
    header: str      # the header the grader includes (found = installed)
    package: str     # Debian's package, whose copyright file is the licence
    what: str        # what GEMM Lab uses it for
    pool: str        # the package's file in Debian 12's pool
    sha256: str      # that file's SHA-256 (Debian 12's Packages index)


HEADER_LIBS = (
    HeaderLib("doctest", "doctest/doctest.h", "doctest-dev", "the C++ unit tests (doctest)",
              "pool/main/d/doctest/doctest-dev_2.4.9~ds-1_all.deb",
              "b1b43598b8e7f347af1c00f2263f0a19af4c632c808a6fc78a0617eb494c2c94"),
    HeaderLib("nlohmann", "nlohmann/json.hpp", "nlohmann-json3-dev", "JSON results (nlohmann-json)",
              "pool/main/n/nlohmann-json3/nlohmann-json3-dev_3.11.2-2_all.deb",
              "ec57940def6b6186c30be0e0ee81d1e58f86d11a54a145b28686a1e3e4aae801"),
    HeaderLib("CLI", "CLI/CLI.hpp", "libcli11-dev", "the grader's command line (CLI11)",
              "pool/main/c/cli11/libcli11-dev_2.1.2+ds-1_all.deb",
              "f1f6ee9ec053e0e0bcec47345e241b6a8ee006321248b4329e9ce88d2b4b64a8"),
    # header-only as Debian builds it; the amd64 package's headers serve every architecture
    HeaderLib("toml++", "toml++/toml.h", "libtomlplusplus-dev", "course.toml in C++ (toml++)",
              "pool/main/t/tomlplusplus/libtomlplusplus-dev_3.3.0+ds-1_amd64.deb",
              "2779cce0001466dcf60eb6262ff68a888d49f9e30aee80c499d1d4f6f9f6e12e"),
)
MIRRORS = ("https://deb.debian.org/debian", "https://archive.debian.org/debian")
STAMP = "gemmlab-pinned-package"  # in P/share/doc/<package>: the package file it was unpacked from


class FetchError(Exception):
    pass


def say(msg):
    print(f"setup: {msg}", flush=True)


def installed(prefix, lib):
    """True where prefix holds lib unpacked from its pinned package."""
    stamp = Path(prefix) / "share" / "doc" / lib.package / STAMP
    return (stamp.is_file() and stamp.read_text().strip() == lib.pool
            and (Path(prefix) / "include" / lib.header).is_file())


def download(lib, mirrors, into):
    """The package file, from the first mirror that serves it with the pinned SHA-256."""
    tried = []
    for mirror in mirrors:
        url = f"{mirror.rstrip('/')}/{lib.pool}"
        try:
            with urllib.request.urlopen(url, timeout=60) as r:
                data = r.read()
        except (urllib.error.URLError, OSError) as e:
            tried.append(f"{url}: {getattr(e, 'reason', e)}")
            continue
        got = hashlib.sha256(data).hexdigest()
        if got != lib.sha256:
            tried.append(f"{url}: SHA-256 {got}, not the pinned {lib.sha256} (another file than Debian 12's)")
            continue
        path = into / Path(lib.pool).name
        path.write_bytes(data)
        return path
    raise FetchError(f"{lib.package} could not be fetched:\n  " + "\n  ".join(tried)
                     + "\n  Nothing was installed. Check the network (or name a Debian mirror with"
                       " GEMMLAB_DEBIAN_MIRROR=<url>), or put the library's include directory on CPATH.")


def unpack(deb, lib, into):
    """The headers and the licence of one package file, into `into` (a staging prefix)."""
    work = into / f".{lib.package}"
    work.mkdir()
    ar = shutil.which("ar")
    if ar is None:
        raise FetchError("ar (binutils, which g++ needs) is not on PATH: it opens the package files."
                         " Load the compiler's module (e.g. module load gcc) and make setup again.")
    subprocess.run([ar, "x", str(deb.resolve())], cwd=work, check=True)
    data = next(work.glob("data.tar*"), None)
    if data is None:
        raise FetchError(f"{deb.name} holds no data.tar: not a Debian package")
    include = f"./usr/include/{lib.folder}/"
    licence = f"./usr/share/doc/{lib.package}/copyright"
    with tarfile.open(data) as tar:
        for m in tar.getmembers():
            name = m.name if m.name.startswith("./") else "./" + m.name
            if not m.isfile() or ".." in Path(name).parts:
                continue  # folders are made for the files; links and devices are never unpacked
            if name.startswith(include):
                dest = into / "include" / lib.folder / name[len(include):]
            elif name == licence:
                dest = into / "share" / "doc" / lib.package / "copyright"
            else:
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(m) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out)
    if not (into / "include" / lib.header).is_file():
        raise FetchError(f"{deb.name} has no usr/include/{lib.header}")
    if not (into / "share" / "doc" / lib.package / "copyright").is_file():
        raise FetchError(f"{deb.name} has no licence (usr/share/doc/{lib.package}/copyright)")
    (into / "share" / "doc" / lib.package / STAMP).write_text(lib.pool + "\n")
    shutil.rmtree(work)


def fetch(prefix, mirrors):
    """Every library prefix lacks, downloaded, checked and then put in place; returns what was put."""
    prefix = Path(prefix)
    todo = [lib for lib in HEADER_LIBS if not installed(prefix, lib)]
    if not todo:
        return []
    prefix.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".header-libs-", dir=prefix) as tmp:
        staging = Path(tmp)
        debs = [(lib, download(lib, mirrors, staging)) for lib in todo]  # all checked before any is used
        for lib, deb in debs:
            unpack(deb, lib, staging)
        for lib, _ in debs:  # each folder replaced whole
            for rel in (Path("include") / lib.folder, Path("share/doc") / lib.package):
                dest = prefix / rel
                if dest.exists():
                    shutil.rmtree(dest)
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / rel, dest)
    return todo


def check(compiler):
    """The libraries the compiler (a command line, with its include options) cannot include."""
    missing = []
    for lib in HEADER_LIBS:
        probe = subprocess.run([*compiler, "-std=c++17", "-E", "-x", "c++", "-", "-o", os.devnull],
                               input=f"#include <{lib.header}>\n", capture_output=True, text=True)
        if probe.returncode != 0:
            missing.append(lib)
    return missing


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="download, check and unpack the libraries a prefix lacks")
    f.add_argument("--prefix", required=True, help="the user prefix (make setup's GEMMLAB_PREFIX)")
    f.add_argument("--mirror", action="append", default=[],
                   help="a Debian mirror to try first (repeatable; also GEMMLAB_DEBIAN_MIRROR)")
    sub.add_parser("list", help="each library: its header and Debian package")
    c = sub.add_parser("check", help="exit 1, saying what to do, where the compiler finds one of them nowhere")
    c.add_argument("--prefix", default="", help="the user prefix make setup installs into")
    c.add_argument("compiler", nargs=argparse.REMAINDER, help="the compiler and its include options")
    args = ap.parse_args(argv)
    if args.command == "check":
        missing = check([a for a in args.compiler if a != "--"])
        for lib in missing:
            print(f"make: the grader builds with {lib.header} ({lib.what}; Debian's package {lib.package}),"
                  " and the compiler finds it nowhere: not in the system's include directories, nor in a"
                  f" handout's grader/third_party/include, nor in {args.prefix or 'the user prefix'}/include,"
                  " nor on CPATH.", file=sys.stderr)
        if missing:
            print("make: run `make setup` (without root it fetches them into the user prefix), or put the"
                  " libraries' include directory on CPATH; then this command again.", file=sys.stderr)
        return 1 if missing else 0
    if args.command == "list":
        for lib in HEADER_LIBS:
            print(f"{lib.header}\t{lib.package}\t{lib.what}")
        return 0
    mirrors = [*args.mirror, *filter(None, [os.environ.get("GEMMLAB_DEBIAN_MIRROR")]), *MIRRORS]
    try:
        put = fetch(args.prefix, mirrors)
    except FetchError as e:
        print(f"setup: {e}", file=sys.stderr)
        return 1
    include = Path(args.prefix) / "include"
    if put:
        say(f"header libraries from Debian 12's packages (pinned by SHA-256) into {include}: "
            + ", ".join(f"{lib.folder} ({Path(lib.pool).name})" for lib in put))
    else:
        say(f"header libraries: all {len(HEADER_LIBS)} in {include} already")
    return 0


if __name__ == "__main__":
    sys.exit(main())
