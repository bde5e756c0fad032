# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The order sweep (-DPCSTOCK_ORDER_SWEEP=ON; scripts/order-sweep runs it,
# docs/order-sweep.md has its results): every ordered site of src/
# weakened in turn, one planted bug each (pcstock_order_sweep(),
# cmake/PcstockMutants.cmake), and an explorer over each,
# pcstock-explore-sweep-<tag, dashed>[-acquire|-release].  A flavour
# compiles again only the files its site changes.  None is built by
# default: the script builds each when it gets to it.  It finds the bugs,
# their sites and orders in order-sweep.txt of the build directory, and
# runs the unit tests against one with -DPCSTOCK_TESTLIB_MUTANT=<bug>.
# (tests/CMakeLists.txt has made them: PCSTOCK_SWEEP_BUGS.)
pcstock_add_mutant_explorers(${PCSTOCK_SWEEP_BUGS})
foreach(bug ${PCSTOCK_SWEEP_BUGS})
	string(REPLACE _ - dashed ${bug})
	set_target_properties(pcstock_mut_${bug} pcstock-explore-${dashed}
		PROPERTIES EXCLUDE_FROM_ALL ON)
endforeach()
