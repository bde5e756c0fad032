/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock/pcstock.h - umbrella header: everything pcstock exports.
 *
 * pcstock is a userspace port of the Linux kernel's page_counter and of the
 * per-CPU charge stock, with simulated or pinned CPUs.  Layers, bottom up:
 * counter.h (the faithful page_counter), cpu.h (domains of CPUs),
 * percpu.h (per-CPU arena), stock.h (per-counter per-CPU stock),
 * hierarchy.h (memcg-like groups over all of them), shared.h (one tree
 * shared by many processes, in a shared memory region).
 * kernel_compat.h (kernel spellings) is not included here on purpose.
 */
#ifndef PCSTOCK_PCSTOCK_H
#define PCSTOCK_PCSTOCK_H

#include <pcstock/common.h>
#include <pcstock/version.h>
#include <pcstock/counter.h>
#include <pcstock/cpu.h>
#include <pcstock/percpu.h>
#include <pcstock/stock.h>
#include <pcstock/hierarchy.h>
#include <pcstock/shared.h>

#endif /* PCSTOCK_PCSTOCK_H */
