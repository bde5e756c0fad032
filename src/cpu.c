// SPDX-License-Identifier: LGPL-2.1-or-later
/* cpu layer: not yet written (see issues). */
