# GEMM Lab — one Makefile for students, TAs and instructors.
#
# `make help` lists every target, grouped by who runs it (students, everyone, instructors & TAs), and
# every variable. It reads the comments of this file (grader/scripts/make_help.awk): `##@ <group>`
# starts a group, `<target>: ...  ## <text>` says what a target does, `## <NAME>=<value> <text>` what a
# variable does. A target without `## ` is not listed.

SHELL := /bin/bash
comma := ,
empty :=
space := $(empty) $(empty)
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
# Build on every core unless told otherwise (a -j on the command line wins).
# (The two makes of test-build take part in this one's jobs instead.)
ifndef IN_TEST_BUILD
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif

# ---- what to work on ---------------------------------------------------------------------------
# The variables `make help` lists (one line each; see the header):
## SUBMISSION=<dir> the stage files to build and grade: a directory laid out like student/ (default student)
## STAGE=<stage>[/<variant>] one stage or one variant, e.g. tiled or tiled/16 (check, bench; sanitize needs it)
## PREC=float|double one precision (check, bench, sanitize: default float)
## FULL=1 make check on the grading shape set (39 shapes, up to 2048³) instead of the quick one
## SEED=<n> replay the data and random shapes of an earlier run (every run prints its seed)
## SHAPE=MxNxK the case make sanitize runs (default: a small odd-sized one)
## SHAPES=MxNxK,... the shapes make bench times (default: course.toml [bench])
## TAG=<label> make bench: keep the run in the tuning history under this label
## RERUN=0 make report: reuse the measurements that are still fresh
## HISTORY=<stage>[,...] make report: add these stages' tuning history (make bench TAG=...)
## ATTEMPT=<n> make withdraw: the hand-in to take back (make status lists them); accept, settle: the one that counts (E1: one the staff entered)
## UNDO=1 make withdraw: count the withdrawn hand-in again
## CONFIG=<file> the course configuration (default course.toml)
## ARCH=sm_XX the GPU architecture to build for (default: this machine's GPU, else course.toml [cluster] arch, else sm_90)
## CUDA_HOME=<toolkit> build with another CUDA toolkit, e.g. CUDA 12 for sm_70 (make setup-cuda12)
## CUDA12_HOME=<dir> where make setup-cuda12 installs CUDA 12 (default ~/.cache/gemmlab/cuda-12.5)
## CUDA12_STATIC=1 make setup-cuda12 also keeps cuBLAS's, cuBLASLt's and cuRAND's static archives (for CUDA_LIBS=pruned)
## CUDA_LIBS=pruned the build carries its own cuBLAS/cuRAND (cut from the static archives to CUDA_LIBS_ARCHS) and CUDA runtime, in build/.../cuda-libs (default shared: the toolkit's)
## CUDA_LIBS_ARCHS=<archs> CUDA_LIBS=pruned: the GPUs its libraries must run on, e.g. "sm_70 sm_90" (default ARCH)
## V=1 show every command (by default one line per file; stage files' commands and output go to build.log)
## WERROR=1 the stage files' compiler warnings are errors
## CCACHE= compile without ccache; OBJECT_CACHE= compile every stage file afresh
## CONFINE=<dir>:<dir> (the cluster) compile stage files in a sandbox that may read only these directories
## SWEEP=<name> (instructors) the sweep to work on (sweep, sweep-status, gradebook-export, similarity, leaderboard)
## STUDENT=<id> (instructors) make sweep: regrade this student only; the staff's decisions (accept, override, settle, enter, withdraw, decisions): the student
## WHY=<text> (instructors) the staff's decisions and publish-course: why (recorded with who and when)
## FINAL=<points> (instructors) make override, settle: the student's final score, set by hand
## CLEAR=1 (instructors) make override: compute the final score again
## ZERO=1 (instructors) make settle: the final score is 0
## FROM=<dir> (instructors) make enter: the hand-in's stage files, laid out like student/
## AT=<date-time> (instructors) make enter: when it was handed in, with its time zone (e.g. 2026-12-04T23:41:00-08:00)
## FORCE=1 (instructors) make sweep: sweep before the deadline
## LOCAL=1 (instructors) make sweep: grade on this machine, not on Slurm (every student's code runs here)
## FOLLOW=1 (instructors) make sweep-status: follow the sweep until it ends
## DIST=<dir> (instructors) make handout: where the handout goes (default course.toml [handout] dist)
## GALLERY=<entry>,... (instructors) make test-gallery: only these entries
## MATRIX_ONLY=<paths> (instructors) make arch-matrix: only files whose path holds one of these (MATRIX_JOBS=<n> compiles at once; MATRIX_TUNE=1 adds the tuning candidates)
# make test tests the grader and this machine with the stubs as handed out, whatever a student has
# written: in this repository they are student/; in a handout, student/ is the student's own work and
# the stubs are in tests/stubs/student/, where make handout puts a copy of them.
TEST_STUBS := $(firstword $(wildcard tests/stubs/student) student)
ifneq ($(filter test test-build test-build-stamps test-build-binaries,$(MAKECMDGOALS)),)
SUBMISSION ?= $(TEST_STUBS)
endif
SUBMISSION ?= student
CONFIG ?= course.toml
STAGE ?=
PREC ?=
SEED ?=
FULL ?=
SHAPE ?=
SHAPES ?=

# ---- what was typed: the one source of every "run it on a GPU node" hint ------------------------
# A command that needs a GPU and finds none (check, bench, grade, sanitize, profile, report) tells the
# student to run the very command they typed on a GPU node: GEMMLAB_SRUN + GEMMLAB_COMMAND. GEMMLAB_SRUN is
# the course's srun line (its partition, account, qos, gres, constraint: cluster/config.py srun_line, read
# from the published course by `make hint`; below, once PYTHON is known); GEMMLAB_COMMAND is `make`, the
# goals and the variables given on the command line, in the order given (make keeps them last first).
# The judge prints it (grader/src/judge/main.cpp, no_gpu_message; make report asks the judge), and so
# does make profile's check, which runs before the judge is built (ncu_profile.py).
# (The one make this Makefile starts itself, make profile's build of the runner, prints no such hint.)
reverse = $(if $(1),$(call reverse,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))
escaped_space := ^_^
export GEMMLAB_COMMAND := $(strip make $(MAKECMDGOALS) \
    $(subst $(escaped_space),\ ,$(call reverse,$(subst \ ,$(escaped_space),$(MAKEOVERRIDES)))))

# ---- toolchain ---------------------------------------------------------------------------------
# make setup without root (grader/scripts/setup-user.sh) installs what this machine lacks into a user
# prefix: a venv (PYTHON), pandoc (bin/, first on PATH) and, where no CUDA toolkit was found, NVIDIA's
# wheels (cuda/, the CUDA_HOME where nvcc is neither on PATH nor in /usr/local/cuda).
## GEMMLAB_PREFIX=<dir> where make setup installs without root, and where make looks (default ~/.local/share/gemmlab)
GEMMLAB_PREFIX ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/gemmlab
export GEMMLAB_PREFIX
ifneq ($(wildcard $(GEMMLAB_PREFIX)/bin),)
export PATH := $(GEMMLAB_PREFIX)/bin:$(PATH)
endif
# CUDA_HOME=<toolkit> builds with another CUDA toolkit (e.g. CUDA 12 for sm_70: `make setup-cuda12`);
# nvcc, headers, libraries, the runtime path and the symbol check all come from it.
DEFAULT_CUDA_HOME := $(or $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)),$(if $(wildcard /usr/local/cuda/bin/nvcc),,$(patsubst %/bin/nvcc,%,$(wildcard $(GEMMLAB_PREFIX)/cuda/bin/nvcc))),/usr/local/cuda)
CUDA_HOME ?= $(DEFAULT_CUDA_HOME)
NVCC := $(CUDA_HOME)/bin/nvcc
CUDA_LIB ?= $(if $(wildcard $(CUDA_HOME)/lib64),$(CUDA_HOME)/lib64,$(CUDA_HOME)/lib)
# The toolkit's release ("13.0"), from its nvcc.
cuda_release = $(shell $(1) --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9.]*\),.*/\1/p')
CUDA_VERSION := $(call cuda_release,$(NVCC))
# The GPU's compute capability when there is one (e.g. "9.0" -> sm_90). Without one (a login node, a
# laptop) the course's GPU, CONFIG's [cluster] arch (written arch = "sm_80"), so that make, make sass
# and make resources show the machine code of the GPUs that grade; sm_90 where the course names none.
GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '.[:space:]')
COURSE_ARCH := $(shell sed -n '/^\[cluster\]/,/^\[/s/^[[:space:]]*arch[[:space:]]*=[[:space:]]*"\(sm_[0-9]*[a-z]*\)".*/\1/p' $(CONFIG) 2>/dev/null | head -n1)
ARCH ?= $(or $(if $(GPU_CC),sm_$(GPU_CC)),$(COURSE_ARCH),sm_90)
# The architectures the kit supports, per toolkit: `make arch-matrix` compiles every .cu file for each
# (grader/scripts/arch_matrix.py). CUDA 13 dropped sm_70 (Volta): that takes a CUDA 12 toolkit.
ARCHS_CUDA13 := sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120
ARCHS_CUDA12 := sm_70 sm_80
# The nvcc target of an architecture. Hopper builds for sm_90a, its architecture-specific target: the
# same machine code as sm_90 for every kernel that runs on both (checked on the reference), plus the
# instructions only Hopper has (wgmma, setmaxnreg), which the tensor stage's reference uses.
arch_flags = $(if $(filter sm_90 sm_90a,$(1)),-gencode arch=compute_90a$(comma)code=sm_90a,-arch=$(1))
ARCH_FLAGS := $(call arch_flags,$(ARCH))
# Where `make setup-cuda12` installs CUDA 12 (grader/scripts/setup-cuda12.sh says why there).
CUDA12_HOME ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/gemmlab/cuda-12.5
CUDA12_STATIC ?=
CUDA_MAJOR := $(firstword $(subst ., ,$(CUDA_VERSION)))
ifneq ($(filter sm_70 sm_72,$(ARCH)),)
ifneq ($(filter-out 1 2 3 4 5 6 7 8 9 10 11 12,$(CUDA_MAJOR)),)
$(error ARCH=$(ARCH) needs CUDA 12: CUDA $(CUDA_VERSION) ($(NVCC)) has dropped Volta (sm_70, sm_72). \
  Install CUDA 12 once with `make setup-cuda12`, then build with `make CUDA_HOME=$(CUDA12_HOME) ARCH=$(ARCH)`)
endif
endif
# The CUDA libraries a build links. shared (the default): the toolkit's libcublas, libcurand and
# libcudart, found at run time in CUDA_LIB. pruned: a build that carries its own, for a machine that
# has another CUDA (or none) beside its driver: cuBLAS, cuBLASLt and cuRAND linked from the toolkit's
# static archives into one library of the build's own, their device code cut to the GPUs of
# CUDA_LIBS_ARCHS (grader/scripts/prune_cuda_libs.py), and a copy of the CUDA runtime, both in
# $(BUILD)/cuda-libs, where every binary finds them ($ORIGIN/../cuda-libs): the build directory runs
# wherever it is copied. It needs the static archives (CUDA 12: make setup-cuda12 CUDA12_STATIC=1).
CUDA_LIBS ?= shared
CUDA_LIBS_ARCHS ?= $(ARCH)
ifeq ($(filter shared pruned,$(CUDA_LIBS)),)
$(error CUDA_LIBS=$(CUDA_LIBS): say shared (the toolkit's libraries, the default) or pruned (the build's own))
endif
LIBS_TAG := $(if $(filter pruned,$(CUDA_LIBS)),-pruned-$(subst $(space),+,$(strip $(CUDA_LIBS_ARCHS))))
# Objects of two toolkits never meet: builds with the toolkit the Makefile finds by itself go to
# build/<arch>, builds with a CUDA_HOME of another release to build/<arch>-cuda<release>; a pruned build
# adds the GPUs its libraries serve (build/sm_70-cuda12.5-pruned-sm_90).
ifeq ($(CUDA_VERSION),)
ifneq ($(origin CUDA_HOME),file)
$(error CUDA_HOME=$(CUDA_HOME) holds no working nvcc ($(NVCC)); point it at a CUDA toolkit (the directory above bin/nvcc))
endif
endif
TOOLKIT_TAG := $(if $(filter $(CUDA_VERSION),$(call cuda_release,$(DEFAULT_CUDA_HOME)/bin/nvcc)),,-cuda$(CUDA_VERSION))
# Scripts need a Python 3.11+ (tomllib); plots need matplotlib. Prefer one that has both: the user
# prefix's venv where make setup made one.
PYTHON ?= $(shell for p in $(GEMMLAB_PREFIX)/venv/bin/python /usr/bin/python3 python3; do $$p -c 'import tomllib, matplotlib' >/dev/null 2>&1 && { command -v $$p; exit; }; done; command -v python3)
# The course's srun line for the hints above, read where it can be printed: a command that needs a GPU
# (the grader prints it when it sees none: on a machine without one, or where CUDA_VISIBLE_DEVICES
# hides them all).
GPU_GOALS := check bench grade sanitize profile report
ifneq ($(filter $(GPU_GOALS),$(MAKECMDGOALS)),)
export GEMMLAB_SRUN := $(shell $(PYTHON) cluster/gemmlab_cluster.py --config $(CONFIG) hint 2>/dev/null)
endif

# A compiler cache where one is installed (`make setup` installs ccache): the grader's and the
# reference's objects are compiled once per content, whichever build directory asks for them (the
# tests, the handout's check and the cluster's trusted build each build the grader again). Paths are
# taken relative to the tree, so another checkout of the same sources hits too. CCACHE= turns it off.
CCACHE ?= $(shell command -v ccache 2>/dev/null)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

# ---- where builds go: one directory per architecture and per submission, so builds never clash ---
BUILD ?= build/$(ARCH)$(TOOLKIT_TAG)$(LIBS_TAG)
SUB_DIR := $(abspath $(SUBMISSION))
SUB_NAME := $(notdir $(SUB_DIR))
SUB_BUILD := $(BUILD)/sub-$(SUB_NAME)-$(firstword $(shell printf '%s' '$(SUB_DIR)' | cksum))
GRADER := $(SUB_BUILD)/gemmlab
STAGE_RUNNER := $(SUB_BUILD)/gemmlab-stages
RESULTS ?= results/$(SUB_NAME)

# ---- what make prints: V=1 shows every command (as the Linux kernel's make does) ----------------
# By default each compile and link is one short line ("  NVCC    student/tiled.cu"), and the build of
# the submission ends with one verdict per stage file; the stage files' full commands and compiler
# output are kept in $(SUB_BUILD)/build.log, which the verdicts name.
V ?=
V_ON := $(filter 1,$(V))
Q := $(if $(V_ON),,@)
quiet = $(if $(V_ON),,@printf '  %-7s %s\n' '$(1)' '$(2)';)

# ---- flags ---------------------------------------------------------------------------------------
# Grader code sees its own sources; stage files (student/, reference/, any submission) see the stage
# API only (grader/include): nothing of the grader's internals can even be named from a stage.
# The header-only libraries the grader builds with (grader/scripts/header_libs.py lists them) come from
# the first of these that has them all: SYSTEM_INCLUDE (make setup installs Debian's packages there),
# a handout's grader/third_party/include (make handout copies them in, with their licences), the user
# prefix's include/ (make setup without root unpacks Debian's packages there). The system's need no
# option: the same command as the instructor's build, so the compiler cache serves both. Where none has
# them all (CPATH may), the grader's first compile asks the compiler, and says what to do if it cannot.
SYSTEM_INCLUDE ?= /usr/include
HEADER_LIBS := $(shell $(PYTHON) grader/scripts/header_libs.py list 2>/dev/null | cut -f1)
HEADER_DIR := $(firstword $(foreach d,$(SYSTEM_INCLUDE) grader/third_party/include $(GEMMLAB_PREFIX)/include,$(if $(filter $(words $(HEADER_LIBS)),$(words $(wildcard $(addprefix $(d)/,$(HEADER_LIBS))))),$(d))))
THIRD_PARTY_INCLUDE := $(if $(filter-out $(SYSTEM_INCLUDE),$(HEADER_DIR)),-isystem $(HEADER_DIR))
GRADER_INCLUDES := -Igrader/include -Igrader/src $(THIRD_PARTY_INCLUDE)
STAGE_INCLUDES := -Igrader/include
WARN := -Wall -Wextra
# HOST_DEBUG: the grader's host code carries line tables (-g1: a crash's backtrace, a profile, name
# the file and line) and compiles in two thirds of the time full debug information takes;
# make HOST_DEBUG=-g gives a debugger its variables too.
HOST_DEBUG ?= -g1
# HOST_TEST_OPT: the unit tests' own files (tests/host, tests/gpu) are compiled without optimization
# (after CXXFLAGS): they run in seconds either way and compile in two thirds of the time; the grader
# code they test keeps -O2.
HOST_TEST_OPT ?= -O0
CXXFLAGS := -std=c++17 -O2 $(HOST_DEBUG) $(WARN) $(GRADER_INCLUDES) -isystem $(CUDA_HOME)/include -MMD -MP
# NVCC_OPTS: nvcc's options for every architecture (make arch-matrix compiles with them too).
NVCC_OPTS := -std=c++17 -O3 -lineinfo -Xcompiler -Wall,-Wextra
# WERROR=1: warnings are errors — in the submission's stage files, which are the student's to fix (the
# grader and the reference are not, and compiling them again would cost minutes); make arch-matrix
# WERROR=1 holds every file of the kit to it.
NVCC_WERROR := $(if $(WERROR),-Werror all-warnings)
NVCC_BASE := $(NVCC_OPTS) $(ARCH_FLAGS) -MMD -MP
NVCCFLAGS := $(NVCC_BASE) $(GRADER_INCLUDES)
# Stage files become a shared library (position-independent code) of the submission.
STAGE_NVCCFLAGS := $(NVCC_BASE) $(STAGE_INCLUDES) -Xcompiler -fPIC
# REF_PTX=1 (the default): the reference's objects carry its PTX beside the machine code for ARCH (as
# -arch=sm_XX does), so that a build for an older arch runs on a newer GPU, the driver compiling the PTX:
# how the other archs are tested on one GPU (the developers' guide). REF_PTX= : machine code only, for a
# build that students can read (the cluster's trusted build, cluster/grading.py): PTX is the reference's
# code nearly as written. Hopper's sm_90a carries no PTX either way.
REF_PTX ?= 1
ref_arch_flags = $(if $(or $(REF_PTX),$(filter sm_90 sm_90a,$(1))),$(call arch_flags,$(1)),-gencode arch=compute_$(patsubst sm_%,%,$(1))$(comma)code=$(1))
REF_NVCCFLAGS := $(NVCC_OPTS) $(call ref_arch_flags,$(ARCH)) -MMD -MP $(STAGE_INCLUDES) -Xcompiler -fPIC
SUB_NVCCFLAGS := $(STAGE_NVCCFLAGS) $(NVCC_WERROR)
# One CUDA runtime for the grader and the submission's library: the shared one (the toolkit's, or in a
# pruned build its copy beside the build's own cuBLAS/cuRAND; CUDA_LIB_FILES is what the links wait for).
ifeq ($(CUDA_LIBS),pruned)
CUDA_LIBS_DIR := $(BUILD)/cuda-libs
CUDA_LIB_FILES := $(CUDA_LIBS_DIR)/libcublas-pruned.so
CUDART := -cudart shared -Xlinker -rpath,'$$ORIGIN/../cuda-libs'
LDLIBS := -L$(CUDA_LIBS_DIR) -lcublas-pruned -ldl -lpthread
else
CUDA_LIB_FILES :=
CUDART := -cudart shared -Xlinker -rpath,$(CUDA_LIB)
LDLIBS := -L$(CUDA_LIB) -lcublas -lcurand -ldl -lpthread
endif

# ---- a change of flags rebuilds what they compile (WERROR=1, NVCCFLAGS=..., another compiler) -----
# Each kind of object depends on a stamp file that holds the command it is compiled with. The stamp's
# rule runs when the file does not hold that command (stamp_stale) and rewrites it: then what it
# compiles is out of date and is compiled again; otherwise nothing happens. (cluster/grading.py writes
# the submission's stamp itself before it puts cached stage objects in place: make-vars.mk prints both.)
SUB_FLAGS = $(NVCC) $(SUB_NVCCFLAGS)$(if $(CONFINE), | confined to $(CONFINE))
REF_FLAGS = $(NVCC) $(REF_NVCCFLAGS)
GRADER_FLAGS = $(CXX) $(CXXFLAGS) | $(NVCC) $(NVCCFLAGS) | host tests: $(HOST_TEST_OPT)
SUB_FLAGS_STAMP = $(SUB_BUILD)/stage-flags
REF_FLAGS_STAMP = $(BUILD)/reference/stage-flags
GRADER_FLAGS_STAMP = $(GRADER_BUILD)/grader-flags
# $(call write_if_changed,<text>,<what compiles again>)
write_if_changed = @mkdir -p $(@D); if [ "$$(cat $@ 2>/dev/null)" != '$(1)' ]; then \
    $(if $(wildcard $@),printf '  %-7s %s\n' FLAGS 'changed: $(2) compile again';) printf '%s\n' '$(1)' > $@; fi
.PHONY: FORCE
FORCE:
# $(call stamp_stale,<stamp>,<text>): FORCE where the stamp does not hold <text> (missing, or another
# command), nothing where it does. A current stamp runs no recipe: a recipe that ran every time held
# back every object behind it, and make -j then started them in the order its next pass came to them
# (the build's slowest compiles last, on many cores the end of its critical path).
same = $(and $(findstring x$(1)x,x$(2)x),$(findstring x$(2)x,x$(1)x))
stamp_stale = $(if $(call same,$(file <$(1)),$(2)),,FORCE)

# ---- the grader: three folders, three libraries (docs/ARCHITECTURE.md, "The parts") --------------
#   grader/src/judge   `gemmlab`, the judge: plans, owns every operand, answer and clock in a CUDA
#                      context of its own, starts runners, scores, writes results; never loads
#                      submission code
#   grader/src/runner  what runs beside the code it calls: gemmlab-stages (the submission's stages) and
#                      gemmlab-baselines (the reference, cuBLAS): map the judge's buffers, call, report
#   grader/src/common  what both share: the vocabulary (precisions, shapes, dispositions), shapes, statistics, the messages between them
JUDGE_MAINS := grader/src/judge/main.cpp grader/src/judge/registry_names.cpp grader/src/judge/config_main.cpp
RUNNER_MAINS := grader/src/runner/submission_main.cpp grader/src/runner/baselines_main.cu \
                grader/src/runner/registry.cpp grader/src/runner/submission_exports.cpp \
                grader/src/runner/submission_library.cpp
define side_objects
$(patsubst grader/src/%.cpp,$(GRADER_BUILD)/%.o,$(filter-out $(2),$(wildcard grader/src/$(1)/*.cpp))) \
$(patsubst grader/src/%.cu,$(GRADER_BUILD)/%.cu.o,$(filter-out $(2),$(wildcard grader/src/$(1)/*.cu)))
endef
# Where the grader's objects go: one per architecture, shared by every submission (the cluster
# points it at a trusted prebuilt copy).
GRADER_BUILD ?= $(BUILD)/grader
COMMON_LIB := $(GRADER_BUILD)/libgemmlab_common.a
JUDGE_LIB := $(GRADER_BUILD)/libgemmlab_judge.a
RUNNER_LIB := $(GRADER_BUILD)/libgemmlab_runner.a
GRADER_LIBS := $(JUDGE_LIB) $(RUNNER_LIB) $(COMMON_LIB)

$(GRADER_FLAGS_STAMP): $(call stamp_stale,$(GRADER_FLAGS_STAMP),$(GRADER_FLAGS))
	$(if $(HEADER_DIR),,@$(PYTHON) grader/scripts/header_libs.py check --prefix "$(GEMMLAB_PREFIX)" -- $(CXX) $(GRADER_INCLUDES))
	$(call write_if_changed,$(GRADER_FLAGS),the grader)
$(GRADER_BUILD)/%.o: grader/src/%.cpp $(GRADER_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CXX,$<)$(CCACHE) $(CXX) $(CXXFLAGS) -c $< -o $@
$(GRADER_BUILD)/%.cu.o: grader/src/%.cu $(GRADER_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,NVCC,$<)$(CCACHE) $(NVCC) $(NVCCFLAGS) -c $< -o $@
$(COMMON_LIB): $(call side_objects,common,)
$(JUDGE_LIB): $(call side_objects,judge,$(JUDGE_MAINS))
$(RUNNER_LIB): $(call side_objects,runner,$(RUNNER_MAINS))
$(GRADER_LIBS):
	@rm -f $@
	$(call quiet,AR,$@)ar rcs $@ $^

# ---- the reference side: built from reference/*.cu, or shipped compiled in a handout ------------
REF_SOURCES := $(wildcard reference/*.cu)
ifneq ($(REF_SOURCES),)
REF_LIB := $(BUILD)/reference/libgemmlab_reference.a
REF_OBJ := $(REF_SOURCES:reference/%.cu=$(BUILD)/reference/%.o) $(BUILD)/reference/registry.o
$(REF_FLAGS_STAMP): $(call stamp_stale,$(REF_FLAGS_STAMP),$(REF_FLAGS))
	$(call write_if_changed,$(REF_FLAGS),the reference)
$(BUILD)/reference/%.o: reference/%.cu $(REF_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,NVCC,$<)$(CCACHE) $(NVCC) $(REF_NVCCFLAGS) -DGEMMLAB_NS=reference -c $< -o $@
$(BUILD)/reference/registry.o: grader/src/runner/registry.cpp $(GRADER_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CXX,$<)$(CCACHE) $(CXX) $(CXXFLAGS) -DGEMMLAB_NS=reference -c $< -o $@
$(REF_LIB): $(REF_OBJ)
	@rm -f $@
	$(call quiet,AR,$@)ar rcs $@ $^
else
# A handout: the reference ships compiled (make handout builds it; docs/handout.md says how).
REF_LIB := reference/lib/libgemmlab_reference.a
$(REF_LIB):
	@echo "$(REF_LIB) is missing: this tree has neither reference/*.cu nor the compiled reference." >&2
	@echo "Unpack the handout again (it ships the library), or ask your instructor." >&2
	@exit 1
endif

# ---- the submission side: <SUBMISSION>/*.cu, built into one shared library per stage ------------
SUB_SOURCES := $(wildcard $(SUB_DIR)/*.cu)
SUB_STAGE_OBJ := $(SUB_SOURCES:$(SUB_DIR)/%.cu=$(SUB_BUILD)/stages/%.o)
# One library per stage of the registry (gemmlab/stages.h), whatever files the submission has: a
# stage whose file is missing or refused gets the registry alone, and is `rejected`.
STAGE_NAMES := $(shell $(PYTHON) grader/scripts/registry.py --stage-names)
SUB_LIBRARIES := $(patsubst %,$(SUB_BUILD)/libgemmlab-submission-%.so,$(STAGE_NAMES))
# Stage objects compiled before from the same bytes with the same command are reused
# (grader/scripts/object_cache.py: the tests and the handout build many submissions that share
# most files). OBJECT_CACHE= turns it off.
OBJECT_CACHE ?= build/object-cache
STAGE_API := $(wildcard grader/include/gemmlab/*.h)
#
# A stage file that does not compile costs only its own stages: grader/scripts/compile_stage.py shows
# the compiler's messages and keeps the command and its output in $@.log; when the compiler refuses
# the file it writes $@.failed (the first error, file:line) instead of $@ and the build goes on. The
# symbol check records such a file as refused ("does not compile"), so its stages are `rejected` and
# every other stage builds, checks and scores. (With no object, the rule runs again on the next make:
# the errors are shown until the file is fixed.)
#
# CONFINE=<dir>:<dir>... (what the cluster passes when it grades: cluster/grading.py) compiles each
# stage file in a Landlock sandbox (grader/scripts/confine.py): it may read only these directories
# and the system compiler's own files, and write only its object's directory, within CONFINE_LIMITS
# (CPU seconds:wall seconds:MiB of address space:MiB of the largest file[:the time the hand-in's compiles
# end together]; the cluster passes course.toml's [cells] compile_*).
# Empty (the default): not confined, as `make check` compiles.
CONFINE ?=
CONFINE_LIMITS ?=
COMPILE_STAGE = $(PYTHON) grader/scripts/compile_stage.py --source $< --object $@ $(if $(V_ON),--verbose) \
    $(if $(CONFINE),--confine '$(CONFINE)' --limits '$(CONFINE_LIMITS)') \
    $(if $(OBJECT_CACHE),--cache $(OBJECT_CACHE) --depends $(STAGE_API) $(wildcard $(SUB_DIR)/*.h)) --
$(SUB_FLAGS_STAMP): $(call stamp_stale,$(SUB_FLAGS_STAMP),$(SUB_FLAGS))
	$(call write_if_changed,$(SUB_FLAGS),the stage files)
$(SUB_BUILD)/stages/%.o: $(SUB_DIR)/%.cu $(SUB_FLAGS_STAMP)
	@mkdir -p $(@D)
	@$(COMPILE_STAGE) $(NVCC) $(SUB_NVCCFLAGS) -DGEMMLAB_NS=submission -c $< -o $@
SUB_EXPORTS := $(GRADER_BUILD)/submission_exports.o
$(SUB_EXPORTS): grader/src/runner/submission_exports.cpp $(GRADER_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CXX,$<)$(CCACHE) $(CXX) $(CXXFLAGS) -fPIC -fvisibility=hidden -DGEMMLAB_NS=submission -DGEMMLAB_WEAK_ENTRY_POINTS -c $< -o $@

# The symbol check (grader/scripts/scan_symbols.py, docs/student-guide.md "What a stage may call")
# reads the stage objects before anything is linked: what each may reference (an allowlist) and
# define (its own names only). A file it refuses is left out of the libraries, so its stages are
# `rejected` with the symbol named while every other stage still builds and runs. Each stage has a
# library of its own, libgemmlab-submission-<stage>.so: the trusted registry and exactly the files the
# check read for that stage — its stage file and the files it calls into by name — so no code that
# another stage's file holds can run where this stage runs, whatever a pointer or table says. Each is
# linked --no-undefined against the CUDA runtime and the C/C++ runtime only: a reference to anything
# else (the grader, cuBLAS, ...) could not link even if the check missed it. gemmlab-stages opens the
# library of the stage it runs with RTLD_LOCAL in its sandboxed runner processes
# (grader/src/runner/submission_library.h).
#
# The check also stands in for the link, file by file: a file that does not compile (its
# object's .failed verdict), references a name no linked file defines (a helper declared and never
# defined) or calls into a refused file is refused too, so the --no-undefined link below never fails
# because of one stage file. An entry point the registry needs and no file defines (a forgotten
# explicit instantiation) is weak: only that stage's runs in that precision are `rejected`, with the
# line to add. It prints one verdict per stage file (`make scan` prints them again each time) and
# gathers each compile's command and output into $(BUILD_LOG).
SYMBOLS := $(SUB_BUILD)/symbols.json
BUILD_LOG := $(SUB_BUILD)/build.log
PROTECTED := $(GRADER_BUILD)/protected-symbols.json
SCAN_ARGS := --protected $(PROTECTED) --registry $(SUB_EXPORTS) --source-dir $(SUB_DIR) --build-log $(BUILD_LOG)
$(PROTECTED): grader/scripts/scan_symbols.py
	@mkdir -p $(@D)
	$(Q)$(PYTHON) grader/scripts/scan_symbols.py --write-protected $@ --cuda-lib $(CUDA_LIB)
$(SYMBOLS): $(SUB_STAGE_OBJ) $(SUB_EXPORTS) $(PROTECTED) grader/scripts/scan_symbols.py grader/scripts/symbol_rules.py \
           grader/scripts/registry.py grader/scripts/kernel_names.py
	$(Q)$(PYTHON) grader/scripts/scan_symbols.py $(SCAN_ARGS) --out $@ $(if $(filter scan,$(MAKECMDGOALS)),--quiet) \
	    $(SUB_STAGE_OBJ)
$(SUB_BUILD)/libgemmlab-submission-%.so: $(SUB_EXPORTS) $(SYMBOLS) grader/src/runner/submission_library.map \
                                         | $(CUDA_LIB_FILES)
	$(call quiet,LINK,$@)$(NVCC) -shared $(ARCH_FLAGS) $(CUDART) -Xlinker --no-undefined \
	    -Xlinker --version-script=grader/src/runner/submission_library.map -o $@ $(SUB_EXPORTS) \
	    $$($(PYTHON) grader/scripts/scan_symbols.py --library $(SYMBOLS) $*)

# CUDA_LIBS=pruned: the build's own cuBLAS/cuRAND, serving exactly what the grader and the reference
# call, and its copy of the CUDA runtime (grader/scripts/prune_cuda_libs.py). Every binary is one folder
# below $(BUILD), as $(CUDA_LIBS_DIR) is: their run path $ORIGIN/../cuda-libs finds both.
ifeq ($(CUDA_LIBS),pruned)
$(CUDA_LIBS_DIR)/libcublas-pruned.so: $(GRADER_LIBS) $(REF_LIB) $(GRADER_BUILD)/judge/main.o $(GRADER_BUILD)/runner/baselines_main.cu.o \
                                      grader/scripts/prune_cuda_libs.py
	$(call quiet,PRUNE,$@ ($(CUDA_LIBS_ARCHS)))$(PYTHON) grader/scripts/prune_cuda_libs.py --cuda-home $(CUDA_HOME) \
	    --cuda-lib $(CUDA_LIB) --archs "$(CUDA_LIBS_ARCHS)" --out $(@D) --cxx "$(CXX)" $(filter-out %.py,$^)
endif

# Three binaries: gemmlab (judge/), the judge, which holds no submission code; gemmlab-stages, the
# runner of the submission's libraries, which links no GEMM library and no reference code; and
# gemmlab-baselines, the runner of the grader's own calls (the reference, cuBLAS). None of them holds
# submission code, so each is linked once per grader build, into $(BIN_DIR), and copied into every
# submission's build, beside its libraries (the judge starts the runners beside itself; gemmlab-stages
# opens the library of its stage beside itself).
BASELINE_RUNNER := $(SUB_BUILD)/gemmlab-baselines
BIN_DIR := $(GRADER_BUILD)/bin
JUDGE_BIN := $(BIN_DIR)/gemmlab
STAGE_RUNNER_BIN := $(BIN_DIR)/gemmlab-stages
BASELINE_RUNNER_BIN := $(BIN_DIR)/gemmlab-baselines
# What the binaries are linked with, besides their objects: another CUDA runtime choice links them again.
LINK_FLAGS = $(NVCC) $(ARCH_FLAGS) cuda-libs=$(or $(CUDA_LIBS),toolkit)
LINK_FLAGS_STAMP = $(BIN_DIR)/link-flags
$(LINK_FLAGS_STAMP): $(call stamp_stale,$(LINK_FLAGS_STAMP),$(LINK_FLAGS))
	$(call write_if_changed,$(LINK_FLAGS),the judge and its runners)
RUNNER_MAIN_OBJ := $(GRADER_BUILD)/runner/submission_main.o $(GRADER_BUILD)/runner/submission_library.o
BASELINE_MAIN_OBJ := $(GRADER_BUILD)/runner/baselines_main.cu.o
JUDGE_MAIN_OBJ := $(GRADER_BUILD)/judge/main.o $(GRADER_BUILD)/judge/registry_names.o
# gemmlab-config: the grader's reading of course.toml ([bench], [scoring]) on its own, with no GPU and
# no submission; the cluster tools run it on the login node before a sweep queues anything.
CONFIG_CHECKER := $(GRADER_BUILD)/gemmlab-config
$(CONFIG_CHECKER): $(GRADER_BUILD)/judge/config_main.o $(GRADER_BUILD)/judge/registry_names.o $(JUDGE_LIB) $(COMMON_LIB) $(REF_LIB) \
                   | $(CUDA_LIB_FILES)
	$(call quiet,LINK,$@)$(NVCC) $(ARCH_FLAGS) $(CUDART) -o $@ $^ $(LDLIBS)
# Everything of a build that does not depend on the submission (cluster/grading.py builds it once).
GRADER_TRUSTED := $(GRADER_LIBS) $(RUNNER_MAIN_OBJ) $(BASELINE_MAIN_OBJ) $(JUDGE_MAIN_OBJ) $(SUB_EXPORTS) $(PROTECTED) \
                  $(CONFIG_CHECKER) $(JUDGE_BIN) $(STAGE_RUNNER_BIN) $(BASELINE_RUNNER_BIN) $(LINK_FLAGS_STAMP)
$(STAGE_RUNNER_BIN): $(RUNNER_MAIN_OBJ) $(RUNNER_LIB) $(COMMON_LIB) $(LINK_FLAGS_STAMP) | $(CUDA_LIB_FILES)
	$(call quiet,LINK,$@)$(NVCC) $(ARCH_FLAGS) $(CUDART) -o $@ $(filter-out $(LINK_FLAGS_STAMP),$^) -ldl -lpthread
$(BASELINE_RUNNER_BIN): $(BASELINE_MAIN_OBJ) $(RUNNER_LIB) $(COMMON_LIB) $(REF_LIB) $(LINK_FLAGS_STAMP) | $(CUDA_LIB_FILES)
	$(call quiet,LINK,$@)$(NVCC) $(ARCH_FLAGS) $(CUDART) -o $@ $(filter-out $(LINK_FLAGS_STAMP),$^) $(LDLIBS)
$(JUDGE_BIN): $(JUDGE_MAIN_OBJ) $(JUDGE_LIB) $(COMMON_LIB) $(REF_LIB) $(LINK_FLAGS_STAMP) | $(CUDA_LIB_FILES)
	$(call quiet,LINK,$@)$(NVCC) $(ARCH_FLAGS) $(CUDART) -o $@ $(filter-out $(LINK_FLAGS_STAMP),$^) $(LDLIBS)
$(STAGE_RUNNER): $(STAGE_RUNNER_BIN) | $(SUB_LIBRARIES)
	@mkdir -p $(@D) && cp -f $< $@
$(BASELINE_RUNNER): $(BASELINE_RUNNER_BIN)
	@mkdir -p $(@D) && cp -f $< $@
$(GRADER): $(JUDGE_BIN) $(STAGE_RUNNER) $(BASELINE_RUNNER)
	@mkdir -p $(@D) && cp -f $< $@
	@echo "built $@, $(notdir $(STAGE_RUNNER)) and $(notdir $(BASELINE_RUNNER)) (submission: $(SUBMISSION), arch: $(ARCH))"

##@ Students
# `make` builds what the grader needs and ends with the stage files' verdicts; it fails (exit 2) when a
# stage file costs points — it does not compile, the symbol check leaves it out, or an explicit
# instantiation is gone — after building everything else, so that `make && make check ...` stops there.
# `make grader` builds the same and succeeds all the same: check, bench, grade and the tests build it,
# and check every stage that built (a refused file's stages are `rejected`).
.PHONY: all grader
all: $(GRADER)  ## build the grader with your stages; fails when a stage file does not compile or is refused (make check still checks the others)
	@$(PYTHON) grader/scripts/scan_symbols.py --strict $(SYMBOLS)
grader: $(GRADER)  ## the same build, which succeeds even when a stage file is refused (what check, bench and grade build)

# ---- student and TA commands ---------------------------------------------------------------------
STAGE_ARGS := $(if $(STAGE),--stage $(STAGE)) $(if $(PREC),--prec $(PREC)) $(if $(SEED),--seed $(SEED))

.PHONY: check
check: $(GRADER)  ## correctness of every stage (quick set; FULL=1 for the grading set)
	@mkdir -p $(RESULTS)
	$(Q)$(GRADER) check $(STAGE_ARGS) $(if $(FULL),--full) --json $(RESULTS)/check.json

.PHONY: sanitize
# The GPU is asked for first: on a machine without one, that is what to fix, not compute-sanitizer.
sanitize: $(GRADER)  ## one small case under compute-sanitizer memcheck and racecheck (STAGE= required)
	@test -n "$(STAGE)" || { echo "make sanitize needs STAGE=<stage>, e.g. make sanitize STAGE=tiled/16 PREC=float"; exit 2; }
	@$(GRADER) gpu --for sanitize
	@command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer is not on PATH (it ships with the CUDA toolkit: $(CUDA_HOME)/bin)"; exit 2; }
	compute-sanitizer --tool memcheck --error-exitcode 1 $(STAGE_RUNNER) run --stage $(STAGE) --prec $(or $(PREC),float) $(if $(SHAPE),--shape $(SHAPE)) $(if $(SEED),--seed $(SEED))
	compute-sanitizer --tool racecheck --error-exitcode 1 $(STAGE_RUNNER) run --stage $(STAGE) --prec $(or $(PREC),float) $(if $(SHAPE),--shape $(SHAPE)) $(if $(SEED),--seed $(SEED))

# Profiling (docs/student-tools.md, "Profiling your kernels"). make profile runs Nsight Compute on one
# call of a stage in the submission's runner, the command make sanitize runs (not sandboxed when started
# by hand: the judge applies the sandbox), and writes results/<submission>/profile/<stage>-<prec>.{json,md,csv};
# make report includes them. It checks for a GPU and ncu before it builds anything. make resources needs no
# GPU: ptxas's own report of every kernel (registers, static shared memory, stack, spills) for ARCH.
NCU ?= $(or $(shell command -v ncu 2>/dev/null),$(CUDA_HOME)/bin/ncu)
PROFILE_ARGS = --stage $(STAGE) --prec $(or $(PREC),float) $(if $(SHAPE),--shape $(SHAPE)) --config $(CONFIG) \
    --submission $(SUBMISSION) --out $(RESULTS)/profile --ncu $(NCU)
RESOURCE_SOURCES = $(patsubst $(CURDIR)/%,%,$(if $(STAGE),$(wildcard $(SUB_DIR)/$(firstword $(subst /, ,$(STAGE))).cu),$(SUB_SOURCES)))
.PHONY: profile resources
profile:  ## Nsight Compute on one call of a stage (STAGE= required; PREC=, SHAPE=, default the headline shape): results/<submission>/profile/
	@test -n "$(STAGE)" || { echo "make profile needs STAGE=<stage>, e.g. make profile STAGE=tiled/16 PREC=float"; exit 2; }
	@$(PYTHON) grader/scripts/ncu_profile.py --check --ncu $(NCU)
	@$(MAKE) --no-print-directory $(STAGE_RUNNER)
	$(Q)$(PYTHON) grader/scripts/ncu_profile.py --runner $(STAGE_RUNNER) $(PROFILE_ARGS)
resources:  ## registers, shared memory and spills of every kernel, from the compiler for ARCH (no GPU; STAGE= one file, STAGE=tiled/16 one variant)
	@test -n "$(RESOURCE_SOURCES)" || { echo "make resources: no stage file $(SUBMISSION)/$(firstword $(subst /, ,$(STAGE))).cu"; exit 2; }
	@$(PYTHON) grader/scripts/stage_resources.py --nvcc "$(NVCC)" --jobs $(shell nproc 2>/dev/null || echo 2) $(if $(STAGE),--stage $(STAGE)) \
	    --flags "$(NVCC_OPTS) $(ARCH_FLAGS) $(STAGE_INCLUDES) -DGEMMLAB_NS=submission" $(RESOURCE_SOURCES)

# make sass (grader/scripts/stage_sass.py; docs/student-tools.md "Reading the machine code") needs no GPU:
# the stage's object as the build makes it for ARCH, disassembled (cuobjdump -sass), with the vector loads,
# the FMAs of each loop, spills and tensor-core instructions counted, and the whole listing marked in
# results/<submission>/sass/. The reference's stage files are compiled once for the reference library:
# SUBMISSION=reference reads those objects. The same reading is the symbol check's tensor-core rule
# (scan_symbols.py): a stage that may not use the tensor cores is refused when its kernels do.
## CUOBJDUMP=<path> the disassembler of make sass and of the build's tensor-core rule (default: the toolkit's)
CUOBJDUMP ?=
SASS_STEM = $(firstword $(subst /, ,$(STAGE)))
SASS_VARIANT = $(word 2,$(subst /, ,$(STAGE)))
SASS_OBJECT = $(if $(and $(REF_SOURCES),$(filter $(CURDIR)/reference,$(SUB_DIR))),$(BUILD)/reference,$(SUB_BUILD)/stages)/$(SASS_STEM).o
SASS_TOOL_ARGS = --cuda-home $(CUDA_HOME) $(if $(CUOBJDUMP),--cuobjdump $(CUOBJDUMP))
# The rule's reading of each stage object is kept by content (the object's bytes, the rule's code, the
# disassembler) beside the objects of the object cache: the tests and a sweep build the same files
# again and again, and the disassembly is most of the check. SCAN_CACHE= reads every object afresh.
SCAN_CACHE ?= $(OBJECT_CACHE)
SCAN_ARGS += $(SASS_TOOL_ARGS) $(if $(SCAN_CACHE),--tensor-cache $(SCAN_CACHE))
$(SYMBOLS): grader/scripts/stage_sass.py
.PHONY: sass
sass: $(if $(and $(STAGE),$(wildcard $(SUB_DIR)/$(SASS_STEM).cu)),$(SASS_OBJECT))  ## the machine code (SASS) of a stage's kernels, counted and marked: vector loads, FMAs per loop, spills, tensor cores (STAGE= required, e.g. tiled or tiled/16; PREC=; no GPU)
	@test -n "$(STAGE)" || { echo "make sass needs STAGE=<stage>, e.g. make sass STAGE=tiled PREC=float"; exit 2; }
	@test -f "$(SUB_DIR)/$(SASS_STEM).cu" || { echo "make sass: no stage file $(SUBMISSION)/$(SASS_STEM).cu"; exit 2; }
	@$(PYTHON) grader/scripts/stage_sass.py --object $(SASS_OBJECT) --source $(SUBMISSION)/$(SASS_STEM).cu --stage $(STAGE) \
	    $(if $(PREC),--prec $(PREC)) $(SASS_TOOL_ARGS) --listing $(RESULTS)/sass/$(SASS_STEM)$(if $(SASS_VARIANT),-$(SASS_VARIANT))-$(ARCH).sass

# Each bench that succeeds adds a line to the tuning history, results/<submission>/bench-history.jsonl
# (grader/scripts/bench_history.py), labelled with TAG= (e.g. TAG=bm128-bk8); make report shows a
# stage's history with HISTORY=<stage> or course.toml [report] history.
TAG ?=
.PHONY: bench
bench: $(GRADER)  ## GFLOPS of every implemented stage, with naive and cuBLAS measured in the same run (TAG=label: kept in the tuning history)
	@mkdir -p $(RESULTS)
	$(Q)$(GRADER) bench $(STAGE_ARGS) $(if $(SHAPES),--shapes $(SHAPES)) --config $(CONFIG) --submission $(SUB_DIR) --json $(RESULTS)/bench.json
	$(Q)$(PYTHON) grader/scripts/bench_history.py append --bench $(RESULTS)/bench.json --submission $(SUB_DIR) \
	    --history $(RESULTS)/bench-history.jsonl $(if $(TAG),--tag '$(TAG)')

# The fingerprint of the stage files graded (grader/scripts/fingerprint.py), which results.json
# carries: the same hash the lab report, the tuning history and the drop box record.
FINGERPRINT := $(SUB_BUILD)/fingerprint.json
##@ Everyone
.PHONY: grade
grade: $(GRADER)  ## check (full set) + bench + score: results/<submission>/results.json and gradescope.json
	@mkdir -p $(RESULTS)
	$(Q)$(PYTHON) grader/scripts/fingerprint.py $(SUB_DIR) --json $(FINGERPRINT)
	$(Q)$(GRADER) grade --config $(CONFIG) --submission $(SUB_DIR) --fingerprint $(FINGERPRINT) --out $(RESULTS)

.PHONY: list rubric
list: $(GRADER)  ## the stage registry
	@$(GRADER) list
rubric: $(CONFIG_CHECKER)  ## the rubric as the grader reads it from the course's published course.toml (else CONFIG=): points, targets, shapes
	@config="$$($(PYTHON) cluster/gemmlab_cluster.py --config $(CONFIG) course-file)" && $(CONFIG_CHECKER) --config "$$config"

# ---- lab report (report/) ----------------------------------------------------------------------
# make report measures on the GPU (report/build/results) and renders where pandoc is installed;
# make report-pdf renders those saved results on any machine with pandoc (no GPU, no grader build).
RERUN ?= 1
# HISTORY=reuse[,tiled]: the stages whose tuning history (make bench TAG=...) the report shows.
HISTORY ?=
REPORT_HISTORY := $(if $(HISTORY),--history $(HISTORY))
##@ Students
.PHONY: report report-pdf report-demo
report: $(GRADER)  ## the lab report PDF, report/report.pdf, from your own measurements (RERUN=0 reuses fresh ones)
	$(Q)$(PYTHON) report/make_report.py --grader $(GRADER) --config $(CONFIG) --results $(RESULTS) --submission $(SUBMISSION) $(if $(filter 0,$(RERUN)),--reuse) $(REPORT_HISTORY)
report-pdf:  ## render report/report.pdf from the measurements make report saved (no GPU needed)
	$(PYTHON) report/make_report.py --render-only --config $(CONFIG) --results $(RESULTS) $(REPORT_HISTORY)
report-demo:  ## the example report from the instructor's example data, "EXAMPLE DATA" on every page: report/build/demo/example-report.pdf
	$(PYTHON) report/make_report.py --demo --config $(CONFIG)

# ---- cluster (cluster/) -------------------------------------------------------------------------
CLUSTER := $(PYTHON) cluster/gemmlab_cluster.py --config $(CONFIG)
# WHY= (a staff decision's reason) reaches the tool through the environment, so any text is safe in it.
export WHY
.PHONY: submit status hint results requeue withdraw regrade sweep validate sweep-status gradebook-export similarity leaderboard \
        publish-course decisions accept override settle enter publish-grades rehearsal
submit:  ## hand in student/ (and report/report.pdf) and queue its grading
	@$(CLUSTER) submit --student-dir $(SUBMISSION)
status:  ## your attempts and their grading jobs
	@$(CLUSTER) status
hint:  ## the srun line that runs a command on a GPU node of the course's cluster: put it before the command (e.g. `$(make -s hint) make check`)
	@$(CLUSTER) hint
results:  ## the results of your latest graded attempt
	@$(CLUSTER) results
requeue:  ## queue the grading of your attempt ATTEMPT=N again (where make submit could not queue it)
	@test -n "$(ATTEMPT)" || { echo "make requeue: say which attempt, e.g. make requeue ATTEMPT=3 (make status lists them)" >&2; exit 2; }
	@$(CLUSTER) requeue --attempt $(ATTEMPT)
withdraw:  ## take back your attempt ATTEMPT=N: no sweep counts it, an earlier one does (UNDO=1 counts it again)
	@test -n "$(ATTEMPT)" || { echo "make withdraw: say which attempt, e.g. make withdraw ATTEMPT=3 (make status lists them)" >&2; exit 2; }
	@$(CLUSTER) withdraw --attempt $(ATTEMPT) $(if $(UNDO),--undo) $(if $(STUDENT),--user "$(STUDENT)" --why "$$WHY")
##@ Instructors & TAs
publish-course:  ## (instructors) validate course.toml and the class files, then publish them: what hand-ins, grading jobs and sweeps use from then on (WHY=note)
	$(CLUSTER) publish --why "$$WHY"
decisions:  ## (instructors) the decision log: who decided what, when and why (STUDENT=one student's)
	$(CLUSTER) decisions $(if $(STUDENT),--user "$(STUDENT)")
accept:  ## (instructors) STUDENT's attempt ATTEMPT=N (E1: one the staff entered) counts, whatever the late policy says (WHY=...)
	$(CLUSTER) accept --user "$(STUDENT)" --attempt "$(ATTEMPT)" --why "$$WHY"
override:  ## (instructors) STUDENT's final score FINAL=points by hand, CLEAR=1 to compute it again (WHY=...)
	$(CLUSTER) override --user "$(STUDENT)" $(if $(FINAL),--final $(FINAL)) $(if $(CLEAR),--clear) --why "$$WHY"
settle:  ## (instructors) settle STUDENT's needs_review: ATTEMPT=N counts, or ZERO=1 / FINAL=points (WHY=...)
	$(CLUSTER) settle --user "$(STUDENT)" $(if $(ATTEMPT),--attempt "$(ATTEMPT)") $(if $(ZERO),--zero) $(if $(FINAL),--final $(FINAL)) --why "$$WHY"
enter:  ## (instructors) enter STUDENT's hand-in from FROM=<dir like student/>, handed in AT=<date-time with zone> (WHY=...)
	$(CLUSTER) enter --user "$(STUDENT)" --student-dir "$(FROM)" --submitted-at "$(AT)" --why "$$WHY"
publish-grades:  ## (instructors) each student sees their official grade of a sweep with make results (SWEEP=name)
	$(CLUSTER) publish-grades $(if $(SWEEP),--name $(SWEEP)) --why "$$WHY"
rehearsal:  ## (instructors) the dry run before a term: a class of seven through a term, compared with the gradebook it must produce
	$(PYTHON) tests/semester_rehearsal.py
sweep:  ## (instructors) grade the whole class on Slurm and build the gradebook (SWEEP=name, STUDENT=one to regrade, FORCE=1 before the deadline, LOCAL=1 on this machine)
	$(CLUSTER) sweep $(if $(SWEEP),--name $(SWEEP)) $(if $(STUDENT),--student $(STUDENT) --force) $(if $(FORCE),--before-deadline) $(if $(LOCAL),--local)
regrade:  ## (instructors) grade STUDENT's attempt ATTEMPT=N again for feedback, as a job of yours (its script from the trusted template)
	$(CLUSTER) regrade --user "$(STUDENT)" --attempt "$(ATTEMPT)"
validate:  ## (instructors) check course.toml, the roster and the class files as every tool reads them
	$(CLUSTER) validate
sweep-status:  ## (instructors) progress of the latest sweep (SWEEP=name for another; FOLLOW=1 until it ends)
	$(CLUSTER) sweep-status $(if $(SWEEP),--name $(SWEEP)) $(if $(FOLLOW),--follow)
# Around the grades (docs/instructor-guide.md): nothing here grades; each reads a sweep's files.
gradebook-export:  ## (instructors) rebuild a sweep's gradebook and its LMS files, export/canvas.csv and grades.csv (SWEEP=name)
	$(CLUSTER) gradebook $(if $(SWEEP),--name $(SWEEP))
similarity:  ## (instructors) groups of similar hand-ins per stage, the reference and [similarity] archive included: similarity/index.html (SWEEP=name)
	$(CLUSTER) similarity $(if $(SWEEP),--name $(SWEEP))
leaderboard:  ## (instructors) the opt-in class leaderboard of a sweep: leaderboard/ (SWEEP=name)
	$(CLUSTER) leaderboard $(if $(SWEEP),--name $(SWEEP))

# ---- handout (grader/scripts/handout.py; docs/handout.md) ----------------------------------------
# Runs in the instructor repository only: a handout has no reference sources and no handout.py.
# DIST= overrides course.toml [handout] dist (the tests build into a temporary directory).
DIST ?=
HANDOUT := $(PYTHON) grader/scripts/handout.py
HANDOUT_ARGS := --config $(CONFIG) $(if $(DIST),--dist $(DIST))
HANDOUT_CHECK_ARGS := $(HANDOUT_ARGS) $(if $(HANDOUT_NO_GPU),--no-gpu) $(if $(HANDOUT_TESTED_HERE),--tested-here)
.PHONY: handout handout-check handout-script
handout-script:
	@test -f grader/scripts/handout.py || { echo "make handout runs in the instructor repository; this tree is a handout"; exit 2; }
handout: handout-script  ## (instructors) dist/<course>-handout/ and its tarball: stubs, grader, compiled reference
	$(HANDOUT) build $(HANDOUT_ARGS) --object-cache "$(OBJECT_CACHE)" --ccache "$(CCACHE)"
handout-check: handout  ## (instructors) unpack the handout afresh and prove it builds, tests and hides solutions
	$(HANDOUT) check $(HANDOUT_CHECK_ARGS) --object-cache "$(OBJECT_CACHE)"

# ---- tests ------------------------------------------------------------------------------------------
HOST_TEST_SRC := $(wildcard tests/host/*.cpp)
HOST_TESTS := $(BUILD)/tests/host_tests
GPU_TEST_SRC := $(wildcard tests/gpu/*.cpp)
GPU_TESTS := $(SUB_BUILD)/gpu_tests

$(BUILD)/tests/host/%.o: tests/host/%.cpp $(GRADER_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CXX,$<)$(CCACHE) $(CXX) $(CXXFLAGS) $(HOST_TEST_OPT) -c $< -o $@
# The host tests see the judge's registry (names only, as `gemmlab` does); the GPU tests drive the
# judge's engines, which start the runners built beside the grader.
$(HOST_TESTS): $(HOST_TEST_SRC:tests/host/%.cpp=$(BUILD)/tests/host/%.o) $(GRADER_BUILD)/judge/registry_names.o $(JUDGE_LIB) $(COMMON_LIB) $(REF_LIB) \
               | $(CUDA_LIB_FILES)
	$(call quiet,LINK,$@)$(NVCC) $(ARCH_FLAGS) $(CUDART) -o $@ $^ $(LDLIBS)
# The GPU tests hold no device code of their own (they drive the judge's engines): host files, as the
# host tests are compiled (into gpu-tests/: tests/gpu/ of an older build holds objects of .cu files).
$(SUB_BUILD)/gpu-tests/%.o: tests/gpu/%.cpp $(GRADER_FLAGS_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CXX,$<)$(CCACHE) $(CXX) $(CXXFLAGS) $(HOST_TEST_OPT) -c $< -o $@
$(GPU_TESTS): $(GPU_TEST_SRC:tests/gpu/%.cpp=$(SUB_BUILD)/gpu-tests/%.o) $(GRADER_BUILD)/judge/registry_names.o $(JUDGE_LIB) $(COMMON_LIB) $(REF_LIB) | $(GRADER) $(CUDA_LIB_FILES)
	$(call quiet,LINK,$@)$(NVCC) $(ARCH_FLAGS) $(CUDART) -o $@ $^ $(LDLIBS)

##@ Everyone
.PHONY: test-build test
# In two steps: the flag stamps first, then what they stand behind, which make -j starts in the order
# it comes to them: the reference's and the runners' device code first (the longest compiles: on many
# cores the build's critical path), then the judge, then the unit tests.
FLAG_STAMPS = $(GRADER_FLAGS_STAMP) $(if $(REF_SOURCES),$(REF_FLAGS_STAMP)) $(SUB_FLAGS_STAMP) $(LINK_FLAGS_STAMP)
test-build:
	@$(MAKE) --no-print-directory IN_TEST_BUILD=1 test-build-stamps
	@$(MAKE) --no-print-directory IN_TEST_BUILD=1 test-build-binaries
.PHONY: test-build-stamps test-build-binaries
test-build-stamps: $(FLAG_STAMPS)
	@:
test-build-binaries: $(REF_LIB) $(RUNNER_LIB) $(GRADER) $(HOST_TESTS) $(GPU_TESTS)
	@:
test: test-build  ## every test: host (doctest), GPU (skipped without a GPU), scripts (pytest)
	$(PYTHON) tests/run_tests.py --host $(HOST_TESTS) --gpu $(GPU_TESTS) --grader $(GRADER) --python $(PYTHON)

# ---- every architecture (grader/scripts/arch_matrix.py) ------------------------------------------
# Every .cu file of the kit compiled for each architecture of this toolkit's list, compile only and
# through ccache; then, where CUDA 12 is installed (make setup-cuda12), a linked build of the grader for
# each architecture of ARCHS_CUDA12. The test submissions' files (tests/broken, tests/gallery) without
# architecture-dependent device code compile for ARCH only, with the stage rule's own command and
# object cache (the tests build them so too); a kit file this build has compiled for ARCH (MATRIX_BUILT,
# up to date) is not compiled for ARCH again. MATRIX_PART=cuda13|cuda12 runs one part;
# MATRIX_ONLY=reference/,student/ only the files whose path holds one of those; MATRIX_JOBS=<n> compiles
# (default: one per core).
MATRIX_ARCHS := $(if $(filter 12,$(CUDA_MAJOR)),$(ARCHS_CUDA12),$(ARCHS_CUDA13))
# The kit files this build compiles for ARCH with the flags the matrix uses, and their objects: where
# an object is up to date (make test builds them all first), the matrix leaves ARCH out for that file.
MATRIX_BUILT := $(foreach f,$(wildcard grader/src/*/*.cu),$(f)=$(patsubst grader/src/%.cu,$(GRADER_BUILD)/%.cu.o,$(f))) \
    $(foreach f,$(REF_SOURCES),$(f)=$(BUILD)/reference/$(notdir $(f:.cu=.o))) \
    $(if $(filter $(CURDIR)/student,$(SUB_DIR)),$(foreach f,$(wildcard student/*.cu),$(f)=$(SUB_BUILD)/stages/$(notdir $(f:.cu=.o))))
MATRIX_PART ?= all
# The device code the matrix compiles for a file the build compiled (nvcc -fatbin, which ccache does not
# keep), kept by content in the user's cache as ccache keeps the rest: another clone reuses it.
MATRIX_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/gemmlab/arch-matrix
##@ Instructors & TAs
.PHONY: arch-matrix
arch-matrix:  ## compile every .cu file for every supported arch (cached); with CUDA 12 installed, build sm_70/sm_80 with it
	$(PYTHON) grader/scripts/arch_matrix.py --part $(MATRIX_PART) --nvcc "$(strip $(CCACHE) $(NVCC))" \
	    --nvcc-opts "$(NVCC_OPTS) $(NVCC_WERROR)" $(foreach a,$(MATRIX_ARCHS),--arch "$(a)=$(call arch_flags,$(a))") \
	    --out build/arch-matrix-cuda$(CUDA_VERSION) $(if $(MATRIX_ONLY),--only "$(MATRIX_ONLY)") $(if $(MATRIX_JOBS),--jobs $(MATRIX_JOBS)) \
	    --one-arch $(ARCH) --stage-compile "$(NVCC) $(STAGE_NVCCFLAGS)" --object-cache "$(OBJECT_CACHE)" --device-cache "$(MATRIX_CACHE)" --stage-api "$(STAGE_API)" \
	    --built "$(strip $(MATRIX_BUILT))" \
	    --cuda12-home "$(CUDA12_HOME)" --cuda12-archs "$(ARCHS_CUDA12)"

# ---- symbol check and the gallery of hostile submissions (docs/gallery.md) -----------------------
##@ Students
.PHONY: scan test-gallery
scan: $(SYMBOLS)  ## one verdict per stage file: compiles, links, calls only what a stage may (symbols.json)
	@$(PYTHON) grader/scripts/scan_symbols.py --verdicts $(SYMBOLS) --build-log $(BUILD_LOG)
##@ Instructors & TAs
GALLERY ?=
test-gallery:  ## (GPU) build, check and grade every tests/gallery entry against its expected.json
	$(PYTHON) tests/gallery/run_gallery.py --build build/gallery --arch $(ARCH) $(if $(GALLERY),--only $(GALLERY))

# fs_trace.so: which files CUDA needs when it will not start under the child sandbox (see the file).
FS_TRACE := build/tools/fs_trace.so
$(FS_TRACE): grader/tools/fs_trace.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -O2 -Wall -Wextra -o $@ $< -ldl
.PHONY: fs-trace
fs-trace: $(FS_TRACE)  ## (TAs) build/tools/fs_trace.so: logs the file accesses of a sandboxed child

# ---- set-up and housekeeping ---------------------------------------------------------------------
##@ Everyone
.PHONY: setup
## PLAN=1 make setup without root: print what it would install into GEMMLAB_PREFIX, install nothing
## CUDA_WHEELS=1|0 make setup without root: install NVIDIA's CUDA wheels even where a module of CUDA is offered (1), or never (0)
setup:  ## install what GEMM Lab needs: Debian packages (root or sudo), else what this machine lacks into GEMMLAB_PREFIX, from PyPI; names what is still missing (idempotent)
	GEMMLAB_SETUP_PLAN="$(PLAN)" GEMMLAB_CUDA_WHEELS="$(CUDA_WHEELS)" bash grader/scripts/setup.sh

.PHONY: setup-cuda12
setup-cuda12:  ## install CUDA 12 (for sm_70) in ~/.cache/gemmlab/cuda-12.5 (CUDA12_HOME= elsewhere; CUDA12_STATIC=1 adds the static archives; 1.3 GB download; idempotent)
	CUDA12_HOME="$(CUDA12_HOME)" CUDA12_STATIC="$(CUDA12_STATIC)" bash grader/scripts/setup-cuda12.sh

.PHONY: clean
clean:  ## remove build/ (results/ are kept)
	rm -rf build

.PHONY: help
HELP_TEXT = awk -v handout=$(if $(REF_SOURCES),0,1) -f grader/scripts/make_help.awk $(filter-out %.d,$(MAKEFILE_LIST))
help:  ## every target, by who runs it, and every variable
	@$(HELP_TEXT)

# A goal that is no target (make chek) is told the nearest ones make help lists (suggest_target.py), not
# make's bare "No rule to make target". .DEFAULT serves every file that no rule makes: one that exists
# (a source, the Makefile itself under make -B) is left as it is; a goal that does not is told the nearest
# target; a missing file that another target needs stays an error. A dependency list (.d) that another
# make removed between the find below and its reading (a build beside this one) is nothing to make.
.DEFAULT:
	$(if $(wildcard $@)$(filter %.d,$@),@:,$(if $(filter $@,$(MAKECMDGOALS)),$(error $(shell $(HELP_TEXT) | $(PYTHON) grader/scripts/suggest_target.py '$@')),$(error no rule makes '$@', a file that a target needs)))

-include $(shell find $(BUILD) -name "*.d" 2>/dev/null)
