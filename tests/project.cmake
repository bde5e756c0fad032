# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Project-level checks (label `project`): each public header compiles on its
# own without a warning under strict flags, with gcc and clang; the shared
# library exports only pcstock_ symbols; and a program builds against the
# *installed* package with find_package() and with pkg-config.

# Every installed header but two that no program includes: policies.h
# (the policy list, included by the library with its macro defined) and
# stock_inline.h (stock.h includes it).  Each with gcc and clang where
# both are here (scripts/deps.sh installs both), else the build's.
file(GLOB _headers RELATIVE ${PROJECT_SOURCE_DIR}/include/pcstock
	${PROJECT_SOURCE_DIR}/include/pcstock/*.h)
list(REMOVE_ITEM _headers policies.h stock_inline.h)
list(TRANSFORM _headers REPLACE "\\.h$" "")
set(PCSTOCK_PUBLIC_HEADERS ${_headers} version)
find_program(PCSTOCK_GCC NAMES gcc)
find_program(PCSTOCK_CLANG NAMES clang)
set(_alone_ccs)
foreach(_cc IN ITEMS "${PCSTOCK_GCC}" "${PCSTOCK_CLANG}")
	if(_cc)
		list(APPEND _alone_ccs "${_cc}")
	endif()
endforeach()
if(NOT _alone_ccs)
	set(_alone_ccs "${CMAKE_C_COMPILER}")
endif()
string(REPLACE ";" "|" _alone_ccs "${_alone_ccs}")
foreach(h IN LISTS PCSTOCK_PUBLIC_HEADERS)
	add_test(NAME header_alone_${h}
		COMMAND ${CMAKE_COMMAND} "-DCCS=${_alone_ccs}" -DHEADER=${h}
			-DSRC=${PROJECT_SOURCE_DIR}/include
			-DGEN=${PROJECT_BINARY_DIR}/include
			-DWORK=${CMAKE_CURRENT_BINARY_DIR}/header_alone
			-P ${CMAKE_CURRENT_SOURCE_DIR}/header_alone.cmake)
	set_tests_properties(header_alone_${h} PROPERTIES LABELS project)
endforeach()

# Under ThreadSanitizer, gcc's or clang's, PCSTOCK_INLINE's statistic
# increment is one the sanitizer sees (x86-64, where it is otherwise asm).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
	add_test(NAME inline_stat_tsan
		COMMAND ${CMAKE_COMMAND} "-DCCS=${_alone_ccs}"
			-DSRC=${PROJECT_SOURCE_DIR}/include
			-DGEN=${PROJECT_BINARY_DIR}/include
			-DWORK=${CMAKE_CURRENT_BINARY_DIR}/inline_tsan
			-P ${CMAKE_CURRENT_SOURCE_DIR}/inline_tsan.cmake)
	set_tests_properties(inline_stat_tsan PROPERTIES LABELS project)
endif()

add_test(NAME src_layout COMMAND sh ${PROJECT_SOURCE_DIR}/scripts/check-src-layout ${PROJECT_SOURCE_DIR})

# Every relative link of README.md and docs/ resolves, inside the
# repository, to a file and a heading (docs moved between files keep
# their readers).
add_test(NAME doc_links
	COMMAND sh ${PROJECT_SOURCE_DIR}/scripts/check-doc-links
		${PROJECT_SOURCE_DIR})
set_tests_properties(doc_links PROPERTIES LABELS project)

add_test(NAME exported_symbols
	COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/check_symbols.sh
		$<TARGET_FILE:pcstock>)
set_tests_properties(exported_symbols PROPERTIES LABELS project)

# A sanitized library cannot be linked by an unsanitized consumer.
if(NOT PCSTOCK_SANITIZE)
	add_test(NAME consumer_install
		COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.sh
			${CMAKE_COMMAND} ${PROJECT_BINARY_DIR}
			${CMAKE_CURRENT_SOURCE_DIR}/consumer
			${CMAKE_CURRENT_BINARY_DIR}/consumer ${CMAKE_C_COMPILER})
	set_tests_properties(consumer_install PROPERTIES LABELS project
		TIMEOUT 300)
	# The headers as C++ (g++ -Werror), against the installed package;
	# g++ is a test-only tool, so the project itself stays C.
	find_program(PCSTOCK_CXX NAMES g++ c++ clang++)
	if(PCSTOCK_CXX)
		add_test(NAME consumer_cxx
			COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run_cxx.sh
				${CMAKE_COMMAND} ${PROJECT_BINARY_DIR}
				${CMAKE_CURRENT_SOURCE_DIR}/consumer
				${CMAKE_CURRENT_BINARY_DIR}/consumer_cxx
				${CMAKE_C_COMPILER} ${PCSTOCK_CXX})
		set_tests_properties(consumer_cxx PROPERTIES LABELS project
			TIMEOUT 300)
	endif()
endif()
