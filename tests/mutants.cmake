# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Boundary cases a mutation study found untested (docs/mutation.md): each
# fails on a mutant of the code named in its comment.
pcstock_add_test(test_mutants_stock SOURCES test_mutants_stock.c
	LABELS unit TIMEOUT 60)
pcstock_add_test(test_mutants_groups SOURCES test_mutants_groups.c
	LABELS unit TIMEOUT 60)
pcstock_add_test(test_mutants_memcg7 SOURCES test_mutants_memcg7.c
	LABELS unit TIMEOUT 60)
