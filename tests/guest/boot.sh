#!/bin/bash
# Boot Debian's kernel in QEMU with the host's root read-only over 9p and
# run one script in it.
#   boot.sh OUTDIR SCRIPT [ARGS...]
# OUTDIR (host) is writable in the guest at /kvreg-out and receives rc and
# dmesg.log. Exits with the script's status; 124 when the guest hung.
# KVREG_KERNEL=debug boots the debug kernel (tests/guest/debug-kernel.sh)
# instead of Debian's; KVREG_KERNEL=bookworm, bullseye, trixie or forky
# boots that release's kernel with its root from tests/guest/chroot.sh
# (bookworm's: the host's under an overlay, where DKMS and the packages
# can be installed), and the working tree mounted at the same path as on
# the host.
# For a pair of guests (tests/guest/pair.sh): KVREG_NET=fd:N, a connected
# stream socket at fd N (tests/guest/unix-link.py makes them), gives the
# guest a virtio-net NIC (MAC KVREG_MAC) on a QEMU socket link,
# KVREG_NET2 (MAC KVREG_MAC2) a second one, and KVREG_XCHG=DIR a
# directory both guests share at /kvreg-x. KVREG_QMP=PATH puts QEMU's
# control socket (QMP) there, for tests/guest/cable.py.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
shift
ROOT=/
SRC=
CMDLINE=
case ${KVREG_KERNEL:-debian} in
debug)
	read -r KVER VMLINUZ _ < <("$HERE/debug-kernel.sh" path)
	INITRD=$("$HERE/kernel.sh" initrd-builtin)
	# Every KASAN report, not only the first; a soft lockup at 40 s (the
	# default 20 s is met by a vCPU the host did not run, under TCG).
	# tsc=unstable: with no ACPI there is no HPET to calibrate the TSC
	# against, and under a loaded host the PIT gives nonsense (78 MHz
	# for 2.1 GHz, seen): the guest's clock then ran 27 times too fast,
	# its soft-lockup detector fired at once and every bound in seconds
	# was cut short. Unstable, the clock follows the jiffies, as it does
	# whenever the calibration fails outright.
	CMDLINE="kasan_multi_shot watchdog_thresh=20 tsc=unstable"
	MODDIR=none ;;
bookworm|bullseye|trixie|forky)
	read -r KVER VMLINUZ INITRD ROOT < <("$HERE/chroot.sh" "$KVREG_KERNEL" prepare)
	SRC=$(cd "$HERE/../.." && pwd)
	MODDIR=none ;;
*)
	read -r KVER VMLINUZ INITRD MODDIR < <("$HERE/kernel.sh" prepare) ;;
esac
# An RCU stall is reported after 60 s, not 21: under TCG on a loaded host
# a vCPU did not get through one userspace page fault in 21 s (clearing a
# page, 6.1, while the debug kernel was being built beside it), and the
# report failed the test it fell in; a kvreg CPU hog still shows at 60.
CMDLINE="rcupdate.rcu_cpu_stall_timeout=60${CMDLINE:+ $CMDLINE}"
NET=(-nic none)
case ${KVREG_NET:-} in
fd:*)
	NET=(-netdev "socket,id=n0,fd=${KVREG_NET#fd:}"
	     -device "virtio-net-pci,netdev=n0,mac=${KVREG_MAC:-52:54:00:4b:56:01}") ;;
esac
# A second link (eth1), for rails: the same, on its own socket.
case ${KVREG_NET2:-} in
fd:*)
	NET+=(-netdev "socket,id=n1,fd=${KVREG_NET2#fd:}"
	      -device "virtio-net-pci,netdev=n1,mac=${KVREG_MAC2:-52:54:00:4b:57:01}") ;;
esac
XCHG=()
[ -n "${KVREG_XCHG:-}" ] &&
	XCHG=(-virtfs "local,path=$KVREG_XCHG,mount_tag=kvregx,security_model=none,multidevs=remap")
QMP=()
[ -n "${KVREG_QMP:-}" ] && QMP=(-qmp "unix:$KVREG_QMP,server=on,wait=off")
SRC_SHARE=()
[ -n "$SRC" ] && SRC_SHARE=(-virtfs "local,path=$SRC,mount_tag=kvregsrc,security_model=none,readonly=on,multidevs=remap")

{
	printf 'cd %q\n' "$(pwd)"
	printf '%q ' "$@"
	printf '\n'
} > "$OUT/cmd.sh"
# One 1 GiB hugetlb page reserved at boot, on top of the memory asked
# for: integration/gigantic_page needs one, and at run time a guest's
# memory is seldom free in one aligned GiB. Only 1 GiB below 4 GiB, so
# that the rest starts at 4 GiB and its lower aligned GiB is free when
# the kernel reserves the page (early allocations come from the top).
MEM=$(( ${KVREG_GUEST_MEM:-2048} + 1024 ))
TIMEOUT=${KVREG_GUEST_TIMEOUT:-1200}
# A kernel has reached userspace within a minute or two in every run,
# the debug one on a loaded host included; one that has not after this
# long is hung (seen once: 7.2 under TCG, both vCPUs busy and not a line
# on the console for 23 minutes), and waiting for TIMEOUT would cost
# the run most of an hour.
BOOT_LIMIT=${KVREG_BOOT_LIMIT:-300}
boot() {
	local qemu start
	rm -f "$OUT/rc" "$OUT/dmesg.log" "$OUT/started"
	status=0
	timeout --foreground "$TIMEOUT" qemu-system-x86_64 \
		-machine q35,accel=tcg,max-ram-below-4g=1G -cpu max -smp 2 -m "$MEM" \
		-kernel "$VMLINUZ" -initrd "$INITRD" \
		-append "console=ttyS0 quiet loglevel=4 log_buf_len=8M panic=-1 oops=panic hugepagesz=1G hugepages=1 $CMDLINE KVREG_SETUP=$HERE/guest-setup.sh KVREG_KVER=$KVER KVREG_MODDIR=$MODDIR KVREG_SRC=$SRC KVREG_XCHG=${KVREG_XCHG:+1}" \
		-virtfs local,path="$ROOT",mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$OUT",mount_tag=kvregout,security_model=none,multidevs=remap \
		"${SRC_SHARE[@]}" "${XCHG[@]}" "${QMP[@]}" \
		"${NET[@]}" -display none -serial stdio -monitor none -no-reboot \
		< /dev/null &
	qemu=$!
	start=$SECONDS
	while [ ! -e "$OUT/started" ] && kill -0 "$qemu" 2>/dev/null; do
		if [ $((SECONDS - start)) -ge "$BOOT_LIMIT" ]; then
			echo "boot.sh: no userspace after $BOOT_LIMIT s: the kernel hung; stopping it" >&2
			kill "$qemu"	# timeout passes it on to QEMU
			break
		fi
		sleep 1
	done
	wait "$qemu" || status=$?
}
boot
# A kernel that died or hung before its userspace ran anything (seen: an
# int3 oops in sched_clock_cpu at 2 s under TCG, and the hang above) ran
# no test: boot once more. Not for a pair, whose other guest is on the
# same QEMU link: pair.sh boots both again when one ends this way.
if [ ! -s "$OUT/rc" ] && [ ! -e "$OUT/started" ] && [ -z "${KVREG_NET:-}" ]
then
	echo "boot.sh: the kernel died or hung before userspace (qemu status $status); booting once more" >&2
	boot
fi
if [ ! -s "$OUT/rc" ]; then
	echo "boot.sh: the guest did not finish (qemu status $status)" >&2
	exit 124
fi
exit "$(cat "$OUT/rc")"
