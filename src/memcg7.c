// SPDX-License-Identifier: LGPL-2.1-or-later
/* memcg7 layer: not yet written (see issues). */
