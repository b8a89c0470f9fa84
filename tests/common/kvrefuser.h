/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * A peer that is not kvreg and refuses every connection: a plain
 * librdmacm listener, on a thread of its own, that answers each request
 * with rdma_reject() and private data of its own, and counts them. What
 * it counts is every request anyone sent it, IMPORTs and mends alike.
 */
#ifndef KVREFUSER_H
#define KVREFUSER_H

#include <poll.h>
#include <pthread.h>

#include "kvhostile.h"

struct kvt_refuser {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	uint16_t port;
	volatile int stop;
	volatile unsigned int rejected;
	pthread_t thread;
};

static void *kvt_refuse(void *arg)
{
	static const char why[] = "not kvreg";
	struct kvt_refuser *r = arg;
	struct rdma_cm_event *ev;
	struct pollfd pfd = { .fd = r->ch->fd, .events = POLLIN };

	while (!r->stop) {
		if (poll(&pfd, 1, 100) != 1)
			continue;
		CHECK(!rdma_get_cm_event(r->ch, &ev), "rdma_get_cm_event: %s",
		      strerror(errno));
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			/*
			 * Counted before the REJ goes: the importer may have
			 * it, and look at the count, before rdma_reject()
			 * returns here.
			 */
			r->rejected++;
			CHECK(!rdma_reject(ev->id, why, sizeof(why)),
			      "rdma_reject: %s", strerror(errno));
		}
		rdma_ack_cm_event(ev);
	}
	return NULL;
}

/* Listening on @addr, a port of its own choosing, until stopped. */
static inline void kvt_refuser_start(struct kvt_refuser *r, const char *addr)
{
	memset(r, 0, sizeof(*r));
	r->port = kvt_rdma_listen(addr, &r->ch, &r->listen_id);
	CHECK(!pthread_create(&r->thread, NULL, kvt_refuse, r),
	      "pthread_create");
}

static inline void kvt_refuser_stop(struct kvt_refuser *r)
{
	r->stop = 1;
	CHECK(!pthread_join(r->thread, NULL), "pthread_join");
	rdma_destroy_id(r->listen_id);
	rdma_destroy_event_channel(r->ch);
}

#endif /* KVREFUSER_H */
