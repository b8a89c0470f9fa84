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
#include <linux/kthread.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "kvreg.h"

static struct workqueue_struct *kvreg_wq;

struct kvreg_par_job {
	int (*fn)(void *ctx, unsigned int chunk);
	void *ctx;
	struct mm_struct *mm;
	bool killable;
	unsigned int nr_chunks;
	atomic_t next_chunk;
	atomic_t error;			/* first failure, 0 while none */
	atomic_t helpers_running;
	struct completion helpers_done;
};

struct kvreg_par_helper {
	struct work_struct work;
	struct kvreg_par_job *job;
};

static void kvreg_par_run(struct kvreg_par_job *job, bool caller)
{
	unsigned int chunk;
	int ret;

	while (!atomic_read(&job->error)) {
		/* Only the caller can see its own fatal signal. */
		if (caller && job->killable && fatal_signal_pending(current)) {
			atomic_cmpxchg(&job->error, 0, -EINTR);
			break;
		}
		chunk = atomic_inc_return(&job->next_chunk) - 1;
		if (chunk >= job->nr_chunks)
			break;
		ret = job->fn(job->ctx, chunk);
		if (ret)
			atomic_cmpxchg(&job->error, 0, ret);
	}
}

static void kvreg_par_helper_fn(struct work_struct *work)
{
	struct kvreg_par_helper *h =
		container_of(work, struct kvreg_par_helper, work);
	struct kvreg_par_job *job = h->job;

	if (job->mm)
		kthread_use_mm(job->mm);
	kvreg_par_run(job, false);
	if (job->mm)
		kthread_unuse_mm(job->mm);
	if (atomic_dec_and_test(&job->helpers_running))
		complete(&job->helpers_done);
}

/*
 * Call @fn(@ctx, chunk) once for every chunk in [0, @nr_chunks), on as
 * many CPUs as are online and useful. @mm (or NULL) is the user memory
 * the chunks touch; the caller must be running in it. A job with @mm is
 * one a fatal signal may cut short (-EINTR); one without, such as an
 * unpin on the way out of a killed process, always runs to the end.
 * Returns 0 or the first chunk's error.
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
		.helpers_running = ATOMIC_INIT(1),
	};
	unsigned int nr_helpers, i;
	struct kvreg_par_helper *helpers = NULL;

	nr_helpers = min3(nr_chunks, num_online_cpus(),
			  READ_ONCE(kvreg_max_threads));
	nr_helpers = nr_helpers ? nr_helpers - 1 : 0;
	if (nr_helpers)
		helpers = kcalloc(nr_helpers, sizeof(*helpers),
				  GFP_KERNEL | __GFP_NOWARN);
	if (!helpers)
		nr_helpers = 0;
	init_completion(&job.helpers_done);
	for (i = 0; i < nr_helpers; i++) {
		helpers[i].job = &job;
		INIT_WORK(&helpers[i].work, kvreg_par_helper_fn);
		atomic_inc(&job.helpers_running);
		queue_work(kvreg_wq, &helpers[i].work);
	}
	kvreg_par_run(&job, true);
	/* The caller's own count: whoever drops the last one completes. */
	if (!atomic_dec_and_test(&job.helpers_running))
		wait_for_completion(&job.helpers_done);
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
