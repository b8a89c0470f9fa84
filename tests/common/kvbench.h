/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/* Clock and medians for the benchmarks. */
#ifndef KVBENCH_H
#define KVBENCH_H

#include <stdlib.h>
#include <time.h>

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

#endif /* KVBENCH_H */
