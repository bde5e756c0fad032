// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * netrr.c - the network's own cost of a request/response transaction
 * (--net-rr, --ops N), for the line model's like-with-like prediction
 * of the kernel test robot's netperf SCTP_RR figure (scripts/lkp-predict,
 * docs/lines-model.md).
 *
 * A client thread sends one byte to a server thread over loopback and
 * waits for its one-byte answer, N times; no pcstock call is made, so
 * what the transaction costs is the kernel's network path, the wake-ups
 * and the context switches, the part of a netperf transaction that is not
 * the memory counters.  The figure that matters on a saturated machine is
 * the CPU time per transaction (process CPU time, both threads, user and
 * system), not the wall time: netperf's 200 % threads keep every CPU
 * busy.  Two placements: the two threads pinned to two CPUs, and both on
 * one (as when a CPU runs a client and a server in turn).  UDP always;
 * SCTP (one-to-one, IPPROTO_SCTP) when the kernel has it, which a
 * container or a VM without the sctp module does not.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#ifndef IPPROTO_SCTP
#define IPPROTO_SCTP 132
#endif

struct rr {
	int type, proto;		/* SOCK_DGRAM/0, SOCK_STREAM/SCTP */
	int fd[2];			/* client, server (connected) */
	int os_cpu[2];
	unsigned long n;
	int err;
};

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Both ends of one loopback connection of @r's kind; 0 or -errno. */
static int rr_connect(struct rr *r)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int lfd, cfd = -1, sfd = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, r->type, r->proto);
	if (lfd < 0)
		return -errno;
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(lfd, (struct sockaddr *)&a, &len))
		goto fail;
	if (r->type == SOCK_STREAM && listen(lfd, 1))
		goto fail;
	cfd = socket(AF_INET, r->type, r->proto);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	if (r->type == SOCK_STREAM) {
		sfd = accept(lfd, NULL, NULL);
		if (sfd < 0)
			goto fail;
		close(lfd);
	} else {
		/* The server answers the client's address. */
		len = sizeof(a);
		if (getsockname(cfd, (struct sockaddr *)&a, &len) ||
		    connect(lfd, (struct sockaddr *)&a, sizeof(a)))
			goto fail;
		sfd = lfd;
	}
	r->fd[0] = cfd;
	r->fd[1] = sfd;
	return 0;
fail:
	r->err = -errno;
	if (cfd >= 0)
		close(cfd);
	close(lfd);
	return r->err;
}

static void *rr_server(void *arg)
{
	struct rr *r = arg;
	unsigned long i;
	char b;

	bind_self(r->os_cpu[1]);
	for (i = 0; i < r->n; i++)
		if (recv(r->fd[1], &b, 1, 0) != 1 ||
		    send(r->fd[1], &b, 1, 0) != 1) {
			r->err = -errno;
			break;
		}
	return NULL;
}

/*
 * One trial: N transactions; *@cpu_us and *@wall_us per transaction.
 * Return: 0, or -errno (the kind is not available, or a call failed).
 */
static int rr_trial(struct rr *r, double *cpu_us, double *wall_us)
{
	pthread_t tid;
	unsigned long i;
	double c0, w0;
	char b = 'x';
	int ret = rr_connect(r);

	if (ret)
		return ret;
	if (pthread_create(&tid, NULL, rr_server, r)) {
		ret = -EAGAIN;
		goto out;
	}
	bind_self(r->os_cpu[0]);
	c0 = cpu_s();
	w0 = now_s();
	for (i = 0; i < r->n && !ret; i++)
		if (send(r->fd[0], &b, 1, 0) != 1 ||
		    recv(r->fd[0], &b, 1, 0) != 1)
			ret = -errno;
	*wall_us = (now_s() - w0) * 1e6 / (double)r->n;
	pthread_join(tid, NULL);
	*cpu_us = (cpu_s() - c0) * 1e6 / (double)r->n;
	ret = ret ? ret : r->err;
out:
	close(r->fd[0]);
	close(r->fd[1]);
	return ret;
}

int netrr_main(const struct opts *o, unsigned long n)
{
	static const struct {
		const char *name;
		int type, proto;
	} kinds[] = {
		{ "udp", SOCK_DGRAM, 0 },
		{ "sctp", SOCK_STREAM, IPPROTO_SCTP },
	};
	char model[128];
	unsigned int k, p;
	double cpu, wall;
	int ret, bad = 0;

	bench_cpu_model(model, sizeof(model));
	if (!o->json)
		printf("## pcstock-bench --net-rr: %lu one-byte "
		       "request/response transactions over loopback, %s\n\n"
		       "| kind | threads on | CPU us per transaction | wall "
		       "us per transaction |\n|---|---|---:|---:|\n", n,
		       model);
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		for (p = 0; p < 2; p++) {
			struct rr r = {
				.type = kinds[k].type,
				.proto = kinds[k].proto, .n = n,
				.os_cpu = { o->os_cpus[0],
					    o->os_cpus[p && o->nr_os_cpus > 1] },
			};

			ret = rr_trial(&r, &cpu, &wall);
			if (ret) {
				if (o->json)
					printf("{\"kind\":\"net_rr\","
					       "\"proto\":\"%s\",\"error\":"
					       "\"%s\"}\n", kinds[k].name,
					       strerror(-ret));
				else
					printf("| %s | - | not available "
					       "here: %s | - |\n",
					       kinds[k].name, strerror(-ret));
				/* SCTP may be missing; UDP must work. */
				bad |= !k;
				break;
			}
			if (!o->json) {
				printf("| %s | %s | %.2f | %.2f |\n",
				       kinds[k].name,
				       p ? "two CPUs" : "one CPU", cpu, wall);
				continue;
			}
			printf("{\"kind\":\"net_rr\",\"proto\":\"%s\","
				"\"cpus\":%u,\"transactions\":%lu,"
				"\"cpu_us\":%.4g,\"wall_us\":%.4g,"
				"\"cpu_model\":\"%s\"}\n", kinds[k].name,
				p ? 2U : 1U, n, cpu, wall, model);
		}
	}
	return bad ? 1 : 0;
}
