# SPDX-License-Identifier: LGPL-2.1-or-later
# Compile a translation unit that includes only pcstock/${HEADER}.h with
# each compiler of CCS (|-separated), as -std=c11 and -std=gnu11, with and
# without PCSTOCK_INLINE (whose fast paths are then the user's own code),
# under a strict user's warnings and -Werror: the header is self-contained
# and gives such a project no warning.  gcc's -Wcast-align is silent on
# x86-64 and clang's is not, hence both compilers.
file(MAKE_DIRECTORY ${WORK})
set(src ${WORK}/${HEADER}.c)
file(WRITE ${src} "#include <pcstock/${HEADER}.h>\nint pcstock_header_alone_${HEADER};\n")
set(flags -Wall -Wextra -Wpedantic -Wcast-align -Wcast-qual -Wconversion
	-Wsign-conversion -Wshadow -Wstrict-prototypes -Wmissing-prototypes
	-Wundef -Wdouble-promotion -Wredundant-decls -Werror)
string(REPLACE "|" ";" ccs "${CCS}")
set(n 0)
foreach(cc IN LISTS ccs)
	foreach(std c11 gnu11)
		foreach(inline "" -DPCSTOCK_INLINE)
			execute_process(
				COMMAND ${cc} -std=${std} ${inline} ${flags}
					-fsyntax-only -I${SRC} -I${GEN} ${src}
				RESULT_VARIABLE rc OUTPUT_VARIABLE out
				ERROR_VARIABLE out)
			if(NOT rc EQUAL 0)
				message(FATAL_ERROR "pcstock/${HEADER}.h does not "
					"compile alone (${cc} -std=${std} "
					"${inline}):\n${out}")
			endif()
			math(EXPR n "${n} + 1")
		endforeach()
	endforeach()
endforeach()
message(STATUS "pcstock/${HEADER}.h compiles alone, ${n} ways: ${CCS}")
