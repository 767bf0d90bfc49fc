# make-vars.mk — read after the Makefile by cluster/grading.py (`make -f Makefile -f cluster/make-vars.mk
# print-cluster-vars`) so the cluster tools use the Makefile's own paths and flags, never a copy.
.PHONY: print-cluster-vars
print-cluster-vars:
	@printf '%s\n' 'ARCH=$(ARCH)' 'NVCC=$(NVCC)' 'SUB_BUILD=$(SUB_BUILD)' 'GRADER=$(GRADER)' \
	  'GRADER_LIB=$(GRADER_LIB)' 'REF_LIB=$(REF_LIB)' 'NVCCFLAGS=$(NVCCFLAGS)' 'CXXFLAGS=$(CXXFLAGS)' \
	  'SUB_OBJ=$(SUB_OBJ)'
