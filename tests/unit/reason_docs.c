// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * kvreg(7)'s table of reasons says what libkvreg says: each reason the
 * library knows is there, under the name kvreg_strerror() gives it, and
 * the page lists no reason the library does not know. The names and
 * fixes are written in error.c and the page, and nowhere else.
 */
#include "kvtest.h"

#define MAX_REASON	2000

int main(void)
{
	static bool listed[MAX_REASON];
	char line[1024], name[512];
	unsigned int n, reason = MAX_REASON, checked = 0;
	FILE *f = fopen("man/kvreg.7", "r");

	if (!f)
		kvt_skip("man/kvreg.7 not found: run from the source tree");
	while (fgets(line, sizeof(line), f)) {
		char *colon, *src, *dst;

		/* "N<TAB>ERRNO<TAB>T{", then "name: what to do". */
		if (sscanf(line, "%u\t", &n) == 1 && strstr(line, "T{")) {
			CHECK(n < MAX_REASON, "reason %u", n);
			reason = n;
			continue;
		}
		if (reason == MAX_REASON)
			continue;
		colon = strstr(line, ": ");
		CHECK(colon, "reason %u: no \"name: fix\" in \"%s\"", reason, line);
		/* groff's \- is a plain hyphen in the name. */
		for (src = line, dst = name; src < colon; src++) {
			if (src[0] == '\\' && src[1] == '-')
				src++;
			*dst++ = *src;
		}
		*dst = '\0';
		CHECK(!strcmp(name, kvreg_strerror(reason)),
		      "kvreg(7) calls reason %u \"%s\", libkvreg \"%s\"", reason,
		      name, kvreg_strerror(reason));
		listed[reason] = true;
		checked++;
		reason = MAX_REASON;
	}
	fclose(f);
	for (n = 1; n < MAX_REASON; n++)
		CHECK(listed[n] ||
		      !strcmp(kvreg_strerror(n), "unknown kvreg reason"),
		      "reason %u (%s) is not in kvreg(7)", n, kvreg_strerror(n));
	printf("kvreg(7) names all %u reasons as libkvreg does\n", checked);
	return T_PASS;
}
