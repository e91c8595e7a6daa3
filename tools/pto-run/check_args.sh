#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check_args.sh [PTO-RUN [ORCH.so]] - pto-run refuses, with exit status 2
# and a message before it connects to ptod: --orch or --socket given
# twice, a kernel id given twice, a bad kernel spec, a buf:SIZE: or
# out:SIZE: with nothing after the ':', a bad ARG (a number is decimal, a
# leading 0 too, or 0x hex; --orch without a '/' names a file of the
# current directory; a FIFO is neither an --orch nor a buf:0 FILE).
# PTO_CHECK (libpto) is
# 0 or 1: any other value fails the connection with a message, before
# anything is sent. --help prints the usage on stdout with status 0.
set -eu -o pipefail
RUN=${1:-build/tools/pto-run}
ORCH=${2:-build/examples/bgemm/orch.so}
export PTO_DEVICE=/nonexistent/pto0	# never a device that is there
# shellcheck source=scripts/check-refused.sh
. "$(dirname "$0")/../../scripts/check-refused.sh"

k="--kernel 1:aic:/k1.so"
a="-- buf:4 buf:4 1"	# the three ARGs the orchestration expects
refused_each "$RUN" -s /nonexistent/ptod.sock <<END
--orch $ORCH --orch $ORCH $a|--orch given twice
--orch $ORCH -s /other.sock $a|--socket given twice
--orch $ORCH $k --kernel 1:aiv:/k2.so $a|--kernel '1:aiv:/k2.so': kernel 1 given twice
--orch $ORCH --kernel 1:gpu:/k.so $a|bad --kernel '1:gpu:/k.so' (ID:aic|aiv:PATH)
--orch $ORCH --kernel 2147483648:aic:/k.so $a|bad --kernel '2147483648:aic:/k.so'
--orch $ORCH -- buf:4: buf:4 1|bad argument 'buf:4:' (no FILE after ':')
--orch $ORCH -- buf:4 out:4: 1|bad argument 'out:4:' (no FILE after ':')
--orch $ORCH -- buf:4 out:4 1|bad argument 'out:4'
--orch $ORCH -- buf:4 buf:0 1|bad argument 'buf:0'
--orch $ORCH -- buf:4 buf:4 1x|bad argument '1x'
--orch $ORCH -- buf:4 buf:4 -9223372036854775809|bad argument '-9223372036854775809'
--orch $ORCH -- buf:4 buf:4 -0x|bad argument '-0x'
--orch $ORCH -- buf:4 buf:0x 1|bad size in 'buf:0x'
--orch $ORCH -- buf:4 buf:0:/dev/null 1|bad argument 'buf:0:/dev/null' (SIZE 0 and /dev/null has no size)
END

# two kernel ids, one socket: past the checks, to the device named
accepted_each "$RUN" -s /nonexistent/ptod.sock <<END
--orch $ORCH $k --kernel 2:aiv:/k2.so -- buf:4 out:4:/dev/null 1|/nonexistent/pto0
--orch $ORCH -- buf:08 buf:0x10k 09|/nonexistent/pto0
--orch $ORCH -- buf:4 buf:4 -9223372036854775808|/nonexistent/pto0
--orch $ORCH -- buf:4 buf:4 -0x8000000000000000|/nonexistent/pto0
END

# --orch without a '/' is a file of the current directory, not a search
# of the library path
RUN_ABS=$(realpath "$RUN")
(cd "$(dirname "$ORCH")" && accepted_each "$RUN_ABS" -s /x.sock <<END
--orch $(basename "$ORCH") -- buf:4 buf:4 1|/nonexistent/pto0
END
)
(cd / && refused_each "$RUN_ABS" -s /x.sock <<END
--orch $(basename "$ORCH") -- buf:4 buf:4 1|./$(basename "$ORCH"): cannot open shared object file
END
)

# a FIFO has no size to take, and is no shared object: both refused
# before an open() that would wait for a writer (timeout 20 s: a failure)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/fifo"
refused_each "$RUN" -s /nonexistent/ptod.sock <<END
--orch $ORCH -- buf:4 buf:0:$dir/fifo 1|bad argument 'buf:0:$dir/fifo' (SIZE 0 and $dir/fifo has no size)
--orch $dir/fifo -- buf:4 buf:4 1|--orch '$dir/fifo': not a regular file
--orch $dir -- buf:4 buf:4 1|--orch '$dir': not a regular file
END

out=$(PTO_CHECK=yes "$RUN" \
	-s /nonexistent/ptod.sock --orch "$ORCH" -- buf:4 buf:4 1 2>&1) &&
	rc=0 || rc=$?
if [ "$rc" = 0 ] || ! grep -qF "PTO_CHECK 'yes': not 0 or 1" <<<"$out"; then
	echo "FAIL: PTO_CHECK=yes (exit $rc): $out"
	exit 1
fi
echo "ok: PTO_CHECK=yes: $out"

out=$("$RUN" --help 2>/dev/null) && rc=0 || rc=$?
if [ "$rc" != 0 ] || ! grep -q "^usage: pto-run" <<<"$out"; then
	echo "FAIL: --help (exit $rc): $out"
	exit 1
fi
echo "ok: --help: status 0, the usage on stdout"
