// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * memcg7_fake.c - the fake owner of memcg7's keys (memcg7_fake.h).
 */
#include "memcg7_fake.h"

static void fake_uncharge(void *key, unsigned long nr_pages)
{
	struct memcg7_fake *k = key;

	k->uncharged += nr_pages;
	if (k->on_uncharge)
		k->on_uncharge(k);
}

static void fake_get(void *key)
{
	((struct memcg7_fake *)key)->refs++;
}

static void fake_put(void *key)
{
	((struct memcg7_fake *)key)->refs--;
}

static bool fake_online(void *key)
{
	return !((struct memcg7_fake *)key)->offline;
}

static bool fake_in_subtree(void *key, void *root)
{
	return key == root;
}

const struct memcg7_ops memcg7_fake_ops = {
	.uncharge = fake_uncharge,
	.get = fake_get,
	.put = fake_put,
	.online = fake_online,
	.in_subtree = fake_in_subtree,
};
