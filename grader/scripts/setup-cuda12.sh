#!/usr/bin/env bash
# setup-cuda12.sh — a second CUDA toolkit, CUDA 12, in a private prefix (`make setup-cuda12`).
#
# CUDA 13 no longer compiles for Volta (sm_70); CUDA 12 does. This installs CUDA 12.5 (nvcc, cuBLAS,
# cuRAND, the runtime, CUPTI) from Debian's non-free packages of NVIDIA's toolkit, without root and
# without touching the system: apt downloads the packages with a sources list and state of its own,
# `dpkg-deb -x` unpacks them into the prefix, and the prefix is laid out like /usr/local/cuda
# (bin/nvcc, include/, lib64/, nvvm/), so the Makefile takes it as it is:
#
#   make CUDA_HOME=$HOME/.cache/gemmlab/cuda-12.5 ARCH=sm_70          (builds into build/sm_70-cuda12.5)
#
# Why Debian's packages: PyPI's CUDA 12 compiler wheel (nvidia-cuda-nvcc-cu12) ships ptxas only, no
# nvcc driver, cicc, cudafe++, fatbinary or nvlink, so it cannot compile a .cu file. Why 12.5, from
# Debian's experimental suite: the grader needs CUDA 12.5 or later (cudaGetDriverEntryPointByVersion,
# grader/src/common/stream_memops.cpp), and Debian's stable and unstable suites have 12.4.
# Why this prefix: a per-user cache (XDG_CACHE_HOME, default ~/.cache) survives `make clean` and
# `git clean`, is shared by every checkout and worktree of the kit, needs no root, and can be deleted
# at any time (this script lays it again). CUDA12_HOME=<dir> puts it elsewhere.
# Idempotent: a prefix whose nvcc works and whose stamp names the same packages is left as it is.
# About 1.3 GB to download, 1.5 GB on disk (the static libraries nobody links are left out).
#
# CUDA12_STATIC=1 (`make setup-cuda12 CUDA12_STATIC=1`) also keeps the static archives of cuBLAS,
# cuBLASLt and cuRAND (1 GB more on disk), which a build that carries its own CUDA libraries links
# (`make CUDA_LIBS=pruned`, grader/scripts/prune_cuda_libs.py). On a prefix installed without them it
# adds them, downloading the one package that has them (nvidia-cuda-dev, 0.9 GB) again.
set -euo pipefail

CUDA12_HOME=${CUDA12_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/gemmlab/cuda-12.5}
CUDA12_STATIC=${CUDA12_STATIC:-}
STATIC_ARCHIVES=(libcublas_static.a libcublasLt_static.a libcurand_static.a)
SUITE=experimental           # nvidia-cuda-toolkit 12.5; the CCCL headers it needs come from unstable
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What each package brings (nvidia-cuda-dev: the headers and the unversioned .so links).
PACKAGES=(
  nvidia-cuda-toolkit/$SUITE    # nvcc, cicc, cudafe++, ptxas, fatbinary, nvlink, libdevice
  nvidia-cuda-dev/$SUITE        # the CUDA headers, libcudadevrt, the linker's libcudart.so/libcublas.so/... links
  libcudart12/$SUITE libcublas12/$SUITE libcublaslt12/$SUITE libcurand10/$SUITE libnvvm4/$SUITE
  libcupti12/$SUITE libcupti-dev/$SUITE
  libcu++-dev libcub-dev libthrust-dev   # CCCL headers the toolkit's headers include (unstable's)
)
stamp="$CUDA12_HOME/.gemmlab-cuda12"
want="$SUITE ${PACKAGES[*]}"

# Works: nvcc says it is CUDA 12 and compiles a kernel for sm_70.
works() {
  [ -x "$CUDA12_HOME/bin/nvcc" ] && "$CUDA12_HOME/bin/nvcc" --version 2>/dev/null | grep -q "release 12\." || return 1
  local dir rc
  dir=$(mktemp -d)
  printf '__global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }\n' >"$dir/probe.cu"
  "$CUDA12_HOME/bin/nvcc" -arch=sm_70 -c "$dir/probe.cu" -o "$dir/probe.o" >"$dir/log" 2>&1 && rc=0 || rc=1
  [ $rc = 0 ] || cp "$dir/log" "$CUDA12_HOME/.probe.log" 2>/dev/null || true
  rm -rf "$dir"
  return $rc
}
have_static() {
  local a
  for a in "${STATIC_ARCHIVES[@]}"; do [ -f "$CUDA12_HOME/root/usr/lib/x86_64-linux-gnu/$a" ] || return 1; done
}
apt_dir="$CUDA12_HOME/.apt"   # apt's own sources list, lists and downloads: the system's are not touched
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir" -o "Dir::Cache::archives=$apt_dir/archives"
          -o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)")
apt_lists() {
  for tool in apt-get dpkg-deb; do
    command -v "$tool" >/dev/null || { echo "setup-cuda12: needs $tool (Debian or Ubuntu); install CUDA 12 from NVIDIA instead and pass CUDA_HOME=<it>" >&2; exit 1; }
  done
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/debs"
  printf 'deb %s %s main contrib non-free\n' "$MIRROR" unstable "$MIRROR" "$SUITE" >"$apt_dir/sources.list"
  echo "setup-cuda12: reading the package lists of Debian unstable and $SUITE ..."
  apt-get "${apt_opts[@]}" -qq update
}
# The static archives of cuBLAS, cuBLASLt and cuRAND from nvidia-cuda-dev's package file, into the prefix.
unpack_static() {
  local members=() a
  for a in "${STATIC_ARCHIVES[@]}"; do members+=("./usr/lib/x86_64-linux-gnu/$a"); done
  dpkg-deb --fsys-tarfile "$1" | tar -x -C "$CUDA12_HOME/root" "${members[@]}"
  have_static || { echo "setup-cuda12: $(basename "$1") did not hold ${STATIC_ARCHIVES[*]}" >&2; exit 1; }
}

if works && [ "$(head -n1 "$stamp" 2>/dev/null)" = "$want" ]; then
  version=$("$CUDA12_HOME/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
  if [ -z "$CUDA12_STATIC" ] || have_static; then
    echo "setup-cuda12: CUDA $version is installed already in $CUDA12_HOME${CUDA12_STATIC:+ (with the static archives)}"
    exit 0
  fi
  echo "setup-cuda12: adding the static archives of cuBLAS, cuBLASLt and cuRAND to CUDA $version in $CUDA12_HOME"
  apt_lists
  echo "setup-cuda12: downloading nvidia-cuda-dev/$SUITE (about 0.9 GB) ..."
  rm -f "$apt_dir/debs"/*.deb
  (cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" -qq download "nvidia-cuda-dev/$SUITE")
  unpack_static "$apt_dir/debs"/nvidia-cuda-dev_*.deb
  rm -f "$apt_dir/debs"/*.deb
  echo "setup-cuda12: static archives added ($(du -ch "${STATIC_ARCHIVES[@]/#/$CUDA12_HOME/lib64/}" | tail -n1 | cut -f1))."
  exit 0
fi

echo "setup-cuda12: installing CUDA 12 (Debian non-free: ${PACKAGES[*]}) into $CUDA12_HOME"
apt_lists
echo "setup-cuda12: downloading (about 1.3 GB) ..."
rm -f "$apt_dir/debs"/*.deb
(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" -qq download "${PACKAGES[@]}")

echo "setup-cuda12: unpacking ..."
root="$CUDA12_HOME/root"
rm -rf "$root" "$CUDA12_HOME/bin" "$CUDA12_HOME/include" "$CUDA12_HOME/lib64" "$CUDA12_HOME/nvvm" "$stamp"
mkdir -p "$root"
for deb in "$apt_dir/debs"/*.deb; do
  # The static libraries of cuBLAS, cuFFT, NPP... are most of the bytes and nothing here links them.
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$root" --exclude='./usr/share/doc' --exclude='./usr/share/man' \
    --exclude='*_static.a' --exclude='*_static_nocallback.a' --exclude='./usr/lib/nvidia-cuda-toolkit/compute-sanitizer'
done
if [ -n "$CUDA12_STATIC" ]; then unpack_static "$apt_dir/debs"/nvidia-cuda-dev_*.deb; fi
rm -f "$apt_dir/debs"/*.deb

# The CUDA_HOME layout. nvcc reads the nvcc.profile beside the name it was started by (bin/nvcc
# here); Debian's own is a link to /etc/nvcc.profile with /usr paths: this one is relative to the prefix.
tk="$root/usr/lib/nvidia-cuda-toolkit"
rm -f "$tk/bin/nvcc.profile"
mkdir -p "$CUDA12_HOME/bin"
cat >"$CUDA12_HOME/bin/nvcc.profile" <<'EOF'
# Written by grader/scripts/setup-cuda12.sh: Debian's CUDA 12 in a private prefix.
TOP                = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
PATH              += $(TOP)/root/usr/lib/nvidia-cuda-toolkit/bin:$(TOP)/root/usr/bin:
INCLUDES          += "-I$(TOP)/include" $(_SPACE_)
LIBRARIES         =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
EOF
ln -s ../root/usr/lib/nvidia-cuda-toolkit/bin/nvcc "$CUDA12_HOME/bin/nvcc"
ln -s ../root/usr/lib/nvidia-cuda-toolkit/bin/crt "$CUDA12_HOME/bin/crt"   # the link stubs nvcc links with
for t in ptxas fatbinary nvlink cudafe++ bin2c cuobjdump nvdisasm nvprune cu++filt; do
  [ -e "$root/usr/bin/$t" ] && ln -s "../root/usr/bin/$t" "$CUDA12_HOME/bin/$t"
done
ln -s root/usr/include "$CUDA12_HOME/include"
ln -s root/usr/lib/x86_64-linux-gnu "$CUDA12_HOME/lib64"
mkdir -p "$CUDA12_HOME/nvvm"
ln -s ../root/usr/lib/nvidia-cuda-toolkit/libdevice "$CUDA12_HOME/nvvm/libdevice"

# The linker's unversioned names (nvidia-cuda-dev has them; checked, since the build needs them).
for lib in libcudart.so libcublas.so libcublasLt.so libcurand.so; do
  [ -e "$CUDA12_HOME/lib64/$lib" ] || { echo "setup-cuda12: $lib is missing from $CUDA12_HOME/lib64" >&2; exit 1; }
done
if ! works; then
  echo "setup-cuda12: $CUDA12_HOME/bin/nvcc does not compile a kernel for sm_70:" >&2
  cat "$CUDA12_HOME/.probe.log" >&2 2>/dev/null || true
  exit 1
fi
printf '%s\n' "$want" >"$stamp"
version=$("$CUDA12_HOME/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
echo "setup-cuda12: CUDA $version installed in $CUDA12_HOME ($(du -sh "$CUDA12_HOME" | cut -f1))."
echo "setup-cuda12: build with it: make CUDA_HOME=$CUDA12_HOME ARCH=sm_70"
