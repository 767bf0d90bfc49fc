#!/usr/bin/env python3
"""Reuses a stage object compiled before from the same bytes with the same command.

Builds of many submissions (the tests' gallery and broken submissions, the handout's check, a
class on one machine) compile the same stage files again and again: most entries link the
handed-out stubs. The Makefile runs every stage compile through compile_stage.py, which uses this cache:

  object_cache.py --cache build/object-cache --source SRC --object OBJ --depends H... -- nvcc ... -c SRC -o OBJ

The key is a SHA-256 of: the command (with the source and object paths taken out), the identity
(path, size, modification time) of every program the command starts with (ccache and nvcc, say,
so that a toolkit replaced in place is never mistaken for the old one), the source's bytes, the bytes of every --depends file
(the stage API headers) and of every header beside the source (*.h, *.cuh, *.hpp, *.inc in its
directory and, for a symbolic link, in the directory of the file it points to). Under the key, each
object is kept with what its compile read (`inputs`): every file of the dependency list the compile
wrote (nvcc -MMD's <object>.d: what it #included, from the source's folder or anywhere else) by its
bytes, and the names in the source's folder (what an __has_include could have asked). A hit is an
object of the key whose every input holds for this source now; it is copied with its dependency file
written. A miss runs the command and stores the object with its inputs, atomically. Nothing is ever
reused across a change of any byte a compile read. OBJECT_CACHE= (empty) turns it off.
cluster/toolchain.py keeps its own cache of a grading's objects the same way (find, keep).
A compile may leave files beside its object that belong to it (compile_stage.py's <object>.warnings:
what the compiler warned about): run_cached(sidecars=...) keeps them with the object and puts them
back on a hit, so a reused object comes with what its compile said.

Two builds that compile the same thing at the same time (the tests build many submissions side by
side, and the handout's compiled reference twice) take a lock per key: the second waits for the
first and copies its object instead of compiling it again. grader/scripts/handout.py compiles the
reference library through run_cached() too.
"""
import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HEADER_SUFFIXES = (".h", ".cuh", ".hpp", ".hh", ".inc", ".inl")


def file_digest(h, path):
    h.update(str(path).encode() + b"\0")
    h.update(Path(path).read_bytes() if Path(path).is_file() else b"<missing>")
    h.update(b"\0")


def neighbour_headers(source):
    dirs = {Path(source).parent.resolve(), Path(source).resolve().parent}
    found = []
    for d in sorted(dirs):
        found += sorted(p for p in d.iterdir() if p.suffix in HEADER_SUFFIXES and p.is_file())
    return found


def cache_key(command, source, obj, depends):
    h = hashlib.sha256()
    words = [w for w in command if w not in (source, obj)]
    h.update("\0".join(words).encode() + b"\0")
    # The programs the command starts with (a launcher such as ccache, then the compiler): each word
    # up to the first that is not an executable file. The first word counts even when it is not one.
    for i, word in enumerate(command):
        program = shutil.which(word)
        if program is None or not os.path.isfile(program):
            if i == 0:
                h.update(word.encode())
            break
        st = os.stat(program)
        h.update(f"{program} {st.st_size} {int(st.st_mtime)}".encode())
    h.update(Path(source).read_bytes())
    for d in depends:
        file_digest(h, d)
    for header in neighbour_headers(source):
        h.update(header.name.encode() + b"\0" + header.read_bytes())
    return h.hexdigest()


# ---- what a compile read ------------------------------------------------------------------------
FOLDER_NAMES = "./"  # the input that stands for the names in the source's folder


def dependency_list(dfile) -> list[str]:
    """The prerequisites of the first rule of a make dependency file (what nvcc or g++ -MMD/-MD writes):
    the files the compile read; [] where there is no such file."""
    try:
        text = Path(dfile).read_text(errors="replace")
    except OSError:
        return []
    rule = re.split(r"(?<!\\)\n", text.replace("\\\n", " "), maxsplit=1)[0]
    parts = re.split(r"\s:\s|:\s", rule, maxsplit=1)
    words = re.findall(r"(?:\\.|[^\s\\])+", parts[1]) if len(parts) == 2 else []
    return [re.sub(r"\\(.)", r"\1", w).replace("$$", "$") for w in words]


def _digest(path) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "<unreadable>"


def _names(folder) -> str:
    try:
        return hashlib.sha256("\0".join(sorted(os.listdir(folder))).encode()).hexdigest()
    except OSError:
        return "<unreadable>"


def inputs(files, source, cwd=None) -> dict[str, str]:
    """What a compile of `source` read, each input by its name and its bytes' SHA-256: a file in the
    source's folder (or below it) as "./<path>" from there (the same bytes beside another source are
    the same input), any other by its real path; and FOLDER_NAMES, the names in the source's folder.
    `files`: the dependency list (paths relative to `cwd`, the compile's working directory)."""
    folder = os.path.realpath(os.path.dirname(os.path.abspath(source)))
    found = {FOLDER_NAMES: _names(folder)}
    for f in [source, *files]:
        real = os.path.realpath(os.path.join(cwd or os.getcwd(), f))
        name = "./" + os.path.relpath(real, folder) if real.startswith(folder + os.sep) else real
        found[name] = _digest(real)
    return found


def _where(name, source) -> str:
    """The file an input's name stands for beside `source`."""
    if name.startswith("./"):
        return os.path.join(os.path.dirname(os.path.abspath(source)), name[2:])
    return name


def holds(recorded: dict, source) -> bool:
    """Whether every input a compile recorded holds for `source` now: the same bytes, the same names."""
    folder = os.path.realpath(os.path.dirname(os.path.abspath(source)))
    return all((_names(folder) if name == FOLDER_NAMES else _digest(_where(name, source))) == sha
               for name, sha in recorded.items())


def find(cache, key, source):
    """(the object `cache` keeps under `key` whose every input holds for `source` now, its inputs), or None."""
    for record in sorted((Path(cache) / key).glob("*.inputs")):
        try:
            recorded = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        obj = record.with_suffix(".o")
        if obj.is_file() and holds(recorded, source):
            return obj, recorded
    return None


def keep(cache, key, obj, source, dfile=None, cwd=None, sidecars=(), also=()):
    """Keeps a freshly compiled object under `key` with what its compile read (the dependency list it
    wrote, `dfile`; the source alone where it wrote none; `also`: files it may have read that the list
    does not name, by absolute path) and its sidecars (files `<obj><suffix>` its compile left),
    atomically; a cache that cannot be written is no cache."""
    recorded = inputs([*(dependency_list(dfile) if dfile else []), *also], source, cwd)
    name = hashlib.sha256(json.dumps(recorded, sort_keys=True).encode()).hexdigest()
    d = Path(cache) / key
    try:
        d.mkdir(parents=True, exist_ok=True)
        # The sidecars and the inputs first: a reader that finds the object finds them too.
        for suffix in sidecars:
            side = Path(f"{obj}{suffix}")
            if side.is_file():
                _copy_atomically(side, d / f"{name}{suffix}", d)
            else:
                (d / f"{name}{suffix}").unlink(missing_ok=True)
        _write_atomically(json.dumps(recorded, indent=1, sort_keys=True) + "\n", d / f"{name}.inputs", d)
        _copy_atomically(obj, d / f"{name}.o", d)
    except OSError:
        pass


def copy_from_cache(cached, obj, source, depends, sidecars=(), recorded=None):
    """A hit: the cached object in place, with the dependency file make reads (the source, the files its
    compile read, `depends`) and its sidecars (a sidecar the cache does not hold is removed: the
    compile that made the object left none)."""
    obj = Path(obj)
    shutil.copyfile(cached, obj)
    for suffix in sidecars:
        kept = Path(cached).parent / f"{Path(cached).stem}{suffix}"
        if kept.is_file():
            shutil.copyfile(kept, f"{obj}{suffix}")
        else:
            Path(f"{obj}{suffix}").unlink(missing_ok=True)
    read = [_where(n, source) for n in sorted(recorded or {}) if n not in (FOLDER_NAMES, "./" + Path(source).name)]
    deps = " ".join(dict.fromkeys([str(source), *read, *map(str, depends)]))
    obj.with_suffix(".d").write_text(f"{obj}: {deps}\n")


def _write_atomically(text, dst, cache):
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, dst)


def _copy_atomically(src, dst, cache):
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=".tmp-")
    os.close(fd)
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


@contextlib.contextmanager
def key_lock(cache, key):
    """Held while one compile of `key` checks the cache, compiles and stores: the same compile
    started elsewhere meanwhile waits, then finds the object. No lock where the cache cannot be written."""
    try:
        Path(cache).mkdir(parents=True, exist_ok=True)
        lock = open(Path(cache) / f"{key}.lock", "w")
    except OSError:
        yield
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def run_cached(cache, command, source, obj, depends=(), say=print, compile_=None, sidecars=()):
    """Compiles with `command` (which writes `obj` from `source`, run in this working directory), or
    copies the object a compile with the same key and inputs left in `cache`; returns the compile's
    exit status (0 on a hit). `compile_` runs the command (default: subprocess.run, returning its exit
    status). `sidecars`: suffixes of files beside the object that its compile writes and a hit restores
    (e.g. ".warnings")."""
    compile_ = compile_ or (lambda cmd: subprocess.run(cmd).returncode)
    cache, obj = Path(cache), Path(obj)
    try:
        key = cache_key(command, str(source), str(obj), list(depends))
    except OSError:  # a cache that cannot be read is no cache
        return compile_(command)
    with key_lock(cache, key):  # the same compile running elsewhere: wait, then copy its object
        hit = find(cache, key, source)
        if hit:
            copy_from_cache(hit[0], obj, source, depends, sidecars, hit[1])
            say(f"object cache: {obj} (same source and command as before)")
            return 0
        dfile = obj.with_suffix(".d")  # what the compile read, where it says (-MMD): none but its own
        dfile.unlink(missing_ok=True)
        rc = compile_(command)
        if rc == 0 and obj.is_file():
            keep(cache, key, obj, source, dfile if dfile.is_file() else None, sidecars=sidecars)
        return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--object", required=True)
    ap.add_argument("--depends", nargs="*", default=[])
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no compile command after --")

    # The cache only ever saves work: a cache that cannot be read or written (another user's, a
    # read-only tree) means compiling as if it were not there.
    return run_cached(args.cache, command, args.source, args.object, args.depends)


if __name__ == "__main__":
    sys.exit(main())
