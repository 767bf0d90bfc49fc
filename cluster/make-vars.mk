# make-vars.mk — read after the Makefile by cluster/grading.py (`make -f Makefile -f cluster/make-vars.mk
# print-cluster-vars`) so the cluster tools use the Makefile's own paths and flags, never a copy.
.PHONY: print-cluster-vars
print-cluster-vars:
	@printf '%s\n' 'ARCH=$(ARCH)' 'NVCC=$(NVCC)' 'SUB_BUILD=$(SUB_BUILD)' 'GRADER=$(GRADER)' \
	  'GRADER_BUILD=$(GRADER_BUILD)' 'GRADER_TRUSTED=$(GRADER_TRUSTED)' 'REF_LIB=$(REF_LIB)' \
	  'NVCCFLAGS=$(NVCCFLAGS)' 'STAGE_NVCCFLAGS=$(STAGE_NVCCFLAGS)' 'REF_NVCCFLAGS=$(REF_NVCCFLAGS)' 'CXXFLAGS=$(CXXFLAGS)' \
	  'SUB_STAGE_OBJ=$(SUB_STAGE_OBJ)' 'CONFIG_CHECKER=$(CONFIG_CHECKER)' \
	  'SUB_FLAGS_STAMP=$(SUB_FLAGS_STAMP)' 'SUB_FLAGS=$(SUB_FLAGS)'
