// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * explore_registry.c - the schedule explorer's scenarios: the lists each
 * scenario file exports (explore.h), templates crossed with every
 * registered policy they apply to, and the lookup and listings the driver
 * and the build ask for.  The engine (explore.c) runs what this finds.
 */
#include <stdio.h>
#include <string.h>

#include "explore.h"

static const struct explore_scenario *const *const lists[] = {
	explore_counter_scenarios,
	explore_stock_scenarios,
	explore_group_scenarios,
	explore_memcg7_scenarios,
	explore_protect_scenarios,
	explore_limits_scenarios,
	explore_tree_scenarios,
	explore_drain_scenarios,
	explore_shm_scenarios,
};

bool explore_caps_slots(const struct pcstock_policy_info *info)
{
	return info->caps_slots;
}

enum walk_mode { WALK_FIND, WALK_LIST, WALK_PER_POLICY };

/* The last per-policy scenario explore_find() built. */
static struct explore_scenario generated;
static char generated_name[96];

/*
 * Template @tpl for policy @p into *@out: NULL if @p names no policy or
 * @tpl does not apply to it (its properties, not its name, decide).
 */
static const struct explore_scenario *
instance(const struct explore_scenario *tpl, int p,
	 struct explore_scenario *out, char *name, size_t len)
{
	struct pcstock_policy_info info;

	if (tpl->policy_info((enum pcstock_tree_policy)p, &info) ||
	    !tpl->applies(&info))
		return NULL;
	snprintf(name, len, "%s-%s", tpl->name, info.name);
	*out = *tpl;
	out->name = name;
	out->policy = (enum pcstock_tree_policy)p;
	out->info = info;
	return out;
}

static const struct explore_scenario *visit(const struct explore_scenario *s,
					    const char *name,
					    enum walk_mode mode)
{
	switch (mode) {
	case WALK_FIND:
		return strcmp(s->name, name) ? NULL : s;
	case WALK_LIST:
		printf("%-28s %s%s\n", s->name, s->help,
		       s->expect ? " [expect violation]" : "");
		break;
	case WALK_PER_POLICY:
		if (s->applies && !s->expect)
			printf("%s %s\n", s->name,
			       s->weak_only ? "weak" : "sc,weak");
		break;
	}
	return NULL;
}

/*
 * Print the list, or find one scenario by @name.  A template stands for
 * one scenario per registered policy it applies to.
 */
static const struct explore_scenario *walk(const char *name,
					   enum walk_mode mode)
{
	const struct explore_scenario *const *s, *found;
	struct explore_scenario one;
	char buf[sizeof(generated_name)];
	size_t i;
	int p;

	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		for (s = lists[i]; *s; s++) {
			if (!(*s)->applies) {
				found = visit(*s, name, mode);
				if (found)
					return found;
				continue;
			}
			for (p = 0; p < PCSTOCK_TREE_NR_POLICIES; p++) {
				if (!instance(*s, p, &one, buf, sizeof(buf)))
					continue;
				if (!visit(&one, name, mode))
					continue;
				memcpy(generated_name, buf, sizeof(buf));
				generated = one;
				generated.name = generated_name;
				return &generated;
			}
		}
	}
	return NULL;
}

const struct explore_scenario *explore_find(const char *name)
{
	return name ? walk(name, WALK_FIND) : NULL;
}

void explore_list(void)
{
	walk(NULL, WALK_LIST);
}

void explore_list_per_policy(void)
{
	walk(NULL, WALK_PER_POLICY);
}
