# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Counter layer tests (issue 2): the spec's conformance catalogue, memparse
# table, a concurrency stress test and the libFuzzer differential fuzzers.

pcstock_add_test(test_counter SOURCES test_counter.c
	LABELS unit conformance TIMEOUT 60)
pcstock_add_test(test_memparse SOURCES test_memparse.c
	LABELS unit conformance TIMEOUT 60)
