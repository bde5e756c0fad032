# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Stock layer tests: sequential conformance of both policies on a
# SIM domain and a migrating/draining/offlining stress run.  The stock's
# measurement program, micro_stock, is a benchmark: bench/micro_stock.c.

# One program of two files (the cases where the policies agree, and where
# they differ) around one fixture, built three ways below.
set(stock_sources test_stock.c test_stock_policies.c stock_fixture.c)
pcstock_add_test(test_stock SOURCES ${stock_sources}
	LABELS unit conformance TIMEOUT 60)
# The same conformance cases through the opt-in inline fast paths
# (PCSTOCK_INLINE, pcstock/stock_inline.h).
pcstock_add_test(test_stock_inline SOURCES ${stock_sources}
	LABELS unit conformance TIMEOUT 60)
target_compile_definitions(test_stock_inline PRIVATE PCSTOCK_INLINE)
pcstock_add_test(test_stock_stress SOURCES test_stock_stress.c
	LABELS stress TIMEOUT 120)

# A planted bug in the EXACT kind (tests/mutants/exact_no_drain.patch:
# its switch to exact marks the slots but does not drain them): the EXACT
# cases of test_stock must fail on it.
pcstock_add_unit_detection_test(exact_no_drain test_stock "*/exact"
	SOURCES ${stock_sources})
# EXACT's margins taken without the over-max guard (src/stock_ctl.c;
# docs/mutation.md H3): a level above its max has a huge margin, and the
# stock stocks on there.
pcstock_add_unit_detection_test(exact_margin_wraps test_stock
	test_exact_over_max_has_no_margin/exact SOURCES ${stock_sources})
