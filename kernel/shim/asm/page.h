/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcstock kernel shim: the page size, pcstock's (the build passes
 * KPC_PAGE_SHIFT = PCSTOCK_PAGE_SHIFT), so that both sides count in the
 * same pages.
 */
#ifndef KPC_SHIM_ASM_PAGE_H
#define KPC_SHIM_ASM_PAGE_H

#ifndef KPC_PAGE_SHIFT
#error "the kernel unit is built with -DKPC_PAGE_SHIFT=<pcstock's page shift>"
#endif
#define PAGE_SHIFT KPC_PAGE_SHIFT
#define PAGE_SIZE (1UL << PAGE_SHIFT)

#endif
