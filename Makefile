# GEMM Lab — one Makefile for students, TAs and instructors. `make help` lists what it does.
#
# Students:     make check | make bench | make sanitize STAGE=tiled | make report | make submit
# Everyone:     make setup (once) | make test | make grade
# Instructors:  make SUBMISSION=reference grade | make handout | make sweep | make similarity |
#               make gradebook-export | make leaderboard
#
# Variables: SUBMISSION=<dir laid out like student/> (default student), STAGE=<stage or stage/variant>,
# PREC=float|double, FULL=1, SEED=<n>, SHAPE=MxNxK, SHAPES=MxNxK,..., ARCH=sm_XX (default: the GPU's,
# else sm_90), CONFIG=<course.toml>.

SHELL := /bin/bash
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
# Build on every core unless told otherwise (a -j on the command line wins).
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)

# ---- what to work on ---------------------------------------------------------------------------
SUBMISSION ?= student
CONFIG ?= course.toml
STAGE ?=
PREC ?=
SEED ?=
FULL ?=
SHAPE ?=
SHAPES ?=

# ---- toolchain ---------------------------------------------------------------------------------
CUDA_HOME ?= $(or $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)),/usr/local/cuda)
NVCC := $(CUDA_HOME)/bin/nvcc
# The GPU's compute capability when there is one (e.g. "9.0" -> sm_90), sm_90 otherwise.
GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '.[:space:]')
ARCH ?= $(if $(GPU_CC),sm_$(GPU_CC),sm_90)
# Scripts need a Python 3.11+ (tomllib); plots need matplotlib. Prefer one that has both.
PYTHON ?= $(shell for p in /usr/bin/python3 python3; do $$p -c 'import tomllib, matplotlib' >/dev/null 2>&1 && { command -v $$p; exit; }; done; command -v python3)

# ---- where builds go: one directory per architecture and per submission, so builds never clash ---
BUILD ?= build/$(ARCH)
SUB_DIR := $(abspath $(SUBMISSION))
SUB_NAME := $(notdir $(SUB_DIR))
SUB_BUILD := $(BUILD)/sub-$(SUB_NAME)-$(firstword $(shell printf '%s' '$(SUB_DIR)' | cksum))
GRADER := $(SUB_BUILD)/gemmlab
STAGE_RUNNER := $(SUB_BUILD)/gemmlab-stages
RESULTS ?= results/$(SUB_NAME)

# ---- flags ---------------------------------------------------------------------------------------
INCLUDES := -Igrader/include -Igrader/src
WARN := -Wall -Wextra
NVCC_WERROR := $(if $(WERROR),-Werror all-warnings)
CXX_WERROR := $(if $(WERROR),-Werror)
CXXFLAGS := -std=c++17 -O2 -g $(WARN) $(CXX_WERROR) $(INCLUDES) -isystem $(CUDA_HOME)/include -MMD -MP
NVCCFLAGS := -std=c++17 -O3 -lineinfo -arch=$(ARCH) $(INCLUDES) -Xcompiler -Wall,-Wextra $(NVCC_WERROR) -MMD -MP
LDLIBS := -L$(CUDA_HOME)/lib64 -lcublas -lcurand -lcudart -ldl -lpthread

# ---- the grader library: everything in grader/src except the per-side registries and main ---------
GRADER_CPP := $(filter-out grader/src/main.cpp grader/src/registry.cpp grader/src/parent_registry.cpp,$(wildcard grader/src/*.cpp))
GRADER_CU := $(wildcard grader/src/*.cu)
GRADER_OBJ := $(GRADER_CPP:grader/src/%.cpp=$(BUILD)/grader/%.o) $(GRADER_CU:grader/src/%.cu=$(BUILD)/grader/%.cu.o)
GRADER_LIB := $(BUILD)/grader/libgemmlab_grader.a

$(BUILD)/grader/%.o: grader/src/%.cpp
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -c $< -o $@
$(BUILD)/grader/%.cu.o: grader/src/%.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@
$(GRADER_LIB): $(GRADER_OBJ)
	@rm -f $@
	ar rcs $@ $^

# ---- the reference side: built from reference/*.cu, or shipped compiled in a handout ------------
REF_SOURCES := $(wildcard reference/*.cu)
ifneq ($(REF_SOURCES),)
REF_LIB := $(BUILD)/reference/libgemmlab_reference.a
REF_OBJ := $(REF_SOURCES:reference/%.cu=$(BUILD)/reference/%.o) $(BUILD)/reference/registry.o
$(BUILD)/reference/%.o: reference/%.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -DGEMMLAB_NS=reference -c $< -o $@
$(BUILD)/reference/registry.o: grader/src/registry.cpp
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -DGEMMLAB_NS=reference -c $< -o $@
$(REF_LIB): $(REF_OBJ)
	@rm -f $@
	ar rcs $@ $^
else
# A handout: the reference ships compiled (make handout builds it; docs/handout.md says how).
REF_LIB := reference/lib/libgemmlab_reference.a
$(REF_LIB):
	@echo "$(REF_LIB) is missing: this tree has neither reference/*.cu nor the compiled reference." >&2
	@echo "Unpack the handout again (it ships the library), or ask your instructor." >&2
	@exit 1
endif

# ---- the submission side: <SUBMISSION>/*.cu ------------------------------------------------------
SUB_SOURCES := $(wildcard $(SUB_DIR)/*.cu)
SUB_OBJ := $(SUB_SOURCES:$(SUB_DIR)/%.cu=$(SUB_BUILD)/stages/%.o) $(SUB_BUILD)/registry.o
$(SUB_BUILD)/stages/%.o: $(SUB_DIR)/%.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -DGEMMLAB_NS=submission -c $< -o $@
$(SUB_BUILD)/registry.o: grader/src/registry.cpp
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -DGEMMLAB_NS=submission -c $< -o $@
$(SUB_BUILD)/main.o: grader/src/main.cpp
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -c $< -o $@
$(SUB_BUILD)/parent_registry.o: grader/src/parent_registry.cpp
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -c $< -o $@

# Two binaries (grader/src/sides.h): gemmlab-stages holds the submission and runs its stages in
# sandboxed children; gemmlab, the parent that starts them and scores, holds no submission code,
# so none of it (static initializers included) runs outside the sandbox.
# The symbol scan (below) runs before the link: it names a missing explicit instantiation plainly
# and records the calls a stage may not make, which gemmlab grade reads from symbols.json.
$(STAGE_RUNNER): $(SUB_BUILD)/main.o $(SUB_OBJ) $(GRADER_LIB) $(REF_LIB) | $(SUB_BUILD)/symbols.json
	$(NVCC) -arch=$(ARCH) -o $@ $(SUB_BUILD)/main.o $(SUB_OBJ) $(GRADER_LIB) $(REF_LIB) $(LDLIBS)
$(GRADER): $(SUB_BUILD)/main.o $(SUB_BUILD)/parent_registry.o $(GRADER_LIB) $(REF_LIB) $(STAGE_RUNNER)
	$(NVCC) -arch=$(ARCH) -o $@ $(SUB_BUILD)/main.o $(SUB_BUILD)/parent_registry.o $(GRADER_LIB) $(REF_LIB) $(LDLIBS)
	@echo "built $@ and $(notdir $(STAGE_RUNNER)) (submission: $(SUBMISSION), arch: $(ARCH))"

.PHONY: all grader
all grader: $(GRADER)

# ---- student and TA commands ---------------------------------------------------------------------
STAGE_ARGS := $(if $(STAGE),--stage $(STAGE)) $(if $(PREC),--prec $(PREC)) $(if $(SEED),--seed $(SEED))

.PHONY: check
check: $(GRADER)  ## correctness of every stage (quick set; FULL=1 for the grading set)
	@mkdir -p $(RESULTS)
	$(GRADER) check $(STAGE_ARGS) $(if $(FULL),--full) --json $(RESULTS)/check.json

.PHONY: sanitize
sanitize: $(GRADER)  ## one small case under compute-sanitizer memcheck and racecheck (STAGE= required)
	@test -n "$(STAGE)" || { echo "make sanitize needs STAGE=<stage>, e.g. make sanitize STAGE=tiled/16 PREC=float"; exit 2; }
	@command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer is not on PATH (it ships with the CUDA toolkit: $(CUDA_HOME)/bin)"; exit 2; }
	compute-sanitizer --tool memcheck --error-exitcode 1 $(STAGE_RUNNER) run --stage $(STAGE) --prec $(or $(PREC),float) $(if $(SHAPE),--shape $(SHAPE)) $(if $(SEED),--seed $(SEED))
	compute-sanitizer --tool racecheck --error-exitcode 1 $(STAGE_RUNNER) run --stage $(STAGE) --prec $(or $(PREC),float) $(if $(SHAPE),--shape $(SHAPE)) $(if $(SEED),--seed $(SEED))

.PHONY: bench
bench: $(GRADER)  ## GFLOPS of every implemented stage, with naive and cuBLAS measured in the same run
	@mkdir -p $(RESULTS)
	$(GRADER) bench $(STAGE_ARGS) $(if $(SHAPES),--shapes $(SHAPES)) --config $(CONFIG) --submission $(SUB_DIR) --json $(RESULTS)/bench.json

.PHONY: grade
grade: $(GRADER)  ## check (full set) + bench + score: results/<submission>/results.json and gradescope.json
	@mkdir -p $(RESULTS)
	$(PYTHON) grader/scripts/scan_symbols.py --gate $(SUB_BUILD)/symbols.json
	$(GRADER) grade --config $(CONFIG) --submission $(SUB_DIR) --out $(RESULTS)

.PHONY: list
list: $(GRADER)  ## the stage registry
	@$(GRADER) list

# ---- lab report (report/) ----------------------------------------------------------------------
# make report measures on the GPU (report/build/results) and renders where pandoc is installed;
# make report-pdf renders those saved results on any machine with pandoc (no GPU, no grader build).
RERUN ?= 1
.PHONY: report report-pdf
report: $(GRADER)  ## the lab report PDF, report/report.pdf, from your own measurements (RERUN=0 reuses fresh ones)
	$(PYTHON) report/make_report.py --grader $(GRADER) --config $(CONFIG) --results $(RESULTS) --submission $(SUBMISSION) $(if $(filter 0,$(RERUN)),--reuse)
report-pdf:  ## render report/report.pdf from the measurements make report saved (no GPU needed)
	$(PYTHON) report/make_report.py --render-only --config $(CONFIG) --results $(RESULTS)

# ---- cluster (cluster/) -------------------------------------------------------------------------
CLUSTER := $(PYTHON) cluster/gemmlab_cluster.py --config $(CONFIG)
.PHONY: submit status results sweep sweep-status gradebook-export similarity leaderboard
submit:  ## hand in student/ (and report/report.pdf) and queue its grading
	$(CLUSTER) submit --student-dir $(SUBMISSION)
status:  ## your attempts and their grading jobs
	$(CLUSTER) status
results:  ## the results of your latest graded attempt
	$(CLUSTER) results
sweep:  ## (instructors) grade the whole class on Slurm and build the gradebook (SWEEP=name, STUDENT=one to regrade)
	$(CLUSTER) sweep $(if $(SWEEP),--name $(SWEEP)) $(if $(STUDENT),--student $(STUDENT) --force)
sweep-status:  ## (instructors) progress of the current sweep (SWEEP=name)
	$(CLUSTER) sweep-status $(if $(SWEEP),--name $(SWEEP))
# Around the grades (docs/instructor-guide.md): nothing here grades; each reads a sweep's files.
gradebook-export:  ## (instructors) rebuild a sweep's gradebook and its LMS files, export/canvas.csv and grades.csv (SWEEP=name)
	$(CLUSTER) gradebook $(if $(SWEEP),--name $(SWEEP))
similarity:  ## (instructors) similarity report of a sweep's hand-ins, stage by stage: similarity/index.html (SWEEP=name)
	$(CLUSTER) similarity $(if $(SWEEP),--name $(SWEEP))
leaderboard:  ## (instructors) the opt-in class leaderboard of a sweep: leaderboard/ (SWEEP=name)
	$(CLUSTER) leaderboard $(if $(SWEEP),--name $(SWEEP))

# ---- handout (grader/scripts/handout.py; docs/handout.md) ----------------------------------------
# Runs in the instructor repository only: a handout has no reference sources and no handout.py.
# DIST= overrides course.toml [handout] dist (the tests build into a temporary directory).
DIST ?=
HANDOUT := $(PYTHON) grader/scripts/handout.py
HANDOUT_ARGS := --config $(CONFIG) $(if $(DIST),--dist $(DIST))
.PHONY: handout handout-check handout-script
handout-script:
	@test -f grader/scripts/handout.py || { echo "make handout runs in the instructor repository; this tree is a handout"; exit 2; }
handout: handout-script  ## (instructors) dist/<course>-handout/ and its tarball: stubs, grader, compiled reference
	$(HANDOUT) build $(HANDOUT_ARGS)
handout-check: handout  ## (instructors) unpack the handout afresh and prove it builds, tests and hides solutions
	$(HANDOUT) check $(HANDOUT_ARGS)

# ---- tests ------------------------------------------------------------------------------------------
HOST_TEST_SRC := $(wildcard tests/host/*.cpp)
HOST_TESTS := $(BUILD)/tests/host_tests
GPU_TEST_SRC := $(wildcard tests/gpu/*.cu)
GPU_TESTS := $(SUB_BUILD)/gpu_tests

$(BUILD)/tests/host/%.o: tests/host/%.cpp
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -c $< -o $@
$(HOST_TESTS): $(HOST_TEST_SRC:tests/host/%.cpp=$(BUILD)/tests/host/%.o) $(SUB_OBJ) $(GRADER_LIB) $(REF_LIB)
	$(NVCC) -arch=$(ARCH) -o $@ $^ $(LDLIBS)
$(SUB_BUILD)/tests/gpu/%.o: tests/gpu/%.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@
$(GPU_TESTS): $(GPU_TEST_SRC:tests/gpu/%.cu=$(SUB_BUILD)/tests/gpu/%.o) $(SUB_OBJ) $(GRADER_LIB) $(REF_LIB)
	$(NVCC) -arch=$(ARCH) -o $@ $^ $(LDLIBS)

.PHONY: test-build test
test-build: $(GRADER) $(HOST_TESTS) $(GPU_TESTS)
test: test-build  ## every test: host (doctest), GPU (skipped without a GPU), scripts (pytest)
	$(PYTHON) tests/run_tests.py --host $(HOST_TESTS) --gpu $(GPU_TESTS) --grader $(GRADER) --python $(PYTHON)

# ---- symbol scan and the gallery of hostile submissions (docs/gallery.md) -----------------------
# symbols.json: per stage, the calls a stage may not make (library GEMMs, processes, files, device
# resets) and entry points no file defines; gemmlab grade rejects the stages it names.
SYMBOLS := $(SUB_BUILD)/symbols.json
$(SYMBOLS): $(SUB_OBJ) grader/scripts/scan_symbols.py
	$(PYTHON) grader/scripts/scan_symbols.py --fail-on-missing --registry $(SUB_BUILD)/registry.o --out $@ \
	    $(filter $(SUB_BUILD)/stages/%.o,$^)
.PHONY: scan test-gallery
scan: $(SYMBOLS)  ## what each stage calls that a stage may not (the grader rejects it): symbols.json
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
.PHONY: setup
setup:  ## install the Debian packages GEMM Lab needs (idempotent; says what it installs)
	bash grader/scripts/setup.sh

.PHONY: clean
clean:  ## remove build/ (results/ are kept)
	rm -rf build

.PHONY: help
help:  ## this list
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-zA-Z_-]+):.*## (.*)/  make \1\t\2/' | expand -t 24

-include $(shell find $(BUILD) -name "*.d" 2>/dev/null)
