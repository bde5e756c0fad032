/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * abort_helpers.h - assert that a call is one of the library's documented
 * aborts (include after <cmocka.h>).
 *
 * The call runs in a forked child whose stderr goes to a pipe; the parent
 * asserts that the child died of SIGABRT and that its message contains
 * the expected text.
 */
#ifndef PCSTOCK_TESTS_ABORT_HELPERS_H
#define PCSTOCK_TESTS_ABORT_HELPERS_H

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void expect_abort(void (*fn)(void *), void *arg,
				const char *message)
{
	char buf[512];
	size_t len = 0;
	ssize_t n;
	int fds[2], status;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		fn(arg);
		_exit(0);	/* no abort: the parent sees exit status 0 */
	}
	close(fds[1]);
	while (len < sizeof(buf) - 1 &&
	       (n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_non_null(strstr(buf, message));
}

#endif /* PCSTOCK_TESTS_ABORT_HELPERS_H */
