/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pcstock kernel shim: no module symbol table in userspace. */
#ifndef KPC_SHIM_LINUX_EXPORT_H
#define KPC_SHIM_LINUX_EXPORT_H

#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)

#endif
