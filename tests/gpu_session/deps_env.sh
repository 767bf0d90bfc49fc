# deps_env.sh — puts what .deps carries on the paths, for a lent GPU machine where nothing can be
# installed: the header-only libraries (CPATH), pytest-xdist (PYTHONPATH) and ccache (PATH).
# tests/gpu_session.sh sources it; source it yourself, from the repository root, before a make
# command run there on its own:   source tests/gpu_session/deps_env.sh
# Packed here first: ../shared/device/pack-deps.sh, then tests/pack_gpu_tools.sh.
if [ -d .deps/include ]; then
    export CPATH=$PWD/.deps/include
else
    echo "deps_env.sh: no .deps/include under $PWD: run it from the repository root, with .deps carried" >&2
fi
[ -d .deps/python ] && export PYTHONPATH=$PWD/.deps/python${PYTHONPATH:+:$PYTHONPATH}
# the staff's similarity measure (copydetect) and the pure-Python packages it needs, last on the path
[ -d .deps/python-after ] && export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD/.deps/python-after
[ -x .deps/bin/ccache ] && export PATH=$PWD/.deps/bin:$PATH LD_LIBRARY_PATH=$PWD/.deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
true
