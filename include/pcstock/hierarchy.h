/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pcstock/hierarchy.h - groups (memcg-like tree): not yet written. */
#ifndef PCSTOCK_HIERARCHY_H
#define PCSTOCK_HIERARCHY_H

#include <pcstock/common.h>

#endif /* PCSTOCK_HIERARCHY_H */
