// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tracepoints' one instance (trace.h), and the registration stages'
 * timing through them: a stage's clock is read only while its event is
 * on, so production pays nothing for the profile it does not take.
 */
#include "kvreg.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

u64 kvreg_stage_begin(void)
{
	return trace_kvreg_stage_enabled() ? ktime_get_ns() : 0;
}

/* A stage begun before the event was turned on is not reported. */
void kvreg_stage_end(enum kvreg_stage stage, u64 start_ns)
{
	if (start_ns)
		trace_kvreg_stage(stage, ktime_get_ns() - start_ns);
}
