# SPDX-License-Identifier: LGPL-2.1-or-later
#
# ctest driver for one libFuzzer run (cmake -P), so that a run never writes
# into the source tree and always starts from the same corpus:
#   -DFUZZER=<binary> -DWORKDIR=<scratch dir> -DRUNS=<n> -DSEED=<n>
#   [-DCORPUS=<seed dir>]     copied to WORKDIR/corpus first (else empty)
#   -DEXPECT=clean            pass iff the run ends without a finding
#   -DEXPECT=divergence       pass iff the fuzzer reports a model divergence
#                             within RUNS executions (planted-bug check)
foreach(var FUZZER WORKDIR RUNS SEED EXPECT)
	if(NOT DEFINED ${var})
		message(FATAL_ERROR "run_fuzzer.cmake: ${var} not set")
	endif()
endforeach()

file(REMOVE_RECURSE ${WORKDIR})
file(MAKE_DIRECTORY ${WORKDIR}/corpus)
if(CORPUS)
	file(COPY ${CORPUS}/ DESTINATION ${WORKDIR}/corpus)
endif()

execute_process(COMMAND ${FUZZER} -runs=${RUNS} -seed=${SEED}
		-print_final_stats=1 -artifact_prefix=${WORKDIR}/
		${WORKDIR}/corpus
	RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)

string(REGEX MATCH "pcstock-fuzz: divergence[^\n]*" finding "${out}")
string(REGEX MATCH "number_of_executed_units: *[0-9]+" units "${out}")
message(STATUS "${FUZZER}: exit ${rc}, ${units}")

if(EXPECT STREQUAL "clean")
	if(NOT rc EQUAL 0)
		message(FATAL_ERROR "fuzzer found a problem:\n${out}")
	endif()
elseif(EXPECT STREQUAL "divergence")
	if(rc EQUAL 0 OR NOT finding)
		message(FATAL_ERROR
			"planted bug not detected within ${RUNS} runs:\n${out}")
	endif()
	message(STATUS "detected as expected: ${finding}")
else()
	message(FATAL_ERROR
		"run_fuzzer.cmake: EXPECT must be clean or divergence")
endif()
