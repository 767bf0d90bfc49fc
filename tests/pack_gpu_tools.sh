#!/usr/bin/env bash
# pack_gpu_tools.sh — what `make setup` would install for the test suite, packed into .deps for a lent
# GPU machine where nothing can be installed: pytest-xdist (the tests that need no GPU run on every
# core) and ccache with the one library it needs beyond the C/C++ runtime (the grader is compiled
# once per content, whichever build directory asks). Run it here, after ../shared/device/pack-deps.sh
# (which writes .deps/include); take .deps along; tests/gpu_session.sh puts these on the paths.
set -euo pipefail
cd "$(dirname "$0")/.."
need=(python3-pytest-xdist python3-execnet ccache)
missing=()
for p in "${need[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
    echo "pack_gpu_tools: install first: apt-get install ${missing[*]} (or make setup)" >&2
    exit 1
fi
rm -rf .deps/python .deps/python-after .deps/bin .deps/lib
mkdir -p .deps/python .deps/bin .deps/lib
cp -r /usr/lib/python3/dist-packages/xdist /usr/lib/python3/dist-packages/execnet .deps/python/
# the staff's similarity measure (copydetect: make handout's check that no shipped file holds a solution,
# the similarity report) and what it needs beyond numpy, all pure Python
staff_py=$(/usr/bin/python3 -c "import copydetect, os; print(os.path.dirname(os.path.dirname(copydetect.__file__)))" 2>/dev/null || true)
if [ -n "$staff_py" ]; then
    mkdir -p .deps/python-after
    cp -r "$staff_py/copydetect" .deps/python-after/
    for m in pygments jinja2 markupsafe tqdm; do
        d=$(/usr/bin/python3 -c "import $m, os; print(os.path.dirname($m.__file__))" 2>/dev/null) && cp -r "$d" .deps/python-after/
    done
fi
cp "$(command -v ccache)" .deps/bin/
# ccache's libraries that a CUDA image may lack (the rest are the C/C++ runtime and zstd)
for lib in $(ldd "$(command -v ccache)" | awk '/hiredis/ {print $3}'); do cp "$lib" .deps/lib/; done
# NVIDIA's disassembler (make sass, the tensor-core rule), for a toolkit installed without it: the copy
# make setup installed from NVIDIA's wheels (grader/scripts/requirements-disassembler.txt), if any
for tool in cuobjdump nvdisasm; do
    found=$(/usr/bin/python3 -c "import glob,os,sys; print(next(iter(sorted(p for e in sys.path for p in glob.glob(os.path.join(e or '.', 'nvidia', 'cu*', 'bin', '$tool')))), ''))" 2>/dev/null)
    [ -n "$found" ] && cp "$found" .deps/bin/
done
grep -qx '/.deps/' .git/info/exclude 2>/dev/null || echo '/.deps/' >> .git/info/exclude
echo "packed pytest-xdist, execnet, ccache$([ -d .deps/python-after/copydetect ] && echo ', copydetect')$(ls .deps/bin | grep -q cuobjdump && echo ', cuobjdump, nvdisasm') ($(du -sh .deps | cut -f1) in .deps)"
