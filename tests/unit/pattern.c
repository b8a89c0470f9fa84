// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The test pattern's word-at-a-time helpers against its definition,
 * kvt_byte(): the same bytes from kvt_fill() and kvt_fill_from(), the
 * same first offset from kvt_mismatch() at every alignment of buffer and
 * pattern, and kvt_check_ranges() failing on one stray byte anywhere in a
 * word it would skip.
 */
#include <sys/wait.h>

#include "kvtransfer.h"

#define LEN 4099

/* The helpers as they were, a byte at a time. */
static int64_t mismatch_bytes(const uint8_t *p, uint64_t off, uint64_t len,
			      uint32_t seed, uint64_t seed_off)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[off + i] != kvt_byte(seed, seed_off + i))
			return (int64_t)(off + i);
	return -1;
}

/* Whether kvt_check_ranges() fails the program on @b. */
static bool ranges_fail(const uint8_t *b, const uint64_t *offs, unsigned int n,
			uint64_t width)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		/* Its message would read as this test's failure. */
		freopen("/dev/null", "w", stderr);
		kvt_check_ranges(b, LEN, offs, n, width, 7);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	return !WIFEXITED(status) || WEXITSTATUS(status);
}

int main(void)
{
	static uint8_t buf[LEN + 16], want[LEN + 16];
	uint64_t offs[2] = { 13, 2048 }, off, seed_off, len, i, at;
	unsigned int checked = 0;

	for (off = 0; off < 9; off++) {
		memset(buf, 0xEE, sizeof(buf));
		kvt_fill(buf + off, LEN, 3);
		for (i = 0; i < LEN; i++)
			CHECK(buf[off + i] == kvt_byte(3, i),
			      "fill at +%llu: byte %llu", (unsigned long long)off,
			      (unsigned long long)i);
		CHECK(buf[off + LEN] == 0xEE, "fill wrote past its end");
	}

	/* Every buffer and pattern alignment, lengths around a word. */
	for (off = 0; off < 8; off++)
		for (seed_off = 0; seed_off < 8; seed_off++)
			for (len = 0; len < 40; len++) {
				for (i = 0; i < len; i++)
					want[off + i] = kvt_byte(5, seed_off + i);
				memset(buf, 0xEE, sizeof(buf));
				kvt_fill_from(buf + off, len, 5, seed_off);
				CHECK(!memcmp(buf + off, want + off, len) &&
				      buf[off + len] == 0xEE,
				      "fill from %llu at +%llu, %llu bytes",
				      (unsigned long long)seed_off,
				      (unsigned long long)off,
				      (unsigned long long)len);
				CHECK(kvt_mismatch(want, off, len, 5, seed_off) < 0,
				      "clean %llu/%llu/%llu",
				      (unsigned long long)off,
				      (unsigned long long)seed_off,
				      (unsigned long long)len);
				for (at = 0; at < len; at++) {
					memcpy(buf, want, sizeof(buf));
					buf[off + at] ^= 0x10;
					if (at + 3 < len)
						buf[off + at + 3] ^= 0x01;
					CHECK(kvt_mismatch(buf, off, len, 5, seed_off) ==
					      mismatch_bytes(buf, off, len, 5, seed_off) &&
					      kvt_mismatch(buf, off, len, 5, seed_off) ==
					      (int64_t)(off + at),
					      "byte %llu of %llu/%llu/%llu",
					      (unsigned long long)at,
					      (unsigned long long)off,
					      (unsigned long long)seed_off,
					      (unsigned long long)len);
					checked++;
				}
			}

	/* Two written ranges; then a stray byte at each place in turn. */
	memset(buf, 0, sizeof(buf));
	for (i = 0; i < 2; i++)
		for (at = 0; at < 9; at++)
			buf[offs[i] + at] = kvt_byte(7, offs[i] + at);
	CHECK(!ranges_fail(buf, offs, 2, 9), "clean ranges refused");
	for (at = 0; at < 24; at++) {
		uint64_t stray = at < 16 ? at : LEN - 1 - (at - 16);

		buf[stray] ^= 0x40;
		CHECK(ranges_fail(buf, offs, 2, 9),
		      "a stray byte at %llu passed", (unsigned long long)stray);
		buf[stray] ^= 0x40;
	}
	buf[2048 + 4] ^= 1;
	CHECK(ranges_fail(buf, offs, 2, 9), "a wrong byte in a range passed");
	printf("%u corruptions found where the byte loop finds them\n", checked);
	return T_PASS;
}
