// SPDX-License-Identifier: LGPL-2.1-or-later
/* stock layer: not yet written (see issues). */
