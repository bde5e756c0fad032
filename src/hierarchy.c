// SPDX-License-Identifier: LGPL-2.1-or-later
/* hierarchy layer: not yet written (see issues). */
