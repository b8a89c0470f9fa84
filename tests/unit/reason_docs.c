// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * kvreg(7)'s table of reasons says what libkvreg says: each reason the
 * library knows is there, under the name kvreg_strerror() gives it and
 * with the fix kvreg_format_error() gives, and the page lists no reason
 * the library does not know. error.c is where names and fixes are
 * written; the page must copy them word for word.
 */
#include "kvtest.h"

/* What kvreg_format_error() tells to do about @reason: after "(EIO); ". */
static const char *fix_of(uint32_t reason, char *buf, size_t size)
{
	struct kvreg_error err = { .reason = reason };
	const char *fix;

	kvreg_format_error(&err, -EIO, buf, size);
	fix = strstr(buf, "(EIO); ");
	CHECK(fix, "reason %u: no fix in \"%s\"", reason, buf);
	return fix + strlen("(EIO); ");
}

/* @src up to @end into @dst, groff's \- read as the plain hyphen it is. */
static void unescape(char *dst, const char *src, const char *end)
{
	for (; src < end; src++) {
		if (src[0] == '\\' && src[1] == '-')
			src++;
		*dst++ = *src;
	}
	*dst = '\0';
}

#define MAX_REASON	2000

int main(void)
{
	static bool listed[MAX_REASON];
	char line[1024], name[512], fix[1024], msg[2048];
	unsigned int n, reason = MAX_REASON, checked = 0, differ = 0;
	FILE *f = fopen("man/kvreg.7", "r");

	if (!f)
		kvt_skip("man/kvreg.7 not found: run from the source tree");
	while (fgets(line, sizeof(line), f)) {
		char *colon;

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
		unescape(name, line, colon);
		CHECK(!strcmp(name, kvreg_strerror(reason)),
		      "kvreg(7) calls reason %u \"%s\", libkvreg \"%s\"", reason,
		      name, kvreg_strerror(reason));
		unescape(fix, colon + 2, colon + strcspn(colon, "\n"));
		/*
		 * Two fixes depend on the record: BAD_ARGUMENT's on the
		 * argument, DEVICE_ACCESS's on the node's group; the page says
		 * what they depend on instead.
		 */
		if (reason != KVREG_REASON_BAD_ARGUMENT &&
		    reason != KVREG_REASON_DEVICE_ACCESS &&
		    strcmp(fix, fix_of(reason, msg, sizeof(msg)))) {
			printf("kvreg(7) says of reason %u (%s):\n  \"%s\"\n"
			       "libkvreg says:\n  \"%s\"\n", reason, name,
			       fix, fix_of(reason, msg, sizeof(msg)));
			differ++;
		}
		listed[reason] = true;
		checked++;
		reason = MAX_REASON;
	}
	fclose(f);
	CHECK(!differ, "kvreg(7) and libkvreg differ on %u fixes", differ);
	for (n = 1; n < MAX_REASON; n++)
		CHECK(listed[n] ||
		      !strcmp(kvreg_strerror(n), "unknown kvreg reason"),
		      "reason %u (%s) is not in kvreg(7)", n, kvreg_strerror(n));
	printf("kvreg(7) names all %u reasons and their fixes as libkvreg "
	       "does\n", checked);
	return T_PASS;
}
