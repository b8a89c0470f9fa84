/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvreg's tracepoints: where a registration's and a transfer's time goes,
 * timed as the RDMA core and nvme time themselves, by the trace clock at
 * each stage. Off, each costs a patched-out branch. tests/bench reads
 * them from tracefs (events/kvreg).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kvreg

#if !defined(KVREG_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define KVREG_TRACE_H

#include <linux/tracepoint.h>

#define kvreg_show_stage(s)						\
	__print_symbolic(s,						\
		{ 0, "register" }, { 1, "devices" },			\
		{ 2, "check_memory" }, { 3, "pin" },			\
		{ 4, "pin_sg_build" }, { 5, "dma_map" },		\
		{ 6, "alloc_map_mr" }, { 7, "cpu_ib_alloc_mr" },	\
		{ 8, "cpu_ib_map_mr_sg" }, { 9, "post_reg_mr" },	\
		{ 10, "publish" }, { 11, "deregister" },		\
		{ 12, "dereg_mr" }, { 13, "dma_unmap" },		\
		{ 14, "unpin" })

/* A registration stage ended after @ns (enum kvreg_stage's order). */
TRACE_EVENT(kvreg_stage,
	    TP_PROTO(int stage, u64 ns),
	    TP_ARGS(stage, ns),
	    TP_STRUCT__entry(__field(int, stage)
			     __field(u64, ns)),
	    TP_fast_assign(__entry->stage = stage;
			   __entry->ns = ns;),
	    TP_printk("stage=%s ns=%llu",
		      kvreg_show_stage(__entry->stage), __entry->ns)
);

/* An entry point with a count: of operations, or of completions. */
DECLARE_EVENT_CLASS(kvreg_count,
		    TP_PROTO(u32 count),
		    TP_ARGS(count),
		    TP_STRUCT__entry(__field(u32, count)),
		    TP_fast_assign(__entry->count = count;),
		    TP_printk("count=%u", __entry->count)
);

/* SUBMIT began, with @count operations. */
DEFINE_EVENT(kvreg_count, kvreg_submit,
	     TP_PROTO(u32 count),
	     TP_ARGS(count)
);

/*
 * A file's release found @count operations in flight and aborted all its
 * rail groups, instead of waiting for the peers to finish them.
 */
DEFINE_EVENT(kvreg_count, kvreg_release_abort,
	     TP_PROTO(u32 count),
	     TP_ARGS(count)
);

#define kvreg_show_step(s)						\
	__print_symbolic(s, { 0, "resolve" }, { 1, "rails" },		\
			 { 2, "reserve" })

/* An operation of a SUBMIT passed a step of its pipeline (ops.c). */
TRACE_EVENT(kvreg_op_step,
	    TP_PROTO(u64 user_data, int step),
	    TP_ARGS(user_data, step),
	    TP_STRUCT__entry(__field(u64, user_data)
			     __field(int, step)),
	    TP_fast_assign(__entry->user_data = user_data;
			   __entry->step = step;),
	    TP_printk("user_data=%llu step=%s",
		      __entry->user_data, kvreg_show_step(__entry->step))
);

/* One doorbell: @wrs work requests of @parts operation parts. */
TRACE_EVENT(kvreg_chain_post,
	    TP_PROTO(u32 dev, u32 wrs, u32 parts, int ret),
	    TP_ARGS(dev, wrs, parts, ret),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, wrs)
			     __field(u32, parts)
			     __field(int, ret)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->wrs = wrs;
			   __entry->parts = parts;
			   __entry->ret = ret;),
	    TP_printk("dev=%u wrs=%u parts=%u ret=%d",
		      __entry->dev, __entry->wrs,
		      __entry->parts, __entry->ret)
);

/* Something that befell QP @qpn on device @dev. */
DECLARE_EVENT_CLASS(kvreg_qp_event,
		    TP_PROTO(u32 dev, u32 qpn),
		    TP_ARGS(dev, qpn),
		    TP_STRUCT__entry(__field(u32, dev)
				     __field(u32, qpn)),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->qpn = qpn;),
		    TP_printk("dev=%u qpn=%u", __entry->dev, __entry->qpn)
);

/*
 * An engine's chain was flushed at its first request and is posted once
 * more on the engine connected again: something else errored the QP.
 */
DEFINE_EVENT(kvreg_qp_event, kvreg_engine_retry,
	     TP_PROTO(u32 dev, u32 qpn),
	     TP_ARGS(dev, qpn)
);

/*
 * A late or killed chain's flush failed (the QP could not be moved to the
 * error state): the call returned, and @running says whether the chain
 * was still in flight then. The QP's next chain, or its destruction,
 * waits for its end.
 */
TRACE_EVENT(kvreg_chain_unflushed,
	    TP_PROTO(u32 dev, u32 qpn, bool running),
	    TP_ARGS(dev, qpn, running),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, qpn)
			     __field(bool, running)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->qpn = qpn;
			   __entry->running = running;),
	    TP_printk("dev=%u qpn=%u running=%d", __entry->dev, __entry->qpn,
		      __entry->running)
);

/*
 * The unflushed chain's end was seen: by the QP's next chain, which then
 * went on, or by the QP's destruction, which drained it.
 */
DEFINE_EVENT(kvreg_qp_event, kvreg_chain_collected,
	     TP_PROTO(u32 dev, u32 qpn),
	     TP_ARGS(dev, qpn)
);

/*
 * A rail group's last put stopped its mend while that was connecting to
 * @port: close and UNIMPORT do not wait for the CM's steps to time out.
 */
TRACE_EVENT(kvreg_connect_stopped,
	    TP_PROTO(u16 port),
	    TP_ARGS(port),
	    TP_STRUCT__entry(__field(u16, port)),
	    TP_fast_assign(__entry->port = port;),
	    TP_printk("port=%u", __entry->port)
);

/*
 * A rail group's mend tried rail @rail again: @ret 0 if it is connected,
 * else the error and KVREG_REASON_* @reason of the attempt.
 */
TRACE_EVENT(kvreg_rail_mend,
	    TP_PROTO(u32 rail, int ret, u32 reason),
	    TP_ARGS(rail, ret, reason),
	    TP_STRUCT__entry(__field(u32, rail)
			     __field(int, ret)
			     __field(u32, reason)),
	    TP_fast_assign(__entry->rail = rail;
			   __entry->ret = ret;
			   __entry->reason = reason;),
	    TP_printk("rail=%u ret=%d reason=%u", __entry->rail,
		      __entry->ret, __entry->reason)
);

/* SUBMIT returns, having accepted @accepted. */
TRACE_EVENT(kvreg_submit_done,
	    TP_PROTO(u32 accepted, int ret),
	    TP_ARGS(accepted, ret),
	    TP_STRUCT__entry(__field(u32, accepted)
			     __field(int, ret)),
	    TP_fast_assign(__entry->accepted = accepted;
			   __entry->ret = ret;),
	    TP_printk("accepted=%u ret=%d",
		      __entry->accepted, __entry->ret)
);

/* An operation completed into its file's list, REAP's to take. */
TRACE_EVENT(kvreg_op_done,
	    TP_PROTO(u64 user_data, int ret, int wc_status),
	    TP_ARGS(user_data, ret, wc_status),
	    TP_STRUCT__entry(__field(u64, user_data)
			     __field(int, ret)
			     __field(int, wc_status)),
	    TP_fast_assign(__entry->user_data = user_data;
			   __entry->ret = ret;
			   __entry->wc_status = wc_status;),
	    TP_printk("user_data=%llu ret=%d wc_status=%d",
		      __entry->user_data, __entry->ret,
		      __entry->wc_status)
);

/* REAP began, to wait for @min_complete. */
TRACE_EVENT(kvreg_reap,
	    TP_PROTO(u32 min_complete, u32 capacity),
	    TP_ARGS(min_complete, capacity),
	    TP_STRUCT__entry(__field(u32, min_complete)
			     __field(u32, capacity)),
	    TP_fast_assign(__entry->min_complete = min_complete;
			   __entry->capacity = capacity;),
	    TP_printk("min_complete=%u capacity=%u",
		      __entry->min_complete,
		      __entry->capacity)
);

/* REAP returns @count completions, oldest first. */
DEFINE_EVENT(kvreg_count, kvreg_reap_done,
	     TP_PROTO(u32 count),
	     TP_ARGS(count)
);

/* A synchronous TRANSFER began. */
TRACE_EVENT(kvreg_transfer,
	    TP_PROTO(u32 opcode, u64 length),
	    TP_ARGS(opcode, length),
	    TP_STRUCT__entry(__field(u32, opcode)
			     __field(u64, length)),
	    TP_fast_assign(__entry->opcode = opcode;
			   __entry->length = length;),
	    TP_printk("opcode=%u length=%llu",
		      __entry->opcode, __entry->length)
);

/* A synchronous TRANSFER returns. */
TRACE_EVENT(kvreg_transfer_done,
	    TP_PROTO(int ret),
	    TP_ARGS(ret),
	    TP_STRUCT__entry(__field(int, ret)),
	    TP_fast_assign(__entry->ret = ret;),
	    TP_printk("ret=%d",
		      __entry->ret)
);

#endif /* KVREG_TRACE_H */

/* Out of tree: define_trace.h finds this file through -I kmod. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
