// SPDX-License-Identifier: LGPL-2.1-or-later
/* The C view of the public layouts, for consumer_cxx.cpp to compare. */
#include "layout.h"

const size_t consumer_layout_c[] = CONSUMER_LAYOUT;
const size_t consumer_layout_c_len =
	sizeof(consumer_layout_c) / sizeof(consumer_layout_c[0]);
