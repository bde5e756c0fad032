# SPDX-License-Identifier: LGPL-2.1-or-later
#
# One probed warning set and the sanitizer flags, applied only to pcstock's
# own targets through pcstock_target_flags(); nothing here touches global
# CMAKE_C_FLAGS, so a parent project's flags stay its own.
include(CheckCCompilerFlag)

set(_pcstock_candidate_warnings
	-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
	-Wpointer-arith -Wcast-align -Wwrite-strings -Wformat=2
	-Wundef -Wvla -Wnull-dereference -Wdouble-promotion
	-Wimplicit-fallthrough -Wno-unused-parameter)
# clang's -Wdouble-promotion also flags glibc's NAN and INFINITY (float
# constants) wherever a double takes them, which is everywhere the bench
# marks a figure it has not read; gcc's flags only real promotions.
if(CMAKE_C_COMPILER_ID MATCHES "Clang")
	list(REMOVE_ITEM _pcstock_candidate_warnings -Wdouble-promotion)
endif()
set(PCSTOCK_WARNINGS "")
foreach(flag IN LISTS _pcstock_candidate_warnings)
	string(MAKE_C_IDENTIFIER "PCSTOCK_HAVE${flag}" var)
	check_c_compiler_flag(${flag} ${var})
	if(${var})
		list(APPEND PCSTOCK_WARNINGS ${flag})
	endif()
endforeach()
# Debian 12's valgrind (3.19) gives up on clang 14's DWARF 5 ("possibly
# corrupted debuginfo file"), and the line model's store counts
# (bench_lines_store_counts) run the bench under callgrind: debug info,
# where the build type asks for it, in DWARF 4 (-gdwarf-4 would also
# turn it on in a Release build).
set(PCSTOCK_DEBUG_FLAGS "")
check_c_compiler_flag(-fdebug-default-version=4
	PCSTOCK_HAVE_DEBUG_DEFAULT_VERSION)
if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND PCSTOCK_HAVE_DEBUG_DEFAULT_VERSION)
	list(APPEND PCSTOCK_DEBUG_FLAGS -fdebug-default-version=4)
endif()
if(PCSTOCK_WERROR)
	list(APPEND PCSTOCK_WARNINGS -Werror)
endif()

set(PCSTOCK_SANITIZE_FLAGS "")
if(PCSTOCK_SANITIZE)
	set(PCSTOCK_SANITIZE_FLAGS -fsanitize=${PCSTOCK_SANITIZE}
		-fno-omit-frame-pointer)
	if(PCSTOCK_SANITIZE MATCHES "undefined")
		list(APPEND PCSTOCK_SANITIZE_FLAGS -fno-sanitize-recover=undefined)
	endif()
endif()

# Nothing may interpose on pcstock's symbols.  -fno-semantic-interposition
# lets the compiler bind (and inline) calls to an exported function within
# its own .c file; a call from another file still goes through the PLT
# unless the shared library is linked with -Bsymbolic-functions, which
# binds every call to the library's own functions at link time (data
# symbols keep their default binding).  check_symbols.sh still sees the
# same exports.
check_c_compiler_flag(-fno-semantic-interposition
	PCSTOCK_HAVE_NO_SEMANTIC_INTERPOSITION)
set(PCSTOCK_LIBRARY_FLAGS "")
if(PCSTOCK_HAVE_NO_SEMANTIC_INTERPOSITION)
	list(APPEND PCSTOCK_LIBRARY_FLAGS -fno-semantic-interposition)
endif()
include(CheckLinkerFlag)
check_linker_flag(C -Wl,-Bsymbolic-functions PCSTOCK_HAVE_BSYMBOLIC_FUNCTIONS)
set(PCSTOCK_SHARED_LINK_FLAGS "")
if(PCSTOCK_HAVE_BSYMBOLIC_FUNCTIONS)
	list(APPEND PCSTOCK_SHARED_LINK_FLAGS -Wl,-Bsymbolic-functions)
endif()

# pcstock_target_flags(<target>): warnings, sanitizers, hidden visibility.
function(pcstock_target_flags target)
	target_compile_options(${target} PRIVATE ${PCSTOCK_WARNINGS}
		${PCSTOCK_DEBUG_FLAGS} ${PCSTOCK_SANITIZE_FLAGS})
	target_link_options(${target} PRIVATE ${PCSTOCK_SANITIZE_FLAGS})
	set_target_properties(${target} PROPERTIES C_VISIBILITY_PRESET hidden
		VISIBILITY_INLINES_HIDDEN ON)
endfunction()

# pcstock_tsan_suppressions(): under TSan, every test registered so far in
# the calling directory reads tests/tsan.supp (liburcu's own internals
# only), appended to whatever TSAN_OPTIONS the caller exported.
function(pcstock_tsan_suppressions)
	if(NOT PCSTOCK_SANITIZE MATCHES "thread")
		return()
	endif()
	get_property(tests DIRECTORY PROPERTY TESTS)
	if(tests)
		set_property(TEST ${tests} APPEND PROPERTY
			ENVIRONMENT_MODIFICATION "TSAN_OPTIONS=string_append: \
suppressions=${PROJECT_SOURCE_DIR}/tests/tsan.supp")
	endif()
endfunction()
