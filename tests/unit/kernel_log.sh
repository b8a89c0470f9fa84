#!/bin/bash
# The guests' kernel-log rule (tests/guest/lib.sh): the one upstream
# report it lets through is dropped only whole and only as itself, and
# said; any other report, or that one with a kvreg frame in its trace,
# still fails the test whose slice it is in.
set -uo pipefail
# expect runs last in each pipeline: in this shell, where its verdict counts.
shopt -s lastpipe
cd "$(dirname "$0")/../.."
# shellcheck source=../guest/lib.sh
. tests/guest/lib.sh
fail=0

# The report as 6.12's rxe prints it (trimmed of registers), from a
# removal_remote run; @1, a frame put into its trace above ib_mad's.
report() {
	cat <<REPORT
[  341.101] ------------[ cut here ]------------
[  341.102] WARNING: CPU: 1 PID: 52 at drivers/infiniband/sw/rxe/rxe_verbs.c:1057 rxe_post_recv+0x1d1/0x200 [rdma_rxe]
[  341.103] Modules linked in: kvreg(OE) rdma_ucm rdma_cm iw_cm ib_cm rdma_rxe ib_uverbs ib_core
[  341.104] Workqueue: ib-comp-unb-wq ib_cq_poll_work [ib_core]
[  341.105] Call Trace:
[  341.106]  <TASK>
[  341.107]  ${1:-rxe_post_recv+0x1d1/0x200 [rdma_rxe]}
[  341.107]  ib_mad_post_receive_mads+0x1b7/0x3c0 [ib_core]
[  341.108]  ib_mad_recv_done+0x4d5/0xa30 [ib_core]
[  341.109]  __ib_process_cq+0x84/0x1a0 [ib_core]
[  341.110]  ib_cq_poll_work+0x2b/0x80 [ib_core]
[  341.111]  </TASK>
[  341.112] ---[ end trace 0000000000000000 ]---
[  341.113] rdma_rxe: qp#1 rxe_post_recv: qp has been destroyed
REPORT
}

# expect NAME BAD-AFTER(0|1) TOLERATED(0|1): the log on stdin.
expect() {
	local kept said bad
	kept=$(tolerate 2>/tmp/kernel_log.said)
	said=$(grep -c 'kvreg-test: tolerated' /tmp/kernel_log.said)
	bad=0
	grep -Eq "$KERNEL_BAD" <<< "$kept" && bad=1
	if [ "$bad" != "$2" ] || [ "$said" != "$3" ]; then
		echo "$1: a report left $bad (want $2), $said said tolerated" \
		     "(want $3)"
		fail=1
	fi
}

report | expect "the upstream report" 0 1
{ echo "[  340.000] kvreg-test: begin x"; report; echo "[  342.0] after"; } |
	expect "the upstream report amid other lines" 0 1
report "kvreg_conn_put+0x10/0x40 [kvreg]" |
	expect "the report with a kvreg frame" 1 0
report | sed 's/ib_mad_post_receive_mads+/ib_post_recv+/' |
	expect "rxe_post_recv's WARNING from another caller" 1 0
report | sed 's/rxe_post_recv+0x1d1/rxe_post_send+0x1d1/' |
	expect "another WARNING from ib_mad" 1 0
{ report; report | sed 's/WARNING: CPU/WARNING: at CPU/;
	s/rxe_post_recv+/rxe_requester+/'; } |
	expect "the upstream report, then another" 1 1
{ report | head -n 6; } | expect "a report cut short" 1 0
echo "[  1.0] BUG: kernel NULL pointer dereference" |
	expect "a BUG" 1 0
[ "$fail" -eq 0 ] && echo "the upstream ib_mad report alone is tolerated, whole"
exit "$fail"
