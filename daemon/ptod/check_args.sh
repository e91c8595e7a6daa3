#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check_args.sh [PTOD] - ptod refuses a bad default for its clients (-w
# TASK_WINDOW, -H HEAP: the rules of PTO2_RING_TASK_WINDOW and
# PTO2_RING_HEAP), a bad -S AICORE_SPINS, PTO_SCHED_SLEEP_MS or
# PTO_HWS_CHECK (0 or 1), a bad
# number of the other options (a sign or a space is bad too; -m is octal,
# every other number decimal), a user given twice to -x or -q UID=MIB
# or more than 64 users to -x, -q UID=MIB or -u (each said in one line), a
# sandbox's option (-b -M -P) where no sandbox runs, or an argument left
# over, with exit status 2 and a message
# naming the value, before it touches a device; a good one gets past the
# check (on a device that is not there ptod then exits 1). Before that,
# ptod raises its soft RLIMIT_NOFILE to the hard limit and warns if -C
# connections may need more descriptors than that. A ptod that gets past
# the checks where it should not stops after 20 s (status 124).
set -u
PTOD=${1:-build/daemon/ptod}
SOCK=$(mktemp -u /tmp/ptod-args.XXXXXX)
fail=0

# expect STATUS TEXT ARGS...
expect() {
	local want=$1 text=$2 out rc

	shift 2
	out=$(timeout 20 "$PTOD" -d /dev/pto-none -s "$SOCK" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" != "$want" ] || ! grep -qF -- "$text" <<<"$out"; then
		echo "not ok: ptod $*: status $rc (want $want), said: $out"
		fail=1
	else
		echo "ok: ptod $*: $rc"
	fi
}

# expect_not TEXT ARGS...: ptod does not say TEXT
expect_not() {
	local text=$1 out

	shift
	out=$(timeout 20 "$PTOD" -d /dev/pto-none -s "$SOCK" "$@" 2>&1 >/dev/null)
	if grep -qF -- "$text" <<<"$out"; then
		echo "not ok: ptod $*: said: $out"
		fail=1
	else
		echo "ok: ptod $*: no \"$text\""
	fi
}

for v in 0 2 3 12 8388608 0x10 x ""; do
	expect 2 "bad -w '$v': must be a power of 2 from 4 to 4194304" -w "$v"
done
for v in 0 1023 1T 2048X -1 99999999999999999999; do
	expect 2 "bad -H '$v': must be bytes from 1024" -H "$v"
done
for v in -1 x 4294967296 " 1" +1 " -18446744073709551615"; do
	expect 2 "bad -S '$v': must be an integer from 0 to 4294967295" -S "$v"
done
for v in 0 -1 x 1x 3600001 "" " 5" +5; do
	PTO_SCHED_SLEEP_MS=$v expect 2 "bad PTO_SCHED_SLEEP_MS '$v' (1 .. 3600000)"
done
PTO_SCHED_SLEEP_MS=60000 expect 1 "open /dev/pto-none"
for v in yes 2 "" " 1" 01; do
	PTO_HWS_CHECK=$v expect 2 "bad PTO_HWS_CHECK '$v' (0 or 1)"
done
PTO_HWS_CHECK=0 expect 1 "open /dev/pto-none"
PTO_HWS_CHECK=1 expect 1 "open /dev/pto-none"
expect 1 "-K none: every client's kernels run in pto-aicore, as root" -K none
expect_not "-K none:" -K nonroot
for v in -1 x 65537 "" " 1" +1; do
	expect 2 "bad -L '$v'" -L "$v"
done
expect 1 "open /dev/pto-none" -L 0
expect 1 "open /dev/pto-none" -L 65536
for v in " 1=0" "+1=0" "-1=0" 1=-0 "1= 0" 4294967295=0 1=4 1=x "1=0 "; do
	expect 2 "bad -x '$v'" -x "$v"
done
expect 1 "open /dev/pto-none" -x 4294967294=3
for v in " 1000=1" "1000=+1" 4294967295=1 0x3e8=1; do
	expect 2 "bad -q '$v'" -q "$v"
done
# a UID is decimal, as -x's, and never (uid_t)-1
for v in 4294967295 -1 0x3e8 " 1000" ""; do
	expect 2 "bad -u '$v'" -u "$v"
done
expect 1 "open /dev/pto-none" -u 0100
# -m MODE is octal, with or without its leading 0
for v in 8 1000 0x1b0 " 660" +660 ""; do
	expect 2 "bad -m '$v'" -m "$v"
done
expect 1 "open /dev/pto-none" -m 660
expect 1 "open /dev/pto-none" -m 0777
for v in -1 x 1M 1048577 ""; do
	expect 2 "bad -M '$v'" -M "$v"
done
expect 1 "open /dev/pto-none" -M 0
expect 1 "open /dev/pto-none" -M 1048576
for v in -1 x 1k 4194305 ""; do
	expect 2 "bad -P '$v'" -P "$v"
done
expect 1 "open /dev/pto-none" -P 0
expect 1 "open /dev/pto-none" -P 4194304
expect 1 "open /dev/pto-none" -w 4 -H 1024 -S 0
# numbers are decimal (-m aside): no hexadecimal, and 010 is ten
for o in c C D L Q T q G M P S; do
	expect 2 "bad -$o '0x10'" "-$o" 0x10
done
expect 2 "bad -q '1000=0x10'" -q 1000=0x10
expect 1 "open /dev/pto-none" -c 010 -S 010 -q 1000=010
# one rule per user
expect 2 "-x 1000=2: user 1000 has a context already" -x 1000=1 -x 1000=2
expect 2 "-q 1000=2: user 1000 has a quota already" -q 1000=1 -q 1000=2
expect 1 "open /dev/pto-none" -x 1000=1 -x 1001=1 -q 1000=1 -q 1001=1
# ... said once: not as a bad value too, and without the usage
expect_not "bad -x" -x 1000=1 -x 1000=2
expect_not "usage:" -q 1000=1 -q 1000=2
# 64 users each, one more is named as such
rules() { for u in $(seq 1000 1064); do echo "$1" "$u$2"; done; }
# shellcheck disable=SC2046 # the options are words
expect 2 "ptod: -x 1064=1: at most 64 users have a context of their own" $(rules -x =1)
# shellcheck disable=SC2046
expect 2 "ptod: -q 1064=1: at most 64 users have a quota of their own" $(rules -q =1)
# shellcheck disable=SC2046
expect 2 "ptod: -u 1064: at most 64 users may be named" $(rules -u "")
# shellcheck disable=SC2046
expect_not "bad -u" $(rules -u "")
# a sandbox's options where no sandbox runs
for o in "-M 8" "-P 8" "-b /bin/true"; do
	# shellcheck disable=SC2086 # $o is an option and its value
	expect 2 "ptod: ${o%% *} sets up the sandboxes, which -K none turns off" -K none $o
	# shellcheck disable=SC2086
	expect 2 "ptod: ${o%% *} sets up the sandboxes, which -d user turns off" -d user $o
done
expect 1 "open /dev/pto-none" -K all -M 8 -P 8 -b /bin/true
expect 2 "ptod: unexpected argument 'extra'" -K nonroot extra
expect 1 "open /dev/pto-none" -w 4194304 -H 64M -S 4294967295

# RLIMIT_NOFILE: the soft limit goes up to the hard one; the connections
# -C allows (7 descriptors each on pto.ko with sandboxes, 5 without, and
# 32 of ptod's own) are checked against it
hard=$(ulimit -H -n)
if [ "$hard" = unlimited ] || [ "$hard" -gt 64 ]; then
	(ulimit -S -n 64; expect 1 "descriptors: RLIMIT_NOFILE $hard (raised from 64)"
	 exit $fail) || fail=1
fi
(ulimit -n 100
 expect 1 "-C 256 connections may need 1824 descriptors, more than RLIMIT_NOFILE's 100: beyond about 9,"
 expect 1 "-C 20 connections may need 132 descriptors" -C 20 -K none
 expect_not "connections may need" -C 9
 expect_not "connections may need" -C 0
 exit $fail) || fail=1
exit $fail
