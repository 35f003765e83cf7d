# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# sources.mk - the discipline core's one source list, used by every build:
# the core's Makefile, qlab-emu's, the Linux Kbuild and tc plugins, and
# ns-3's CMake (through `make -s -f sources.mk print-sources`).
#
#   QCORE_DIR   the directory of the core's sources (default: this file's)
#   QCORE_SRCS  every kernel-compilable source: the registry and parser
#               (qcore.c, qcore_params.c) and every discipline, one .c per
#               algorithm, so a new discipline needs no change here
#   QCORE_USER_SRCS  userspace-only additions for a program (usage text)
#   QCORE_HDRS  the headers
QCORE_DIR ?= $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
# Programs, not part of the core: the replay tool.
QCORE_PROGRAMS := replay.c
QCORE_USER_SRCS := qcore_usage.c
QCORE_SRCS := $(sort $(filter-out $(QCORE_PROGRAMS) $(QCORE_USER_SRCS),\
	$(notdir $(wildcard $(QCORE_DIR)/*.c))))
QCORE_HDRS := $(sort $(notdir $(wildcard $(QCORE_DIR)/*.h)))

# Only when run on its own (make -f sources.mk), not when included.
ifeq ($(words $(MAKEFILE_LIST)),1)
.PHONY: print-sources
print-sources:
	@echo $(QCORE_SRCS) $(QCORE_USER_SRCS)
endif
