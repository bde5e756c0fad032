// SPDX-License-Identifier: LGPL-2.1-or-later
/* Built against the installed package by tests/consumer/run.sh. */
#include <stdio.h>
#include <string.h>

#include <pcstock/pcstock.h>

int main(void)
{
	struct pcstock_counter parent, child, *fail = NULL;

	if (strcmp(pcstock_version(), PCSTOCK_VERSION_STRING) != 0) {
		fprintf(stderr, "header %s, library %s\n",
			PCSTOCK_VERSION_STRING, pcstock_version());
		return 1;
	}
	pcstock_counter_init(&parent, NULL, false);
	pcstock_counter_init(&child, &parent, false);
	if (pcstock_counter_set_max(&parent, 10) != 0 ||
	    !pcstock_counter_try_charge(&child, 10, &fail) ||
	    pcstock_counter_try_charge(&child, 1, &fail) || fail != &parent) {
		fprintf(stderr, "unexpected counter behaviour\n");
		return 1;
	}
	pcstock_counter_uncharge(&child, 10);
	printf("consumer: pcstock %s ok\n", pcstock_version());
	return pcstock_counter_read(&parent) == 0 ? 0 : 1;
}
