#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# run-in-guest.sh -- run one command in a throw-away QEMU guest that has a
# Soft-RoCE device (rxe0 on dummy0, 192.0.2.1/24)
#
# Usage: tests/rxe/run-in-guest.sh COMMAND [ARG...]
#
# The arguments are an argv, not a shell string: to run a shell snippet pass
# e.g.  run-in-guest.sh sh -c 'cd build && ctest --output-on-failure'.
# One guest boot per invocation: run a whole test suite in one command.
#
# How it works: a tiny initramfs (busybox-static + the virtio, 9p, dummy and
# rxe modules of an installed Debian kernel) boots that kernel under
# QEMU/TCG with no network device (-nic none); the host's root is shared
# read-only over 9p and the guest chroots into it, so the guest sees the
# host's own tools, libraries and build trees.  Inside the guest rdma_rxe is
# bound to a dummy netdev (rxe on "lo" does not work with rdma_cm) and the
# command runs as root in the caller's current directory.
#
# File systems in the guest (chosen for robustness):
#   /                read-only 9p view of the host's /
#   /tmp /var/tmp    fresh tmpfs each boot: real local semantics (shared
#   /run /dev/shm    mmap, unix sockets, fast) and nothing left on the host.
#                    Consequence: host paths under /tmp, /var/tmp and /run
#                    are NOT visible through the root share ...
#   $PWD             ... so the caller's current directory is always shared
#                    read-write at the same path, mounted on top of those
#                    tmpfs (a build tree under /tmp works, and tests may write
#                    logs into it, e.g. ctest's Testing/ directory).
#   RXE_SHARE_DIRS   more host directories shared read-write at the same path
#                    (colon-separated), e.g. a source tree under /tmp.  If
#                    $PWD is a CMake build tree whose source directory is
#                    hidden by a tmpfs, the source directory is shared
#                    read-only automatically.
#   $RXE_RESULTS     (/run/rxe-results) read-write share for results; the
#                    command's merged stdout+stderr is written there as
#                    output.log, which this script follows and streams to
#                    its stdout (much faster than the serial console, which
#                    carries the guest kernel's messages).
#
# Environment inside the guest: the caller's exported environment (minus
# session/terminal/make-jobserver variables), with PATH extended by the sbin
# directories, HOME set to a writable directory, and
#   RPMA_TESTING_IP=192.0.2.1  RXE_GUEST=1  RXE_DEVICE=rxe0
#   RXE_NETDEV=dummy0  RXE_RESULTS=/run/rxe-results
#
# Settings (environment of this script):
#   RXE_TIMEOUT=1500       seconds for the whole QEMU run (boot + command)
#   RXE_BOOT_TIMEOUT=300   seconds until the command must have started
#   RXE_MEM=2048 RXE_SMP=2 guest memory (MiB) and vCPUs
#   RXE_ACCEL=tcg          QEMU accelerator (KVM hangs on nested-virt hosts)
#   RXE_KERNEL_VERSION     kernel to boot (default: newest /boot/vmlinuz-<v>
#                          with /lib/modules/<v> providing rdma_rxe)
#   RXE_QEMU               QEMU binary (default qemu-system-x86_64)
#   RXE_BUSYBOX            static busybox (default: busybox in PATH or /bin)
#   RXE_WORKDIR            directory for the initramfs, console log and
#                          results (default: a fresh mktemp directory, removed
#                          after a successful run, only its logs kept after
#                          others; RXE_KEEP=1 keeps all of it)
#   RXE_SHARE_DIRS         see above
#   RXE_APPEND             extra kernel command-line arguments
#   RXE_PVH=0              boot the compressed bzImage (default: unpack it
#                          and boot the ELF through PVH, ~5 s faster)
#   RXE_QUIET=1            do not echo the guest console before the command
#   RXE_STACK=host         the system the guest runs: "host" (the host's own
#                          kernel and root, as described above) or "trixie":
#                          Debian trixie's kernel (6.12: native RDMA FLUSH and
#                          ATOMIC WRITE in rxe) with the cached trixie root of
#                          tests/trixie/root.sh (RXE_TRIXIE_PACKAGES are
#                          installed into it first) as the guest's read-only
#                          /, an emulated NVDIMM (RXE_PMEM) and the caller's
#                          directory at RXE_GUEST_CWD
#   RXE_GUEST_CWD          where the caller's directory is mounted in the
#                          guest (default: the same path; with RXE_STACK=trixie
#                          it must exist in the trixie root or lie under /tmp,
#                          e.g. /work/rpma, where tests/rxe/trixie-build.sh
#                          builds)
#   RXE_PMEM=0|1           an emulated 256 MiB NVDIMM (backing file in the
#                          work directory) made a device-DAX namespace,
#                          /dev/dax0.0, exported as RXE_DAX (default 1 with
#                          RXE_STACK=trixie, 0 otherwise)
#   RXE_LOCK               lock file that serialises guests on this machine
#                          (default ${TMPDIR:-/tmp}/rpma-rxe-guest.<uid>.lock;
#                          a TCG guest wants both cores); RXE_LOCK= disables
#
# Output: our stdout is exactly the command's output (its stdout and stderr
# merged); the guest console (kernel messages) and our own messages go to
# stderr.
#
# Exit status: the guest command's status; 77 (with "SKIPPED: ...") when the
# rig cannot run (no qemu/kernel/busybox, guest did not boot, rxe setup
# failed); 124 when RXE_TIMEOUT expired while the command ran; 125 when the
# guest died (e.g. kernel panic) while the command ran; 130 on interrupt.
#
# Binaries run in the guest must not be built with -march=native: TCG's
# "-cpu max" lacks some host instructions (SIGILL).  Everything is several
# times slower than on the host: starting a dynamically linked program
# costs ~0.1 s (more on a loaded host), an open() on the 9p root some ms;
# files on the tmpfs are fast.  Processes the command leaves running are
# killed at power-off (their output is followed for at most 5 s more).

set -euo pipefail

readonly GUEST_IP=192.0.2.1
readonly GUEST_PREFIX=24
readonly GUEST_NETDEV=dummy0
readonly GUEST_RXE=rxe0
readonly GUEST_RESULTS=/run/rxe-results
readonly START_MARK='@@RXE-COMMAND-START@@'
# 9p message size: larger than the 8 KiB default (much faster), within the
# limit (~500 KB) of the virtio transport of 6.x kernels
readonly MSIZE=262144

TIMEOUT=${RXE_TIMEOUT:-1500}
BOOT_TIMEOUT=${RXE_BOOT_TIMEOUT:-300}
MEM=${RXE_MEM:-2048}
SMP=${RXE_SMP:-2}
ACCEL=${RXE_ACCEL:-tcg}
QEMU=${RXE_QEMU:-qemu-system-x86_64}

T0=${EPOCHREALTIME//[!0-9]/}

msg() { printf 'RXE: %s\n' "$*" >&2; }

skip() {
	printf '\n*** SKIPPED: %s ***\n\n' "$*" >&2
	exit 77
}

die() { # MESSAGE [STATUS]
	printf '\n*** ERROR: %s ***\n\n' "$1" >&2
	exit "${2:-2}"
}

# elapsed since T0 (or since $1, in microseconds) as seconds with 1 decimal
elapsed() {
	local now=${EPOCHREALTIME//[!0-9]/} since=${1:-$T0} d
	d=$(((now - since) / 100000))
	printf '%d.%d' $((d / 10)) $((d % 10))
}

# find_tool NAME -- print the path of NAME, also searching the sbin dirs
find_tool() {
	PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" command -v "$1" || true
}

[[ $# -ge 1 ]] || die "usage: $0 COMMAND [ARG...]" 2

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
STACK=${RXE_STACK:-host}
# the packages the trixie guest needs in the trixie root (beyond the lane's)
TRIXIE_GUEST_PACKAGES=$(sed -e 's/#.*//' "$here/trixie-guest-packages.txt" 2>/dev/null | tr -s ' \t\n' ' ')
case $STACK in
host) SYSROOT= PMEM=${RXE_PMEM:-0} ;;
trixie) PMEM=${RXE_PMEM:-1} ;;
*) die "RXE_STACK must be host or trixie, not '$STACK'" 2 ;;
esac

# one guest at a time: wait for any other run of this script to finish
LOCK=${RXE_LOCK-${TMPDIR:-/tmp}/rpma-rxe-guest.$(id -u).lock}
if [[ -n $LOCK ]] && command -v flock >/dev/null; then
	exec 8>>"$LOCK" || die "cannot open the lock file $LOCK" 2
	if ! flock -n 8; then
		msg "waiting for another guest run to finish ($LOCK)"
		flock 8
		T0=${EPOCHREALTIME//[!0-9]/}
	fi
fi
[[ $TIMEOUT =~ ^[0-9]+$ && $BOOT_TIMEOUT =~ ^[0-9]+$ ]] ||
	die "RXE_TIMEOUT and RXE_BOOT_TIMEOUT must be whole seconds" 2

# ------------------------------------------------------------------ host tools

if [[ $STACK == trixie ]]; then
	# shellcheck disable=SC2086
	SYSROOT=$(bash "$here/../trixie/root.sh" $TRIXIE_GUEST_PACKAGES ${RXE_TRIXIE_PACKAGES:-}) ||
		skip "no trixie root (tests/trixie/root.sh failed)"
	[[ -n ${RXE_BUSYBOX:-} ]] || RXE_BUSYBOX=$SYSROOT/usr/bin/busybox
fi

QEMU_BIN=$(find_tool "$QEMU")
[[ -n $QEMU_BIN ]] || skip "$QEMU not found (install qemu-system-x86)"
TIMEOUT_BIN=$(find_tool timeout)
[[ -n $TIMEOUT_BIN ]] || skip "timeout(1) not found (install coreutils)"
MODPROBE=$(find_tool modprobe)
[[ -n $MODPROBE ]] || skip "modprobe not found (install kmod)"

BUSYBOX=${RXE_BUSYBOX:-$(find_tool busybox)}
[[ -n $BUSYBOX && -x $BUSYBOX ]] || skip "busybox not found (install busybox-static)"
# the initramfs has no libc: busybox must be static (ldd lists no library)
if LC_ALL=C ldd "$BUSYBOX" 2>&1 | grep -q '=>'; then
	skip "$BUSYBOX is dynamically linked (install busybox-static)"
fi

# --------------------------------------------------------------------- kernel

# has_rxe VERSION -- the modules of VERSION provide rdma_rxe
has_rxe() {
	[[ -f $SYSROOT/lib/modules/$1/modules.dep ]] &&
		"$MODPROBE" ${SYSROOT:+-d "$SYSROOT"} -S "$1" --show-depends rdma_rxe >/dev/null 2>&1
}

KVER=${RXE_KERNEL_VERSION:-}
if [[ -z $KVER ]]; then
	candidates=()
	for img in "$SYSROOT"/boot/vmlinuz-*; do
		[[ -e $img ]] || continue
		v=${img#"$SYSROOT"/boot/vmlinuz-}
		has_rxe "$v" && candidates+=("$v")
	done
	[[ ${#candidates[@]} -gt 0 ]] ||
		skip "no /boot/vmlinuz-<ver> with rdma_rxe in /lib/modules/<ver> (install linux-image-amd64)"
	KVER=$(printf '%s\n' "${candidates[@]}" | sort -V | tail -n 1)
fi
KERNEL=$SYSROOT/boot/vmlinuz-$KVER
[[ -f $KERNEL ]] || skip "$KERNEL not found"
[[ -r $KERNEL ]] || skip "$KERNEL is not readable by $(id -un) (run as root or chmod a+r it)"
has_rxe "$KVER" || skip "kernel $KVER has no rdma_rxe module"

# elf_complete FILE -- FILE is an ELF file not cut short (its section header
# table, which the linker puts near the end, lies within the file)
elf_complete() {
	local magic shoff ent num size
	magic=$(head -c 4 "$1" | od -An -t x1 | tr -d ' \n')
	[[ $magic == 7f454c46 ]] || return 1
	read -r shoff < <(od -An -t u8 -j 40 -N 8 "$1")
	read -r ent num < <(od -An -t u2 -j 58 -N 4 "$1")
	size=$(stat -c %s "$1")
	((shoff > 0 && shoff + ent * num <= size))
}

# extract_vmlinux BZIMAGE OUT -- unpack the ELF kernel inside a bzImage, as
# the kernel's scripts/extract-vmlinux does (the decompressor may complain
# about the data after the compressed stream: the result is checked instead)
extract_vmlinux() {
	local spec magic tool off
	for spec in $'\xfd7zXZ:xz' $'\x28\xb5\x2f\xfd:zstd' $'\x1f\x8b\x08:gzip'; do
		magic=${spec%%:*} tool=${spec#*:}
		command -v "$tool" >/dev/null || continue
		while IFS=: read -r off _; do
			{ tail -c +$((off + 1)) "$1" | "$tool" -dc >"$2"; } 2>/dev/null || true
			elf_complete "$2" && return 0
		done < <(LC_ALL=C grep -Fabo -- "$magic" "$1" | head -n 4)
	done
	rm -f "$2"
	return 1
}

# ---------------------------------------------------------------- work space

KEEP=${RXE_KEEP:-0}
if [[ -n ${RXE_WORKDIR:-} ]]; then
	mkdir -p "$RXE_WORKDIR"
	W=$(cd "$RXE_WORKDIR" && pwd -P)
	KEEP=1
else
	W=$(mktemp -d "${TMPDIR:-/tmp}/rxe-guest.XXXXXX")
fi
R=$W/results
rm -rf "$W/initramfs" "$W/initramfs.cpio" "$W/vmlinux" "$R" "$W/console.log" \
	"$W/console.fifo" "$W/boot-timeout" "$W/boot-time"
mkdir -p "$W/initramfs" "$R"

QPID=
WDPID=
XPID=
TPID=
RC=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local st=$?
	[[ -n $RC ]] && st=$RC
	trap - EXIT INT TERM
	if [[ -n $WDPID ]]; then kill "$WDPID" 2>/dev/null || true; fi
	if [[ -n $XPID ]]; then kill "$XPID" 2>/dev/null || true; fi
	if [[ -n $TPID ]]; then kill "$TPID" 2>/dev/null || true; fi
	if [[ -n $QPID ]] && kill -0 "$QPID" 2>/dev/null; then
		kill "$QPID" 2>/dev/null || true
		wait "$QPID" 2>/dev/null || true
	fi
	if [[ $KEEP == 1 ]]; then
		msg "work directory kept: $W"
	elif [[ $st -eq 0 ]]; then
		rm -rf "$W"
	else # keep the logs only
		rm -rf "$W/vmlinux" "$W/initramfs" "$W/initramfs.cpio" "$W/console.fifo" "$W/pmem.img"
		msg "logs kept in $W (console.log, results/output.log)"
	fi
	exit "$st"
}
trap cleanup EXIT
trap 'RC=130; exit 130' INT
trap 'RC=143; exit 143' TERM

# Booting the uncompressed kernel through its PVH entry point skips the
# firmware's real-mode boot and the in-guest decompression (slow under TCG:
# about 5 s of the boot).  Needs CONFIG_PVH.  Unpacked in the background
# while the initramfs is built; falls back to the bzImage.
if [[ ${RXE_PVH:-1} == 1 ]] && grep -qx 'CONFIG_PVH=y' "$SYSROOT/boot/config-$KVER" 2>/dev/null; then
	extract_vmlinux "$KERNEL" "$W/vmlinux" &
	XPID=$!
fi

# ------------------------------------------------------------------ initramfs

I=$W/initramfs
mkdir -p "$I"/{bin,sbin,dev,proc,sys,newroot,modules}
cp "$BUSYBOX" "$I/bin/busybox"
for applet in sh mount insmod mkdir chroot poweroff sync cat echo sleep; do
	ln -s busybox "$I/bin/$applet"
done

# The virtio-pci transport, 9p over virtio, and (from memory: faster than
# over 9p) dummy, rxe and the rdma_cm user interface, with their
# dependencies in load order and with the options of the host's modprobe.d;
# "builtin" lines (nothing to load) are skipped.
n=0
declare -A seen=()
: >"$I/modules.list"
for mod in virtio_pci 9pnet_virtio 9p dummy rdma_rxe rdma_ucm; do
	deps=$("$MODPROBE" ${SYSROOT:+-d "$SYSROOT"} -S "$KVER" --show-depends "$mod") ||
		skip "kernel $KVER: cannot resolve module $mod"
	while read -r kind path opts; do
		[[ $kind == insmod && -z ${seen[$path]:-} ]] || continue
		seen[$path]=1
		base=${path##*/}
		base=${base%%.ko*}
		dst=$(printf '%02d-%s.ko' "$n" "$base")
		n=$((n + 1))
		case $path in
		*.ko) cp "$path" "$I/modules/$dst" ;;
		*.ko.xz) xz -dc "$path" >"$I/modules/$dst" ;;
		*.ko.zst) zstd -qdc "$path" >"$I/modules/$dst" ;;
		*.ko.gz) gzip -dc "$path" >"$I/modules/$dst" ;;
		*) skip "unknown module format: $path" ;;
		esac
		echo "$dst $opts" >>"$I/modules.list"
	done <<<"$deps"
done

# The kernel runs its module loader (request_module) in the initramfs root,
# not in our chroot: forward it to the host root's modprobe.
cat >"$I/sbin/modprobe" <<'EOF'
#!/bin/sh
exec /bin/chroot /newroot modprobe "$@"
EOF

cat >"$I/init" <<EOF
#!/bin/sh
# init -- generated by run-in-guest.sh: mount the shares, chroot, power off
export PATH=/bin:/sbin
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
fail() {
	echo "RXE-INIT: FAILED: \$*"
	echo "\$*" >/newroot$GUEST_RESULTS/setup-failed 2>/dev/null
	sync
	poweroff -f
	sleep 10
}
mount -t proc proc /proc
mount -t sysfs sysfs /sys
while read -r m opts; do
	insmod /modules/\$m \$opts || fail "insmod \$m"
done </modules.list
p9="trans=virtio,version=9p2000.L,msize=$MSIZE"
mount -t 9p -o "\$p9,ro,cache=loose" hostroot /newroot || fail "mount hostroot"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run || fail "tmpfs /run"
mkdir -p /newroot$GUEST_RESULTS
mount -t 9p -o "\$p9,cache=none" results /newroot$GUEST_RESULTS || fail "mount results"
mount -t proc proc /newroot/proc || fail "proc"
mount -t sysfs sysfs /newroot/sys || fail "sysfs"
mount -t devtmpfs devtmpfs /newroot/dev || fail "devtmpfs"
[ -x /newroot/bin/bash ] || fail "no /bin/bash in the host root"
chroot /newroot /bin/bash $GUEST_RESULTS/guest-main.sh
sync
poweroff -f
sleep 10
EOF
chmod +x "$I/init" "$I/sbin/modprobe"

(cd "$I" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null) >"$W/initramfs.cpio" ||
	die "building the initramfs failed"

# ---------------------------------------------------------------- shares

# shares: entries "path|ro" or "path|rw", mounted in this order in the guest
shares=()
add_share() { # PATH MODE
	local p
	p=$(cd "$1" 2>/dev/null && pwd -P) || die "cannot share $1: not a directory"
	case $p in
	/) return 0 ;; # the root share already shows it (read-only)
	/proc | /proc/* | /sys | /sys/* | /dev | /dev/*) die "cannot share $p" ;;
	esac
	local s
	for s in "${shares[@]}"; do
		[[ ${s%|*} == "$p" ]] && return 0
	done
	shares+=("$p|$2")
}

# hidden_in_guest PATH -- PATH lies under a tmpfs mounted by the guest
hidden_in_guest() {
	case $1 in
	/tmp | /tmp/* | /var/tmp | /var/tmp/* | /run | /run/* | /dev/shm | /dev/shm/*) return 0 ;;
	esac
	return 1
}

CWD=$(pwd -P)
add_share "$CWD" rw
# where the caller's directory is in the guest
GCWD=${RXE_GUEST_CWD:-$CWD}
if [[ $STACK == trixie && ! -d $SYSROOT$GCWD ]] && ! hidden_in_guest "$GCWD"; then
	die "$GCWD does not exist in the trixie root $SYSROOT: set RXE_GUEST_CWD (e.g. /work/rpma) or run from under /tmp" 2
fi
if [[ -n ${RXE_SHARE_DIRS:-} ]]; then
	IFS=: read -r -a extra <<<"$RXE_SHARE_DIRS"
	for d in "${extra[@]}"; do
		[[ -n $d ]] && add_share "$d" rw
	done
fi
if [[ -f $CWD/CMakeCache.txt ]]; then
	src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$CWD/CMakeCache.txt")
	if [[ -n $src && -d $src ]] && hidden_in_guest "$(cd "$src" && pwd -P)"; then
		add_share "$src" ro
	fi
fi
# parents before children
if [[ ${#shares[@]} -gt 1 ]]; then
	mapfile -t shares < <(printf '%s\n' "${shares[@]}" |
		awk '{ print length($0) "\t" $0 }' | sort -n | cut -f2-)
fi

# --------------------------------------------------------------- guest script

# variables of the caller not to pass: session/terminal state of the host
# and make's jobserver (its file descriptors do not exist in the guest)
pass_env() {
	local name
	while IFS= read -r name; do
		case $name in
		HOME | PWD | OLDPWD | SHLVL | _ | MAIL | DISPLAY | XAUTHORITY | \
			DBUS_SESSION_BUS_ADDRESS | XDG_RUNTIME_DIR | XDG_SESSION_* | \
			SSH_* | TERMCAP | COLUMNS | LINES | MAKEFLAGS | MFLAGS | \
			MAKELEVEL | MAKE_TERMOUT | MAKE_TERMERR | BASH_FUNC_*)
			continue
			;;
		esac
		printf 'export %s=%q\n' "$name" "${!name-}"
	done < <(compgen -e)
}

{
	echo '#!/bin/bash'
	echo '# guest-main.sh -- generated by run-in-guest.sh, run by the guest init'
	printf 'rxe_cwd=%q\n' "$GCWD"
	printf 'rxe_pmem=%q\n' "$PMEM"
	printf 'rxe_cmd=('
	printf ' %q' "$@"
	printf ' )\n'
	printf 'rxe_shares=('
	i=0
	for s in "${shares[@]}"; do
		# the caller's directory at its guest path, the others at their own
		[[ ${s%|*} == "$CWD" ]] && s="$GCWD|${s##*|}"
		printf ' %q' "share$i|$s"
		i=$((i + 1))
	done
	printf ' )\n'
	echo 'rxe_caller_env() {'
	pass_env
	echo '}'
	cat <<EOF
rxe_ip=$GUEST_IP
rxe_prefix=$GUEST_PREFIX
rxe_netdev=$GUEST_NETDEV
rxe_dev=$GUEST_RXE
rxe_results=$GUEST_RESULTS
rxe_p9='trans=virtio,version=9p2000.L,msize=$MSIZE'
rxe_mark='$START_MARK'
EOF
	cat <<'EOF'

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
note() { echo "RXE-GUEST: $*"; }
setup_fail() {
	note "SETUP FAILED: $*"
	echo "$*" >"$rxe_results/setup-failed"
	sync
	exit 0
}
try() { "$@" || setup_fail "$*"; }

# the rest of a usual system
mkdir -p /dev/pts /dev/shm
try mount -t devpts -o gid=5,mode=0620,ptmxmode=0666 devpts /dev/pts
try mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
try mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
try mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /var/tmp
mkdir -p /run/lock /run/user
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr
hostname rxe-guest 2>/dev/null || true
for s in "${rxe_shares[@]}"; do
	tag=${s%%|*} rest=${s#*|}
	dir=${rest%|*} mode=${rest##*|}
	opts="$rxe_p9,cache=mmap"
	[ "$mode" = ro ] && opts="$opts,ro"
	mkdir -p "$dir" 2>/dev/null || true
	try mount -t 9p -o "$opts" "$tag" "$dir"
done

# Soft-RoCE on a dummy netdev
try ip link set lo up
try modprobe -a dummy rdma_rxe rdma_ucm # loaded by init already
# (loading "dummy" creates dummy0 unless modprobe.d says numdummies=0)
ip link show "$rxe_netdev" >/dev/null 2>&1 ||
	try ip link add "$rxe_netdev" type dummy
try ip addr add "$rxe_ip/$rxe_prefix" dev "$rxe_netdev"
try ip link set "$rxe_netdev" up
try rdma link add "$rxe_dev" type rxe netdev "$rxe_netdev"
state=/sys/class/infiniband/$rxe_dev/ports/1/state
for _ in $(seq 100); do
	grep -q ACTIVE "$state" 2>/dev/null && break
	sleep 0.1
done
grep -q ACTIVE "$state" 2>/dev/null || setup_fail "$rxe_dev port not ACTIVE"

# the emulated NVDIMM as a device-DAX namespace: /dev/dax0.0
if [ "$rxe_pmem" = 1 ]; then
	try modprobe -a nfit nd_pmem dax_pmem device_dax
	for _ in $(seq 50); do
		[ -e /sys/bus/nd/devices/namespace0.0 ] && break
		sleep 0.1
	done
	try ndctl create-namespace -f -e namespace0.0 -m devdax >/dev/null
	for _ in $(seq 50); do
		[ -c /dev/dax0.0 ] && break
		sleep 0.1
	done
	[ -c /dev/dax0.0 ] || setup_fail "no /dev/dax0.0 after ndctl create-namespace"
	export RXE_DAX=/dev/dax0.0
fi

# the command's environment: the caller's plus ours
for v in $(compgen -e); do unset "$v" 2>/dev/null || true; done
rxe_caller_env
case ":${PATH:-}:" in *:/usr/sbin:*) ;; *) PATH=${PATH:+$PATH:}/usr/local/sbin:/usr/sbin:/sbin ;; esac
export PATH
export HOME=${HOME:-/root}
[ -d "$HOME" ] && [ -w "$HOME" ] || { HOME=/tmp/rxe-home; mkdir -p "$HOME"; }
if [ -n "${TMPDIR:-}" ] && [ ! -d "$TMPDIR" ]; then
	mkdir -p "$TMPDIR" 2>/dev/null || unset TMPDIR
fi
export RPMA_TESTING_IP=$rxe_ip RXE_GUEST=1 RXE_DEVICE=$rxe_dev
export RXE_NETDEV=$rxe_netdev RXE_RESULTS=$rxe_results
[ "$rxe_pmem" = 1 ] && export RXE_DAX=/dev/dax0.0

cd "$rxe_cwd" || setup_fail "cd $rxe_cwd"
read -r up _ </proc/uptime
: >"$rxe_results/started"
echo "$rxe_mark guest uptime ${up}s, running: ${rxe_cmd[*]@Q}"
set +e
# The output does not go through the console: the emulated UART moves
# ~40 KB/s under TCG (and the virtio console is worse).  The host follows
# the file instead.  A single writer (cat) keeps the appends whole and in
# order (9p appends from several processes may overwrite each other); the
# command's stdout is a pipe.  Only the command is waited for: processes it
# left running may hold the pipe open, so cat gets 5 s to drain it.
exec 3> >(exec cat >>"$rxe_results/output.log")
cat_pid=$!
"${rxe_cmd[@]}" </dev/null >&3 2>&3 3>&-
rc=$?
exec 3>&-
(
	sleep 5
	kill "$cat_pid"
) 2>/dev/null &
wait "$cat_pid"
kill $! 2>/dev/null
sync
echo "$rc" >"$rxe_results/rc"
note "command exited with status $rc"
EOF
} >"$R/guest-main.sh"

# ----------------------------------------------------------------------- run

BOOT_KERNEL=$KERNEL BOOT_HOW=bzImage
if [[ -n $XPID ]]; then
	if wait "$XPID"; then
		BOOT_KERNEL=$W/vmlinux BOOT_HOW=PVH
	else
		msg "could not unpack $KERNEL (xz-utils missing?): booting it compressed"
	fi
	XPID=
fi

MEMARG=$MEM
# room for the NVDIMM beside the RAM
[[ $PMEM == 1 ]] && MEMARG="$MEM,slots=2,maxmem=$((MEM + 256 + 1024))M"
qemu=("$QEMU_BIN" -accel "$ACCEL" -cpu max -m "$MEMARG" -smp "$SMP"
	-nodefaults -no-user-config -display none -serial stdio
	-no-reboot -nic none
	-kernel "$BOOT_KERNEL" -initrd "$W/initramfs.cpio"
	-append "console=ttyS0 panic=-1 quiet loglevel=4 ${RXE_APPEND:-}")
# QEMU option values escape "," as ",,"
ROOTSHARE=${SYSROOT:-/}
qemu+=(-virtfs "local,path=${ROOTSHARE//,/,,},mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap")
if [[ $PMEM == 1 ]]; then
	# an emulated NVDIMM backed by a sparse file of the work directory
	truncate -s 256M "$W/pmem.img" || die "cannot create $W/pmem.img"
	qemu+=(-machine pc,nvdimm=on
		-object "memory-backend-file,id=pmem1,share=on,mem-path=${W//,/,,}/pmem.img,size=256M"
		-device nvdimm,id=nvdimm1,memdev=pmem1)
fi
qemu+=(-virtfs "local,path=${R//,/,,},mount_tag=results,security_model=none,multidevs=remap")
i=0
for s in "${shares[@]}"; do
	p=${s%|*}
	ro=
	[[ ${s##*|} == ro ]] && ro=",readonly=on"
	qemu+=(-virtfs "local,path=${p//,/,,},mount_tag=share$i,security_model=none,multidevs=remap$ro")
	i=$((i + 1))
done

pmem_note=
[[ $PMEM == 1 ]] && pmem_note=", NVDIMM as /dev/dax0.0"
msg "stack $STACK${SYSROOT:+ (root $SYSROOT)}$pmem_note, kernel $KVER ($BOOT_HOW), ${MEM} MiB, $SMP vCPUs, accel $ACCEL," \
	"timeout ${TIMEOUT}s, prepared in $(elapsed)s"
shown=()
for s in "${shares[@]}"; do
	p=${s%|*}
	[[ $p == "$CWD" && $GCWD != "$CWD" ]] && p="$p as $GCWD"
	shown+=("$p (${s##*|})")
done
msg "shared: ${shown[*]:-nothing}; work directory $W"

mkfifo "$W/console.fifo"
: >"$R/output.log"
TQ=${EPOCHREALTIME//[!0-9]/}
"$TIMEOUT_BIN" -k 10 "$TIMEOUT" "${qemu[@]}" </dev/null >"$W/console.fifo" 2>&1 &
QPID=$!
# the command's output, as the guest writes it
tail -f -n +1 -s 0.2 --pid="$QPID" "$R/output.log" &
TPID=$!

# boot watchdog: the command must start within BOOT_TIMEOUT seconds
(
	deadline=$((SECONDS + BOOT_TIMEOUT))
	while kill -0 "$QPID" 2>/dev/null; do
		[[ -e $R/started || -e $R/setup-failed ]] && exit 0
		if ((SECONDS >= deadline)); then
			: >"$W/boot-timeout"
			kill "$QPID" 2>/dev/null
			exit 0
		fi
		sleep 1
	done
) &
WDPID=$!

# the console: echo it, keep it, and time the start of the command
started=0
while IFS= read -r line || [[ -n $line ]]; do
	line=${line%$'\r'}
	printf '%s\n' "$line" >&3
	if [[ $started == 0 && $line == *"$START_MARK"* ]]; then
		started=1
		boot=$(elapsed "$TQ")
		echo "$boot" >"$W/boot-time"
		msg "guest booted, command starting after ${boot}s (from QEMU start)"
		continue
	fi
	[[ $started == 1 || ${RXE_QUIET:-0} != 1 ]] && printf '%s\n' "$line" >&2
done <"$W/console.fifo" 3>"$W/console.log"

qrc=0
wait "$QPID" || qrc=$?
QPID=
wait "$TPID" || true
TPID=
kill "$WDPID" 2>/dev/null || true
wait "$WDPID" 2>/dev/null || true
WDPID=

tail_console() {
	msg "last lines of the guest console ($W/console.log):"
	tail -n 25 "$W/console.log" | sed 's/^/    /' >&2
}

boot=$(cat "$W/boot-time" 2>/dev/null || echo '?')
if [[ -f $R/rc ]]; then
	RC=$(<"$R/rc")
	[[ $RC =~ ^[0-9]+$ ]] || die "bad exit status from the guest: $RC" 125
	msg "guest command exited with status $RC (boot ${boot}s, total $(elapsed)s)"
	exit "$RC"
fi
if grep -q 'Kernel panic' "$W/console.log"; then
	msg "the guest kernel panicked"
fi
if [[ -f $R/setup-failed ]]; then
	tail_console
	RC=77
	skip "guest setup failed: $(<"$R/setup-failed")"
fi
if [[ -f $W/boot-timeout ]]; then
	tail_console
	RC=77
	skip "guest did not start the command within RXE_BOOT_TIMEOUT=${BOOT_TIMEOUT}s"
fi
if [[ -f $R/started ]]; then
	tail_console
	if [[ $qrc == 124 || $qrc == 137 ]]; then
		RC=124
		die "TIMEOUT: the guest command did not finish within RXE_TIMEOUT=${TIMEOUT}s" 124
	fi
	RC=125
	die "the guest died while the command ran (QEMU exit status $qrc)" 125
fi
tail_console
RC=77
skip "the guest did not boot (QEMU exit status $qrc)"
