# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The shared tree (pcstock/shared.h): processes made with fork().
# ThreadSanitizer cannot follow a process across fork(), so these are not
# in the TSan build; the explorer's shm-death scenario (tests/explore.cmake)
# and the ASan build's runs of these stand in for it (docs/using.md,
# "Shared trees").
if(NOT PCSTOCK_SANITIZE MATCHES "thread")
	pcstock_add_test(test_shm SOURCES test_shm.c LABELS unit TIMEOUT 60)
endif()
