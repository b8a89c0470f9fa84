/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/* Clock and medians for the benchmarks. */
#ifndef KVBENCH_H
#define KVBENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static inline double kvb_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline double kvb_now_ms(void)
{
	return kvb_now_us() / 1e3;
}

static inline int kvb_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts @v in place. */
static inline double kvb_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), kvb_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Busy CPU time of the whole guest so far, in seconds, from /proc/stat:
 * everything but idle and iowait, softirq included (where rxe and the
 * CQ handlers run).
 */
static inline double kvb_busy_s(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n = 0;

	if (f) {
		n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]);
		fclose(f);
	}
	if (n < 8)
		return 0;
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) /
	       sysconf(_SC_CLK_TCK);
}

#endif /* KVBENCH_H */
