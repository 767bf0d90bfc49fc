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
directory and, for a symbolic link, in the directory of the file it points to). A hit copies the
object and writes its dependency file; a miss runs the command and stores the object, atomically.
Nothing is ever reused across a change of any of those bytes. OBJECT_CACHE= (empty) turns it off.
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
import os
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


def copy_from_cache(cached, obj, source, depends, sidecars=()):
    """A hit: the cached object in place, with the dependency file make reads and its sidecars (a
    sidecar the cache does not hold is removed: the compile that made the object left none)."""
    obj = Path(obj)
    shutil.copyfile(cached, obj)
    for suffix in sidecars:
        kept = Path(cached).parent / f"{Path(cached).stem}{suffix}"
        if kept.is_file():
            shutil.copyfile(kept, f"{obj}{suffix}")
        else:
            Path(f"{obj}{suffix}").unlink(missing_ok=True)
    deps = " ".join([str(source), *map(str, depends)])
    obj.with_suffix(".d").write_text(f"{obj}: {deps}\n")


def store(cache, key, obj, sidecars=()):
    """Keeps a freshly compiled object and its sidecars (files `<obj><suffix>` its compile left),
    atomically; a cache that cannot be written is no cache."""
    try:
        cache.mkdir(parents=True, exist_ok=True)
        # The sidecars first: a reader that finds the object finds them too.
        for suffix in sidecars:
            side = Path(f"{obj}{suffix}")
            if side.is_file():
                _copy_atomically(side, cache / f"{key}{suffix}", cache)
            else:
                (cache / f"{key}{suffix}").unlink(missing_ok=True)
        _copy_atomically(obj, cache / f"{key}.o", cache)
    except OSError:
        pass


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
    """Compiles with `command` (which writes `obj` from `source`), or copies the object a compile
    with the same key left in `cache`; returns the compile's exit status (0 on a hit). `compile_`
    runs the command (default: subprocess.run, returning its exit status). `sidecars`: suffixes of
    files beside the object that its compile writes and a hit restores (e.g. ".warnings")."""
    compile_ = compile_ or (lambda cmd: subprocess.run(cmd).returncode)
    cache, obj = Path(cache), Path(obj)
    try:
        key = cache_key(command, str(source), str(obj), list(depends))
    except OSError:  # a cache that cannot be read is no cache
        return compile_(command)
    with key_lock(cache, key):  # the same compile running elsewhere: wait, then copy its object
        cached = cache / f"{key}.o"
        if cached.is_file():
            copy_from_cache(cached, obj, source, depends, sidecars)
            say(f"object cache: {obj} (same source and command as before)")
            return 0
        rc = compile_(command)
        if rc == 0 and obj.is_file():
            store(cache, key, obj, sidecars)
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
