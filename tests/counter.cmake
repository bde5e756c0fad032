# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Counter layer tests: the conformance catalogue and the
# memparse table (docs/conformance.md), a concurrency stress test and
# libFuzzer differential fuzzers (src/counter.c and src/counter_parse.c
# against tests/fuzz/counter_model.c and a grammar model of memparse).

# One program of two files (the catalogue, each operation's edges)
# around one fixture; kernel/CMakeLists.txt builds it over a kernel tree.
pcstock_add_test(test_counter SOURCES test_counter.c test_counter_ops.c
	counter_fixture.c LABELS unit conformance TIMEOUT 60)
pcstock_add_test(test_memparse SOURCES test_memparse.c
	LABELS unit conformance TIMEOUT 60)
pcstock_add_test(test_size SOURCES test_size.c LABELS unit TIMEOUT 60)
pcstock_add_test(test_counter_concurrency SOURCES test_counter_concurrency.c
	LABELS stress TIMEOUT 120)

# --- fuzzers ---------------------------------------------------------------
# libFuzzer needs clang while the project builds with gcc, so the fuzzers
# are compiled by clang directly from src/counter*.c plus their own sources
# (no library: the counter has no dependencies).  They carry their own
# ASan+UBSan, so sanitizer build directories skip them.
find_program(PCSTOCK_CLANG NAMES clang clang-14)
set(_fuzz_flags -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=undefined -Wall -Wextra -Wno-unused-parameter)
if(PCSTOCK_WERROR)
	list(APPEND _fuzz_flags -Werror)
endif()

if(PCSTOCK_CLANG AND PCSTOCK_SANITIZE STREQUAL "" AND
   NOT DEFINED PCSTOCK_HAVE_LIBFUZZER)
	set(_probe ${CMAKE_CURRENT_BINARY_DIR}/fuzz/probe.c)
	file(WRITE ${_probe} "#include <stddef.h>\n#include <stdint.h>\n"
		"int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\n"
		"int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)\n"
		"{ return d && n ? 0 : 0; }\n")
	execute_process(COMMAND ${PCSTOCK_CLANG} ${_fuzz_flags} ${_probe}
			-o ${CMAKE_CURRENT_BINARY_DIR}/fuzz/probe
		RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
	set(_have OFF)
	if(_rc EQUAL 0)
		set(_have ON)
	endif()
	set(PCSTOCK_HAVE_LIBFUZZER ${_have} CACHE INTERNAL "libFuzzer usable")
endif()

set(_fuzz_headers
	${PROJECT_SOURCE_DIR}/include/pcstock/counter.h
	${PROJECT_SOURCE_DIR}/include/pcstock/common.h
	${PROJECT_BINARY_DIR}/include/pcstock/version.h
	${PROJECT_SOURCE_DIR}/src/atomic.h
	${PROJECT_SOURCE_DIR}/src/internal.h
	${CMAKE_CURRENT_SOURCE_DIR}/fuzz/counter_model.h)

# pcstock_add_fuzzer(<name> SOURCES s... [MUTANT bug]): builds
# <build>/tests/fuzz/<name> with the normal build (target <name>), over
# the counter with the planted bug <bug> if given.
function(pcstock_add_fuzzer name)
	cmake_parse_arguments(ARG "" "MUTANT" "SOURCES" ${ARGN})
	set(out ${CMAKE_CURRENT_BINARY_DIR}/fuzz/${name})
	list(TRANSFORM ARG_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
	set(counter ${PROJECT_SOURCE_DIR}/src/counter.c
		${PROJECT_SOURCE_DIR}/src/counter_parse.c)
	set(defines)
	if(ARG_MUTANT)
		pcstock_mutant_plant(${ARG_MUTANT} counter defines)
	endif()
	add_custom_command(OUTPUT ${out}
		COMMAND ${PCSTOCK_CLANG} ${_fuzz_flags} ${defines}
			-I${PROJECT_SOURCE_DIR}/include
			-I${PROJECT_BINARY_DIR}/include
			-I${PROJECT_SOURCE_DIR}/src
			${counter} ${ARG_SOURCES}
			-o ${out}
		DEPENDS ${counter} ${ARG_SOURCES} ${_fuzz_headers}
		COMMENT "Building libFuzzer target ${name} with clang"
		VERBATIM)
	add_custom_target(${name} ALL DEPENDS ${out})
endfunction()

# pcstock_add_fuzz_test(<name> FUZZER f RUNS n EXPECT clean|divergence
#                       [CORPUS dir]): one bounded, seeded run under ctest.
function(pcstock_add_fuzz_test name)
	cmake_parse_arguments(ARG "" "FUZZER;RUNS;EXPECT;CORPUS" "" ${ARGN})
	set(corpus "")
	set(seeds ${CMAKE_CURRENT_SOURCE_DIR}/corpus)
	if(ARG_CORPUS)
		set(corpus -DCORPUS=${seeds}/${ARG_CORPUS})
	endif()
	add_test(NAME ${name} COMMAND ${CMAKE_COMMAND}
		-DFUZZER=${CMAKE_CURRENT_BINARY_DIR}/fuzz/${ARG_FUZZER}
		-DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/fuzz/run-${name}
		-DRUNS=${ARG_RUNS} -DSEED=1 -DEXPECT=${ARG_EXPECT} ${corpus}
		-P ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzzer.cmake)
	set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT 120)
endfunction()

if(PCSTOCK_HAVE_LIBFUZZER AND PCSTOCK_SANITIZE STREQUAL "")
	set(_model_sources fuzz/fuzz_counter.c fuzz/counter_model.c)
	pcstock_add_fuzzer(fuzz_counter SOURCES ${_model_sources})
	pcstock_add_fuzzer(fuzz_memparse SOURCES fuzz/fuzz_memparse.c)
	# The planted bug: failcnt counted on the leaf, not the failing level.
	pcstock_add_fuzzer(fuzz_counter_mutant SOURCES ${_model_sources}
		MUTANT failcnt_on_leaf)

	pcstock_add_fuzz_test(fuzz_counter_differential FUZZER fuzz_counter
		CORPUS counter RUNS 200000 EXPECT clean)
	pcstock_add_fuzz_test(fuzz_memparse_grammar FUZZER fuzz_memparse
		CORPUS memparse RUNS 600000 EXPECT clean)
	# From an empty corpus, so that the search itself is what is tested.
	pcstock_add_fuzz_test(fuzz_counter_finds_planted_bug
		FUZZER fuzz_counter_mutant RUNS 1000000 EXPECT divergence)
elseif(PCSTOCK_SANITIZE STREQUAL "")
	message(STATUS "pcstock: no clang with libFuzzer, fuzz tests skipped")
endif()
