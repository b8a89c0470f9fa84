/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * kvreg's tracepoints (kmod/trace.h) for the benchmarks: turn events on,
 * run a case, then walk what the trace buffer holds, one event at a time.
 */
#ifndef KVTRACE_H
#define KVTRACE_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "kvtest.h"

static const char *kvtr_dir(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[128];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/kvreg", dirs[i]);
		if (!access(path, F_OK))
			return dirs[i];
	}
	/* Not mounted in a bare guest: mount it where it belongs. */
	mount("nodev", dirs[0], "tracefs", 0, NULL);
	snprintf(path, sizeof(path), "%s/events/kvreg", dirs[0]);
	CHECK(!access(path, F_OK), "no kvreg events in tracefs");
	return dirs[0];
}

static void kvtr_put(const char *rel, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", kvtr_dir(), rel);
	CHECK(!kvt_put(path, text), "write %s", path);
}

/* Only kvreg's @events (space-separated names) on, the buffer empty. */
static inline void kvtr_start(const char *events)
{
	char one[64], rel[128], path[256];
	const char *p = events;
	int n, fd;

	kvtr_put("tracing_on", "0\n");
	/*
	 * With task names recorded (the default), the first event enabled
	 * hooks sched_switch and sched_wakeup, patching the scheduler's own
	 * text while every CPU runs it; under TCG a vCPU may then run a
	 * stale translation of the patch site and die on its int3 (seen in
	 * ttwu_do_activate on 7.2). kvreg's events need no task names.
	 */
	kvtr_put("options/record-cmd", "0\n");
	kvtr_put("events/enable", "0\n");
	kvtr_put("buffer_size_kb", "16384\n");
	/* Opened with O_TRUNC, the trace file empties the buffer. */
	snprintf(path, sizeof(path), "%s/trace", kvtr_dir());
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0, "empty %s", path);
	close(fd);
	while (sscanf(p, "%63s%n", one, &n) == 1) {
		snprintf(rel, sizeof(rel), "events/kvreg/%s/enable", one);
		kvtr_put(rel, "1\n");
		p += n;
	}
	kvtr_put("tracing_on", "1\n");
}

static inline void kvtr_stop(void)
{
	kvtr_put("tracing_on", "0\n");
	kvtr_put("events/enable", "0\n");
}

/*
 * One event of the buffer: its time in microseconds, its name and its
 * "key=value ..." text. False at the end.
 */
struct kvtr_event {
	double us;
	char name[64];
	const char *args;
};

static inline bool kvtr_next(FILE *f, struct kvtr_event *ev)
{
	static char line[1024];
	double s;
	char *at;

	while (fgets(line, sizeof(line), f)) {
		/* "task-pid [cpu] flags   12.345678: name: args" */
		at = strstr(line, ": kvreg_");
		if (line[0] == '#' || !at)
			continue;
		*at = 0;
		at += 2;
		if (sscanf(strrchr(line, ' ') ? strrchr(line, ' ') + 1 : line,
			   "%lf", &s) != 1 ||
		    sscanf(at, "%63[^:]", ev->name) != 1)
			continue;
		ev->us = s * 1e6;
		ev->args = at + strlen(ev->name) + 1;
		return true;
	}
	return false;
}

static inline FILE *kvtr_open(void)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", kvtr_dir());
	f = fopen(path, "r");
	CHECK(f, "open %s", path);
	return f;
}

/* The number after "@key=" in @args, or @dflt. */
static inline unsigned long long kvtr_arg(const char *args, const char *key,
					  unsigned long long dflt)
{
	char pat[64];
	const char *at;
	unsigned long long v;

	snprintf(pat, sizeof(pat), "%s=", key);
	at = strstr(args, pat);
	if (!at || sscanf(at + strlen(pat), "%llu", &v) != 1)
		return dflt;
	return v;
}

#endif /* KVTRACE_H */
