// SPDX-License-Identifier: LGPL-2.1-or-later
/* percpu layer: not yet written (see issues). */
