// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_memparse.c - libFuzzer differential test of pcstock_counter_memparse()
 * against a grammar model of the kernel's page_counter_memparse() (its
 * rules: docs/conformance.md, "memparse") built another way: the input is
 * classified by POSIX regular expressions (one per number form, written so
 * that each string matches at most one way), and its value is computed in a
 * 128-bit multi-limb accumulator that is reduced modulo 2^64 only at the end.
 *
 * Input: the bytes up to the first NUL are the string to parse; if a NUL is
 * present, the bytes after it (up to a second NUL) are the max keyword,
 * else the keyword is "max".
 */
#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcstock/counter.h>

#define MAX_LEN 256
#define LIMBS 4		/* 4 x 32 bits: exact modulo 2^128 */

enum form { HEX, OCTAL, DECIMAL, NO_DIGITS, NR_FORMS };

/*
 * Hex digits swallow 'e'/'E', so a hex number's suffix can only be one of
 * KMGTP; after octal or decimal digits any of the six letters is a suffix.
 */
static const char *const patterns[NR_FORMS] = {
	[HEX] = "^0[xX][0-9a-fA-F]+[KkMmGgTtPp]?$",
	[OCTAL] = "^0[0-7]*[KkMmGgTtPpEe]?$",
	[DECIMAL] = "^[1-9][0-9]*[KkMmGgTtPpEe]?$",
	[NO_DIGITS] = "^[KkMmGgTtPpEe]?$",
};

static regex_t grammar[NR_FORMS];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int f;

	for (f = 0; f < NR_FORMS; f++)
		if (regcomp(&grammar[f], patterns[f], REG_EXTENDED | REG_NOSUB))
			abort();
	return 0;
}

struct big {
	uint32_t limb[LIMBS];	/* little-endian */
};

/* x = x * mul + add, modulo 2^128. */
static void big_mul_add(struct big *x, uint32_t mul, uint32_t add)
{
	uint64_t carry = add;
	int i;

	for (i = 0; i < LIMBS; i++) {
		uint64_t t = (uint64_t)x->limb[i] * mul + carry;

		x->limb[i] = (uint32_t)t;
		carry = t >> 32;
	}
}

static uint64_t big_low64(const struct big *x)
{
	return (uint64_t)x->limb[1] << 32 | x->limb[0];
}

static int digit(char ch)
{
	static const char digits[] = "0123456789abcdef";
	const char *at;

	if (ch >= 'A' && ch <= 'F')
		ch = (char)(ch - 'A' + 'a');
	at = ch ? strchr(digits, ch) : NULL;
	return at ? (int)(at - digits) : -1;
}

/* Binary exponent of a suffix letter (K = 10 ... E = 60), or 0. */
static unsigned int suffix_shift(char ch)
{
	static const char letters[] = "kmgtpe";
	const char *at;

	if (ch >= 'A' && ch <= 'Z')
		ch = (char)(ch - 'A' + 'a');
	at = ch ? strchr(letters, ch) : NULL;
	return at ? 10 * (unsigned int)(at - letters + 1) : 0;
}

/* Return: 0 with *pages set, or -EINVAL. */
static int model_memparse(const char *s, const char *kw, unsigned long *pages)
{
	size_t len = strlen(s), from = 0, to = len, i;
	unsigned int base = 10, shift = 0;
	struct big v = { { 0 } };
	uint64_t bytes;
	int f;

	if (strlen(kw) == len && memcmp(s, kw, len) == 0) {
		*pages = PCSTOCK_COUNTER_MAX;
		return 0;
	}
	for (f = 0; f < NR_FORMS; f++)
		if (regexec(&grammar[f], s, 0, NULL, 0) == 0)
			break;
	if (f == NR_FORMS)
		return -EINVAL;
	if (f == HEX) {
		base = 16;
		from = 2;
		if (len && digit(s[len - 1]) < 0)
			to--;
	} else {
		base = f == OCTAL ? 8 : 10;
		if (len && suffix_shift(s[len - 1]))
			to--;
	}
	if (to < len)
		shift = suffix_shift(s[to]);
	for (i = from; i < to; i++)
		big_mul_add(&v, base, (uint32_t)digit(s[i]));
	/* Shift as a multiplication by 2^10, 2^20 ... in 2^10 steps. */
	for (; shift; shift -= 10)
		big_mul_add(&v, 1024, 0);
	bytes = big_low64(&v);
	if (bytes / PCSTOCK_PAGE_SIZE >= PCSTOCK_COUNTER_MAX)
		*pages = PCSTOCK_COUNTER_MAX;
	else
		*pages = (unsigned long)(bytes / PCSTOCK_PAGE_SIZE);
	return 0;
}

#define UNTOUCHED 0x0123456789abcdefUL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[MAX_LEN + 1], kw[MAX_LEN + 1] = "max";
	unsigned long got = UNTOUCHED, want = UNTOUCHED;
	const uint8_t *nul;
	size_t n;
	int rc, want_rc;

	if (size > MAX_LEN)
		size = MAX_LEN;
	nul = memchr(data, 0, size);
	n = nul ? (size_t)(nul - data) : size;
	memcpy(buf, data, n);
	buf[n] = '\0';
	if (nul) {
		memcpy(kw, nul + 1, size - n - 1);
		kw[size - n - 1] = '\0';
	}

	rc = pcstock_counter_memparse(buf, kw, &got);
	want_rc = model_memparse(buf, kw, &want);
	if (rc != want_rc || got != want) {
		fprintf(stderr,
			"pcstock-fuzz: divergence: memparse(\"%s\", \"%s\"): "
			"counter.c %d/%lu, model %d/%lu\n",
			buf, kw, rc, got, want_rc, want);
		__builtin_trap();
	}
	return 0;
}
