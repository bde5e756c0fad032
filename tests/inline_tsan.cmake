# SPDX-License-Identifier: LGPL-2.1-or-later
# PCSTOCK_INLINE's statistic increment is an asm add on x86-64, which
# ThreadSanitizer cannot see; under TSan the header must take the relaxed
# load and store instead.  gcc says so with __SANITIZE_THREAD__, clang with
# __has_feature(thread_sanitizer): preprocess a user's TU with each compiler
# of CCS (|-separated), with and without -fsanitize=thread, and look for the
# asm.  Without the sanitizer it must be there (so the check can fail).
file(MAKE_DIRECTORY ${WORK})
set(src ${WORK}/inline_tsan.c)
file(WRITE ${src} "#define PCSTOCK_INLINE\n#include <pcstock/pcstock.h>\n")
string(REPLACE "|" ";" ccs "${CCS}")
foreach(cc IN LISTS ccs)
	foreach(tsan "" -fsanitize=thread)
		execute_process(COMMAND ${cc} -std=c11 ${tsan} -E -I${SRC}
				-I${GEN} ${src}
			RESULT_VARIABLE rc OUTPUT_VARIABLE out
			ERROR_VARIABLE err)
		if(NOT rc EQUAL 0)
			message(FATAL_ERROR "${cc} ${tsan} -E failed:\n${err}")
		endif()
		string(FIND "${out}" "addq $1" at)
		if(tsan AND NOT at EQUAL -1)
			message(FATAL_ERROR "${cc} -fsanitize=thread: the inline "
				"statistic increment is still the asm add")
		elseif(NOT tsan AND at EQUAL -1)
			message(FATAL_ERROR "${cc}: no asm add in the inline "
				"statistic increment (x86-64 expected)")
		endif()
	endforeach()
	message(STATUS "${cc}: asm add without TSan, none with it")
endforeach()
