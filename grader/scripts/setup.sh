#!/usr/bin/env bash
# setup.sh — installs the Debian packages GEMM Lab needs, in one idempotent step (`make setup`).
# Says what it installs; where it cannot (no apt-get, or neither root nor a sudo that works) it installs
# what a student's commands use into a user prefix instead, from PyPI (setup-user.sh), and names what is
# still missing, found by looking for it, and how to get it. The CUDA toolkit
# with cuBLAS is assumed present (nvcc on PATH or in /usr/local/cuda): it says so when it is not.
set -euo pipefail

# What each package is for (keep this list the only one: README and docs point here).
# The header-only libraries the grader builds with; a handout carries them (grader/third_party).
# The same packages as header_libs.py's HEADER_LIBS (which pins them for set-up without root; python3
# may not be here yet to read it): tests/py/developer/test_header_libs.py holds the two the same.
HEADER_PACKAGES=(
  doctest-dev            # C++ unit tests
  nlohmann-json3-dev     # JSON results files
  libcli11-dev           # the grader's command line
  libtomlplusplus-dev    # course.toml in C++
)
PACKAGES=(
  python3                # scripts (3.11: tomllib reads course.toml)
  python3-pytest         # script and integration tests
  python3-pytest-xdist   # ... spread over the cores (tests/run_tests.py)
  python3-matplotlib     # report figures
  python3-munkres        # keeps apt from pulling scipy in with matplotlib
  pandoc                 # lab report: Markdown -> PDF
  texlive-xetex          # ... through xelatex
  texlive-fonts-recommended
  texlive-lang-chinese   # Chinese in reports (only a report with CJK text loads it)
  fonts-noto-cjk
  poppler-utils          # pdftotext/pdftoppm: report tests
  make g++ git ca-certificates
  ccache                 # compiles the grader once per content, whichever build directory asks
)
# The staff tools (make similarity, make leaderboard) and their tests, and the tests of the cluster tools;
# only in the instructor repository (the one with grader/scripts/handout.py), never in a student's
# handout, whose commands use none of them.
STAFF_PACKAGES=(
  slurmctld slurmd slurm-client munge   # the cluster tests' real Slurm clusters (single- and multi-node)
  iproute2               # ip netns: the multi-node test cluster's network namespaces (tests/slurm/multinode.sh)
  python3-pip            # installs requirements-staff.txt (below)
  python3-numpy python3-jinja2 python3-pygments python3-tqdm   # copydetect's dependencies
  python3-pil            # reads screenshots in the page tests
  chromium               # headless browser: the staff pages' tests open them and take screenshots
  fonts-dejavu-core      # the pages' and plots' font
)
scripts_dir="$(cd "$(dirname "$0")" && pwd)"
staff=0
[ -f "$scripts_dir/handout.py" ] && staff=1

names=()
if [ ! -d "$scripts_dir/../third_party/include" ]; then
  for p in "${HEADER_PACKAGES[@]}"; do names+=("$p"); done
fi
for p in "${PACKAGES[@]}"; do names+=("$p"); done
if [ "$staff" = 1 ]; then
  for p in "${STAFF_PACKAGES[@]}"; do names+=("$p"); done
fi

# Where this script cannot install packages (no apt-get, or neither root nor a sudo that works), it
# installs into a user prefix what a student's commands use and the machine lacks (setup-user.sh: a
# venv from PyPI, pandoc, a PDF engine without TeX, CUDA where none is found) and names what is missing.
user_setup() {
  echo "setup: $1: no system package is installed; what GEMM Lab needs goes into a user prefix instead." >&2
  exec bash "$scripts_dir/setup-user.sh"
}
runnable() { local p; p=$(command -v "$1" 2>/dev/null) && [ -x "$p" ]; }  # command -v also names a file it may not run
if ! runnable apt-get || ! runnable dpkg; then
  user_setup "this system has no apt-get"
fi
if [ "$(id -u)" != 0 ]; then
  # sudo that works: without a password, or with one typed at a terminal
  runnable sudo || user_setup "not root, and no sudo"
  if ! sudo -n true 2>/dev/null && ! { [ -t 0 ] && sudo -v; }; then
    user_setup "not root, and sudo may not install here"
  fi
fi

missing=()
for p in "${names[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#names[@]} packages are installed already."
else
  echo "setup: installing ${#missing[@]} package(s): ${missing[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup: installed."
fi

# Python packages Debian does not have (grader/scripts/requirements-staff.txt), pinned by hash, into
# the system Python the Makefile uses (/usr/bin/python3). Debian marks that Python as externally
# managed (PEP 668), hence --break-system-packages; --no-deps keeps pip from touching anything apt
# installed (the dependencies are the apt packages above), and root's pip writes to /usr/local only.
requirements="$scripts_dir/requirements-staff.txt"
if [ "$staff" = 0 ]; then
  echo "setup: a handout: the staff tools' packages (chromium, copydetect) are not needed here."
elif /usr/bin/python3 -c 'import copydetect, sys; sys.exit(copydetect.__version__ != "0.5.0")' 2>/dev/null; then
  echo "setup: Python packages of $requirements are installed already."
else
  echo "setup: installing the Python packages of $requirements (pip, pinned by hash) ..."
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO /usr/bin/python3 -m pip install -q --break-system-packages --root-user-action=ignore --no-deps \
    --require-hashes -r "$requirements"
  /usr/bin/python3 -c 'import copydetect' || { echo "setup: copydetect did not install" >&2; exit 1; }
  echo "setup: installed."
fi

nvcc_path=$(command -v nvcc 2>/dev/null || true)
[ -n "$nvcc_path" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc_path=/usr/local/cuda/bin/nvcc; }
if [ -z "$nvcc_path" ]; then
  echo "setup: the CUDA toolkit was not found (no nvcc on PATH or in /usr/local/cuda/bin)." >&2
  echo "       Install the CUDA Toolkit (with cuBLAS) from NVIDIA, or load it (e.g. 'module load cuda')." >&2
  exit 1
fi
cuda_home=$(dirname "$(dirname "$nvcc_path")")
if ! ls "$cuda_home"/lib64/libcublas.so* >/dev/null 2>&1 && ! ls "$cuda_home"/targets/*/lib/libcublas.so* >/dev/null 2>&1; then
  echo "setup: nvcc is at $nvcc_path but cuBLAS (libcublas.so) is not beside it in $cuda_home/lib64." >&2
  exit 1
fi
echo "setup: CUDA toolkit: $("$nvcc_path" --version | tail -n 2 | head -n 1) at $cuda_home (cuBLAS found)."
# cuobjdump and nvdisasm (make sass, and the symbol check's tensor-core rule) come with a full toolkit;
# one installed without them (nvcc and its libraries only) gets NVIDIA's own wheels of both, pinned by
# hash (requirements-disassembler.txt), into the Python the Makefile uses; stage_sass.py finds them there.
if [ -x "$cuda_home/bin/cuobjdump" ] || command -v cuobjdump >/dev/null 2>&1; then
  echo "setup: cuobjdump: $(command -v cuobjdump 2>/dev/null || echo "$cuda_home/bin/cuobjdump")"
elif ls /usr/local/lib/python3*/dist-packages/nvidia/cu*/bin/cuobjdump >/dev/null 2>&1; then
  echo "setup: cuobjdump: NVIDIA's wheel, installed already ($(ls /usr/local/lib/python3*/dist-packages/nvidia/cu*/bin/cuobjdump | head -n 1))."
elif /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
  echo "setup: the toolkit has no cuobjdump: installing NVIDIA's cuobjdump and nvdisasm wheels (pip, pinned by hash) ..."
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO /usr/bin/python3 -m pip install -q --break-system-packages --root-user-action=ignore --no-deps \
    --require-hashes -r "$scripts_dir/requirements-disassembler.txt"
  echo "setup: installed."
else
  echo "setup: the toolkit has no cuobjdump (make sass and the build's tensor-core rule need it): install the" >&2
  echo "       toolkit's cuobjdump and nvdisasm, or python3-pip, then make setup again." >&2
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "setup: GPU: $(nvidia-smi -L | head -n 1)"
else
  echo "setup: no GPU on this machine: tests that need one will be skipped (and counted)."
fi
