// SPDX-License-Identifier: GPL-2.0-only
/*
 * Run a job's chunks on several CPUs: the calling thread works too, and
 * helpers from an unbound workqueue join it, borrowing the caller's mm
 * when the job pins user memory. Helpers are an optimisation only: when
 * none can be had the caller does every chunk itself, so this never fails
 * for want of them. A failed chunk stops the others taking new chunks;
 * the job's own bookkeeping says what the finished chunks did.
 */
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/ktime.h>
#include <linux/kthread.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "kvreg.h"

static struct workqueue_struct *kvreg_wq;

/*
 * Handing a chunk to a helper costs a queue_work(), a wake-up of an idle
 * CPU and an mm switch: tens of microseconds on hardware, up to a timer
 * tick under emulation. A job whose first chunk took less than this is
 * finished by the caller alone: helpers would only arrive after it.
 */
#define KVREG_PAR_HANDOFF_NS	(50 * NSEC_PER_USEC)

struct kvreg_par_job {
	int (*fn)(void *ctx, unsigned int chunk);
	void *ctx;
	struct mm_struct *mm;
	bool killable;
	unsigned int nr_chunks;
	atomic_t next_chunk;
	atomic_t error;			/* first failure, 0 while none */
};

struct kvreg_par_helper {
	struct work_struct work;
	struct kvreg_par_job *job;
};

/* Take and run one chunk; false when none is left or the job failed. */
static bool kvreg_par_step(struct kvreg_par_job *job, bool caller)
{
	unsigned int chunk;
	int ret;

	if (atomic_read(&job->error))
		return false;
	/* Only the caller can see its own fatal signal. */
	if (caller && job->killable && fatal_signal_pending(current)) {
		atomic_cmpxchg(&job->error, 0, -EINTR);
		return false;
	}
	chunk = atomic_inc_return(&job->next_chunk) - 1;
	if (chunk >= job->nr_chunks)
		return false;
	ret = job->fn(job->ctx, chunk);
	if (ret)
		atomic_cmpxchg(&job->error, 0, ret);
	return true;
}

static void kvreg_par_helper_fn(struct work_struct *work)
{
	struct kvreg_par_helper *h =
		container_of(work, struct kvreg_par_helper, work);
	struct kvreg_par_job *job = h->job;

	if (job->mm)
		kthread_use_mm(job->mm);
	while (kvreg_par_step(job, false))
		;
	if (job->mm)
		kthread_unuse_mm(job->mm);
}

/* Helpers worth calling, judged by what the caller's first chunk took. */
static unsigned int kvreg_par_nr_helpers(struct kvreg_par_job *job,
					 u64 first_chunk_ns)
{
	unsigned int taken = atomic_read(&job->next_chunk);
	unsigned int left = taken < job->nr_chunks ?
			    job->nr_chunks - taken : 0;
	unsigned int cpus = num_online_cpus();
	unsigned int threads = READ_ONCE(kvreg_max_threads);

	if (!left || first_chunk_ns < KVREG_PAR_HANDOFF_NS ||
	    atomic_read(&job->error))
		return 0;
	return min3(left, cpus ? cpus - 1 : 0, threads ? threads - 1 : 0);
}

/*
 * Call @fn(@ctx, chunk) once for every chunk in [0, @nr_chunks), on as
 * many CPUs as are online and useful. @mm (or NULL) is the user memory
 * the chunks touch; the caller must be running in it. A job with @mm is
 * one a fatal signal may cut short (-EINTR); one without, such as an
 * unpin on the way out of a killed process, always runs to the end.
 * The caller never waits for a helper that has not started: once the
 * chunks are all taken, one still queued is cancelled, and only a helper
 * in the middle of a chunk is waited for. Returns 0 or the first chunk's
 * error.
 */
int kvreg_parallel(unsigned int nr_chunks,
		   int (*fn)(void *ctx, unsigned int chunk), void *ctx,
		   struct mm_struct *mm)
{
	struct kvreg_par_job job = {
		.fn = fn,
		.ctx = ctx,
		.mm = mm,
		.killable = mm,
		.nr_chunks = nr_chunks,
		.next_chunk = ATOMIC_INIT(0),
		.error = ATOMIC_INIT(0),
	};
	struct kvreg_par_helper *helpers = NULL;
	unsigned int nr_helpers, i;
	u64 t0 = ktime_get_ns();

	if (!kvreg_par_step(&job, true))
		return atomic_read(&job.error);
	nr_helpers = kvreg_par_nr_helpers(&job, ktime_get_ns() - t0);
	if (nr_helpers)
		helpers = kcalloc(nr_helpers, sizeof(*helpers),
				  GFP_KERNEL | __GFP_NOWARN);
	if (!helpers)
		nr_helpers = 0;
	for (i = 0; i < nr_helpers; i++) {
		helpers[i].job = &job;
		INIT_WORK(&helpers[i].work, kvreg_par_helper_fn);
		queue_work(kvreg_wq, &helpers[i].work);
	}
	while (kvreg_par_step(&job, true))
		;
	for (i = 0; i < nr_helpers; i++)
		cancel_work_sync(&helpers[i].work);
	kfree(helpers);
	return atomic_read(&job.error);
}

int kvreg_parallel_init(void)
{
	/* Unbound: helpers go to idle CPUs, not the one that asked. */
	kvreg_wq = alloc_workqueue("kvreg", WQ_UNBOUND, 0);
	return kvreg_wq ? 0 : -ENOMEM;
}

void kvreg_parallel_exit(void)
{
	destroy_workqueue(kvreg_wq);
}
