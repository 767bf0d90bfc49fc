#!/usr/bin/env bash
# setup-user.sh — `make setup` without root (setup.sh runs it where there is no apt-get, or neither
# root nor a sudo that works): installs what a student's commands use and this machine lacks into a
# user prefix, from PyPI, then names precisely what is still missing and how to get it.
#
# The prefix: GEMMLAB_PREFIX, default ${XDG_DATA_HOME:-~/.local/share}/gemmlab (shared by every copy
# of the handout, outside any of them; the Makefile looks there by itself):
#   venv/    a Python venv (python3 -m venv, 3.11 or newer) with pytest, pytest-xdist and matplotlib
#            (make test, make report); the Makefile's PYTHON
#   venv/    ... + typst, where there is no xelatex: make report's PDF engine, needs no TeX;
#            ... + cuobjdump and nvdisasm (NVIDIA's wheels, pinned), where the toolkit has none: make sass
#   bin/     pandoc, from PyPI's pypandoc_binary, where there is none or (without TeX) one too old to
#            write Typst (pandoc 3.1.2); the Makefile puts bin/ first on PATH
#   cuda     only where no CUDA toolkit is found, nor a module of one: NVIDIA's CUDA 13 wheels (nvcc,
#            the runtime, cuBLAS, cuRAND, cuobjdump), a link to the toolkit they lay out; the Makefile's
#            CUDA_HOME where nvcc is neither on PATH nor in /usr/local/cuda
#   include/ only where neither the system nor CPATH nor a handout's grader/third_party has them (the
#            instructor's repository, say): the header-only C++ libraries the grader builds with, Debian
#            12's packages pinned by hash, unpacked without dpkg (header_libs.py); the Makefile's include path
#   env.sh   `. env.sh` puts the same on PATH outside make
# GEMMLAB_SETUP_PLAN=1 (make setup PLAN=1) prints the plan and installs nothing.
# GEMMLAB_CUDA_WHEELS=1 installs the CUDA wheels even where a module of CUDA is offered; =0 never.
set -euo pipefail

scripts_dir="$(cd "$(dirname "$0")" && pwd)"
prefix=${GEMMLAB_PREFIX:-${XDG_DATA_HOME:-$HOME/.local/share}/gemmlab}
plan_only=${GEMMLAB_SETUP_PLAN:-}
cuda_wheels=${GEMMLAB_CUDA_WHEELS:-}
venv="$prefix/venv"
# What each Python package is for (a student's commands only: the staff tools are not set up here).
PY_PACKAGES=(pytest pytest-xdist matplotlib)   # make test (on every core), make report's figures
PANDOC_WHEEL=pypandoc_binary                   # pandoc itself (pypandoc/files/pandoc)
PDF_WHEEL=typst                                # make report's PDF without TeX (report/report_render.py)
# NVIDIA's CUDA 13 wheels lay out one toolkit in site-packages/nvidia/cu13 (bin/nvcc, include/, lib/,
# nvvm/); nvidia-cuda-nvcc brings nvvm, the runtime and crt. (CUDA 12's nvcc wheel has ptxas only.)
CUDA_WHEELS=(nvidia-cuda-nvcc==13.* nvidia-cublas==13.* nvidia-curand nvidia-cuda-cccl==13.*
             nvidia-cuda-cuobjdump==13.* nvidia-cuda-nvdisasm==13.*)

say() { echo "setup: $*"; }
# A tool on PATH that can run (bash's command -v also names a file it may not execute).
tool() { local p; p=$(command -v "$1" 2>/dev/null) && [ -x "$p" ] && echo "$p"; }

# A Python 3.11 or newer (tomllib reads course.toml): python3, else a versioned one (RHEL: python3.11).
find_python() {
  local p
  for p in python3 python3.13 python3.12 python3.11; do
    tool "$p" >/dev/null && "$p" -c 'import tomllib' 2>/dev/null && { tool "$p"; return; }
  done
  return 1
}
# The CUDA toolkit the Makefile would take (nvcc on PATH, CUDA_HOME, /usr/local/cuda), else nothing.
find_nvcc() {
  local n
  n=$(tool nvcc || true)
  [ -n "$n" ] || { [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ] && n=$CUDA_HOME/bin/nvcc; }
  [ -n "$n" ] || { [ -x /usr/local/cuda/bin/nvcc ] && n=/usr/local/cuda/bin/nvcc; }
  echo "$n"
}
has_modules() { [ -n "${LMOD_CMD:-}${MODULESHOME:-}" ]; }
pandoc_writes_typst() { "$1" --list-output-formats 2>/dev/null | grep -qx typst; }

python=$(find_python || true)
system_pandoc=$(tool pandoc || true)
[ "$system_pandoc" = "$prefix/bin/pandoc" ] && system_pandoc=""
tex=$(tool xelatex || true)
nvcc=$(find_nvcc)

# ---- the plan -----------------------------------------------------------------------------------
wheels=("${PY_PACKAGES[@]}")
need_pandoc=""
if [ -z "$system_pandoc" ]; then
  need_pandoc="no pandoc on this machine"
elif [ -z "$tex" ] && ! pandoc_writes_typst "$system_pandoc"; then
  need_pandoc="$system_pandoc cannot write Typst (pandoc 3.1.2 or newer can), and there is no TeX"
fi
[ -z "$need_pandoc" ] || wheels+=("$PANDOC_WHEEL")
[ -n "$tex" ] || wheels+=("$PDF_WHEEL")
# make sass and the build's tensor-core rule read machine code with cuobjdump and nvdisasm: a toolkit
# without them (or a module that leaves them out) gets NVIDIA's wheels, pinned by hash, in the venv,
# where grader/scripts/stage_sass.py finds them.
need_disassembler=""
nvcc_dir=$([ -z "$nvcc" ] || dirname "$(readlink -f "$nvcc")")
if [ -n "$nvcc" ] && [ ! -x "$nvcc_dir/cuobjdump" ] && [ -z "$(tool cuobjdump)" ]; then
  need_disassembler="$nvcc_dir has no cuobjdump"
fi
# The header-only libraries (header_libs.py lists them): a handout carries them; elsewhere, the ones
# neither the system nor CPATH nor the prefix has are fetched into the prefix.
header_dirs="$scripts_dir/../third_party/include:${CPATH:-}:${SYSTEM_INCLUDE:-/usr/include}:/usr/local/include:$prefix/include"
headers_missing() {  # each header (and what it is for) that no directory of header_dirs holds
  local h what d found
  [ -n "$python" ] || return 0
  while IFS=$'\t' read -r h _ what; do
    found=""
    IFS=: read -ra inc <<< "$header_dirs"
    for d in "${inc[@]}"; do [ -n "$d" ] && [ -f "$d/$h" ] && found=1; done
    [ -n "$found" ] || echo "$h:$what"
  done < <("$python" "$scripts_dir/header_libs.py" list)
}
need_headers=""
while IFS= read -r h; do [ -z "$h" ] || need_headers+="${h%%:*} "; done < <(headers_missing)
need_cuda=""
if [ -z "$nvcc" ] && [ "$cuda_wheels" != 0 ]; then
  if [ -x "$prefix/cuda/bin/nvcc" ]; then
    need_cuda="installed already"
  elif has_modules && [ "$cuda_wheels" != 1 ]; then
    need_cuda=""   # the cluster's own toolkit is the one to use: said below
  else
    need_cuda="no CUDA toolkit found (nvcc on PATH, CUDA_HOME, /usr/local/cuda)"
    wheels+=("${CUDA_WHEELS[@]}")
  fi
fi

say "user prefix: $prefix (GEMMLAB_PREFIX= elsewhere)"
if [ -z "$python" ]; then
  say "missing: Python 3.11 or newer (the scripts; tomllib reads course.toml): none of python3, python3.13," >&2
  say "         python3.12, python3.11 is one. Load one (e.g. module load python/3.11) or ask for one, then make setup again." >&2
else
  say "plan: a venv of $python ($("$python" --version 2>&1)) in $venv, with: ${wheels[*]}"
  [ -z "$need_pandoc" ] || say "plan:   $PANDOC_WHEEL: pandoc, linked as $prefix/bin/pandoc ($need_pandoc)"
  [ -n "$tex" ] || say "plan:   $PDF_WHEEL: make report's PDF through Typst (no xelatex here, no TeX needed)"
  [ -z "$need_headers" ] || say "plan: the header-only C++ libraries, Debian 12's packages pinned by SHA-256, from deb.debian.org into $prefix/include (missing here: ${need_headers% })"
  [ -z "$need_disassembler" ] || say "plan:   cuobjdump and nvdisasm, NVIDIA's wheels pinned by hash (requirements-disassembler.txt): make sass ($need_disassembler)"
  [ -z "$need_cuda" ] || [ "$need_cuda" = "installed already" ] || \
    say "plan:   NVIDIA's CUDA 13 wheels (about 1 GB): the toolkit linked as $prefix/cuda ($need_cuda)"
fi
if [ -n "$plan_only" ]; then
  say "plan only (GEMMLAB_SETUP_PLAN): nothing installed."
else
  # ---- the install --------------------------------------------------------------------------------
  if [ -n "$python" ]; then
    mkdir -p "$prefix/bin"
    if [ -n "$need_headers" ]; then  # the build's own needs first: they take a second
      "$python" "$scripts_dir/header_libs.py" fetch --prefix "$prefix" || say "the header libraries were not installed (above): named below as missing." >&2
    fi
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import tomllib' 2>/dev/null; then
      say "creating the venv $venv ..."
      "$python" -m venv "$venv" || {
        say "$python -m venv failed: this Python has no working venv module (Debian: the package python3-venv;" >&2
        say "         ask for it, or put another Python 3.11+ first on PATH, e.g. module load python)." >&2; exit 1; }
    fi
    t0=$SECONDS
    say "installing from PyPI into $venv: ${wheels[*]} ..."
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "${wheels[@]}"
    if [ -n "$need_disassembler" ]; then
      "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --require-hashes \
        -r "$scripts_dir/requirements-disassembler.txt"
    fi
    say "installed ($((SECONDS - t0)) s)."
    if [ -n "$need_pandoc" ]; then
      wheel_pandoc=$("$venv/bin/python" -c 'import pypandoc, pathlib; print(pathlib.Path(pypandoc.__file__).parent / "files" / "pandoc")')
      ln -sfn "$wheel_pandoc" "$prefix/bin/pandoc"
      say "pandoc: $("$prefix/bin/pandoc" --version | head -n 1) at $prefix/bin/pandoc"
    fi
    if [ -n "$need_cuda" ] && [ "$need_cuda" != "installed already" ]; then
      cu13=$("$venv/bin/python" -c 'import nvidia, pathlib; print(pathlib.Path(list(nvidia.__path__)[0]) / "cu13")')
      # the linker's unversioned names (-lcublas, -lcurand, -lcudart): the wheels ship libX.so.<major> only
      for lib in "$cu13"/lib/lib*.so.*; do
        base=${lib%%.so.*}.so
        [ -e "$base" ] || ln -s "$(basename "$lib")" "$base"
      done
      ln -sfn "$cu13" "$prefix/cuda"
      say "CUDA toolkit: $("$prefix/cuda/bin/nvcc" --version | tail -n 2 | head -n 1) at $prefix/cuda"
    fi
  fi
  [ -n "$python" ] && { echo "# GEMM Lab's user prefix (make setup): . $prefix/env.sh puts its tools on PATH outside make."
    echo "export PATH=\"$prefix/bin:$venv/bin\${PATH:+:\$PATH}\""
    [ ! -x "$prefix/cuda/bin/nvcc" ] || [ -n "$nvcc" ] || echo "export CUDA_HOME=\"$prefix/cuda\""
  } >"$prefix/env.sh" && say "wrote $prefix/env.sh: make finds the prefix by itself; '. $prefix/env.sh' puts it on PATH outside make."
fi
[ ! -f "$scripts_dir/handout.py" ] || say "the instructor's repository: the staff tools' packages (Slurm, chromium, copydetect) need root or sudo; not set up here."

# ---- what is still missing ------------------------------------------------------------------------
missing=0
while IFS= read -r h; do
  [ -n "$h" ] || continue
  say "missing: ${h%%:*}, header of ${h#*:} (make builds with it: make setup again where deb.debian.org can be reached, or put its directory on CPATH)" >&2
  missing=1
done < <(headers_missing)
for c in "make:make" "g++:the grader's host code (e.g. module load gcc)"; do
  tool "${c%%:*}" >/dev/null || { say "missing: ${c%%:*} (${c#*:})" >&2; missing=1; }
done
[ -n "$python" ] || missing=1
if [ -n "$nvcc" ]; then
  say "CUDA toolkit: $nvcc"
elif [ -x "$prefix/cuda/bin/nvcc" ]; then
  :
elif has_modules && [ "$cuda_wheels" != 1 ]; then
  say "missing: the CUDA toolkit (nvcc, cuBLAS): this machine has environment modules: 'module avail cuda'," >&2
  say "         then 'module load cuda' (or cuda/<version>) and make setup again; or make setup CUDA_WHEELS=1" >&2
  say "         installs NVIDIA's CUDA 13 wheels (about 1 GB) into $prefix/cuda." >&2
  missing=1
elif [ -n "$plan_only" ] && [ -n "$need_cuda" ]; then
  :   # planned above
else
  say "missing: the CUDA toolkit (nvcc, cuBLAS): install NVIDIA's CUDA Toolkit, or load it (module load cuda)" >&2
  missing=1
fi
tool pdftotext >/dev/null || say "missing (optional): pdftotext (poppler-utils: only the report's own tests read PDFs)"
tool ccache >/dev/null || say "missing (optional): ccache (faster rebuilds)"
if [ "$missing" = 0 ]; then
  say "everything make, make test and make report use is here."
fi
exit $missing
