# SPDX-License-Identifier: LGPL-2.1-or-later
#
# When the line model reads a share from the store and drain readings
# (ctest label bench), run as
#   cmake -DBENCH=<pcstock-bench> -DOUT=<dir> -DNEAR=<lines.jsonl>
#         -DFAR=<lines.jsonl> -P lines_readings.cmake
# Both shares (bench/lines/stores.c, sb_derive()) take a part's cost as
# the same in a round with more work as alone, which holds only where the
# part moved its line every round; a part that cost under half a latency
# did not, and its share is assumed.  Over two recorded calibrations
# (--lines-calib re-derives the shares from the recorded rounds):
#  - NEAR, the AMD EPYC of family 25 model 17 (its validation record,
#    docs/lines/validation/amd-epyc-f25-m17.jsonl, near placement: a
#    store 10.7 ns against a latency of 13.9 ns): both shares read, the
#    serial share 1 and the drain under a load 0;
#  - FAR, the AMD EPYC of family 26 model 2 under its far placement
#    (bench/lines_calib_f26m2_far.jsonl, the first run of the 2026-12-05
#    09:28 UTC validation at c6b58c4: a store about 30 ns against a
#    latency of 115 ns): the drain reading's store and load cost 45 ns
#    more together than apart, the sign that a part's cost grew with the
#    round; both shares assumed, 1.  The record's store costs more than a
#    quarter of the latency, so the test fails on the earlier rule (a
#    part under a quarter of a latency assumed), which read the drain
#    share 0 there and priced sock default at half the measured rate.
# And on both, the replay of the store reading's loop with one store a
# round (model_stores_1_round_ns; bench/lines/replay.c, sb_replay())
# comes within 0.8-1.25x of the machine's round (stores_1_round_ns):
# the rule that a plain store keeps the line it took for the hold, as a
# locked op does (timed_apply()).  Without it the replay's writer waits
# two latencies a round, the reader's fetch and its own upgrade: 30.9
# against 12.8 ns near, 230 against 36 far.
# Nothing is timed: the shares come from the records' rounds.

cmake_minimum_required(VERSION 3.20)

if(NOT BENCH OR NOT OUT OR NOT NEAR OR NOT FAR)
	message(FATAL_ERROR "usage: cmake -DBENCH=... -DOUT=... "
		"-DNEAR=<lines.jsonl> -DFAR=<lines.jsonl> "
		"-P lines_readings.cmake")
endif()

# The calibration record of a --lines run over @calib, in @var.
function(calib_of calib name var)
	set(dir "${OUT}/${name}")
	file(REMOVE_RECURSE "${dir}")
	file(MAKE_DIRECTORY "${OUT}")
	execute_process(COMMAND "${BENCH}" --lines --quick --reps 1 --cpus 2
		--workload scale --strategy default --lines-calib "${calib}"
		--out "${dir}" RESULT_VARIABLE rc OUTPUT_QUIET
		ERROR_VARIABLE err)
	if(NOT rc EQUAL 0)
		message(FATAL_ERROR "--lines over ${calib}: ${rc}:\n${err}")
	endif()
	file(STRINGS "${dir}/lines.jsonl" recs
		REGEX "\"kind\":\"lines_calibration\"")
	list(LENGTH recs n)
	if(n EQUAL 0)
		message(FATAL_ERROR "${name}: no calibration record")
	endif()
	list(GET recs 0 rec)
	set(${var} "${rec}" PARENT_SCOPE)
endfunction()

# @field of @rec must be @want (a JSON number or boolean, as text).
function(expect rec name field want)
	string(JSON got GET "${rec}" ${field})
	if(want MATCHES "^(true|false)$")
		if((want STREQUAL "true" AND NOT got) OR
		   (want STREQUAL "false" AND got))
			message(FATAL_ERROR "${name}: ${field} ${got}, want "
				"${want}")
		endif()
	elseif(NOT got EQUAL want)
		message(FATAL_ERROR "${name}: ${field} ${got}, want ${want}")
	endif()
endfunction()

# A JSON number of @rec's @field in hundredths (CMake's math is integer).
function(centi rec field var)
	string(JSON v GET "${rec}" ${field})
	if(NOT v MATCHES "^([0-9]+)([.]([0-9]*))?$")
		message(FATAL_ERROR "${field}: '${v}' is not a reading")
	endif()
	set(i "${CMAKE_MATCH_1}")
	string(SUBSTRING "${CMAKE_MATCH_3}00" 0 2 f)
	string(REGEX REPLACE "^0" "" f "${f}")
	math(EXPR c "${i} * 100 + ${f}")
	set(${var} ${c} PARENT_SCOPE)
endfunction()

# The replay's one-store round within 0.8-1.25x of the machine's.
function(expect_store_round rec name)
	centi("${rec}" stores_1_round_ns meas)
	centi("${rec}" model_stores_1_round_ns model)
	math(EXPR lo "${meas} * 4")
	math(EXPR hi "${meas} * 5")
	math(EXPR m4 "${model} * 4")
	math(EXPR m5 "${model} * 5")
	if(NOT meas GREATER 0 OR m5 LESS lo OR m4 GREATER hi)
		message(FATAL_ERROR "${name}: the replay's one-store round "
			"${model} against the machine's ${meas} (hundredths "
			"of a ns), want 0.8-1.25x")
	endif()
	message(STATUS "lines readings: ${name} one-store round, replay "
		"${model}, machine ${meas} (hundredths of a ns)")
endfunction()

calib_of("${NEAR}" near rec)
expect_store_round("${rec}" near)
expect("${rec}" near store_drain_assumed false)
expect("${rec}" near store_drain_serial 1)
expect("${rec}" near drain_under_load_assumed false)
expect("${rec}" near drain_under_load 0)

calib_of("${FAR}" far rec)
expect_store_round("${rec}" far)
# The record is the case the rule is for: its drain reading's parts cost
# more together than apart, and its store between a quarter and half of
# the latency (in whole nanoseconds: CMake's math is integer).
string(JSON lat GET "${rec}" latency_ns)
string(REGEX REPLACE "[.].*" "" lat "${lat}")
foreach(k lock store load both)
	string(JSON v GET "${rec}" drain_${k}_round_ns)
	string(REGEX REPLACE "[.].*" "" ${k} "${v}")
endforeach()
math(EXPR s "${store} - ${lock}")
math(EXPR l "${load} - ${lock}")
math(EXPR apart "${s} + ${l}")
math(EXPR together "${both} - ${lock}")
math(EXPR quarter "${lat} / 4")
math(EXPR half "${lat} / 2")
if(NOT together GREATER apart OR NOT s GREATER quarter OR
   NOT s LESS half)
	message(FATAL_ERROR "far: not the case the rule is for: store ${s}, "
		"load ${l}, both ${together} ns, latency ${lat} ns")
endif()
expect("${rec}" far store_drain_assumed true)
expect("${rec}" far store_drain_serial 1)
expect("${rec}" far drain_under_load_assumed true)
expect("${rec}" far drain_under_load 1)
message(STATUS "lines readings: near read (serial 1, drain 0); far "
	"(store ${s} ns, load ${l}, both ${together}, latency ${lat}) assumed")
