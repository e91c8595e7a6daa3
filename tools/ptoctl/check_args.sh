#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check_args.sh [PTOCTL] - ptoctl refuses, before it connects to anything,
# an option its command does not use (-d, -n or -s given to the wrong
# command, trace's own -n and -d written before it) and arguments after a
# command that takes none (an option written after the command), and hws
# arguments that are not "get" or "set KEY=VALUE...": exit 2 and a message
# that names it. Commands given what they take get past the
# parsing to the connection, which fails here; and a peer that never
# answers is given up on.
set -eu -o pipefail
CTL=${1:-build/tools/ptoctl}
export PTO_SOCKET=/nonexistent/ptod.sock
# shellcheck source=scripts/check-refused.sh
. "$(dirname "$0")/../../scripts/check-refused.sh"

refused_each "$CTL" <<'ARGS'
info -j|info takes no arguments ("-j"): options come before the command
stats -d 1|stats takes no arguments ("-d")
events -n 5|events takes no arguments ("-n")
info extra|info takes no arguments ("extra")
-n 5 trace|trace does not take -n before it
-d 3 trace|trace does not take -d before it
-d 1 clients|clients does not take -d
-n 1 graphs|graphs does not take -n
-s /tmp/s info|info does not take -s
-d 0 events|events does not take -d
-n 2 hws get|hws does not take -n
clients extra|clients takes no arguments ("extra")
hws|usage: ptoctl
hws foo|usage: ptoctl
hws set|usage: ptoctl
hws get extra|usage: ptoctl
hws set foo=1|hws set: bad setting "foo=1"
hws set policy=1 usage=x|hws set: bad setting "usage=x"
ARGS

# what each command takes gets past the parsing, to the missing daemon
accepted_each "$CTL" <<'ARGS'
-j -s /nonexistent/s clients|ptod is not running
-s /nonexistent/s graphs|ptod is not running
-s /nonexistent/s trace -n 1 -d 1|ptod is not running
hws get|is pto.ko loaded?
hws set policy=1 promote-threshold=4|is pto.ko loaded?
ARGS

# A peer that takes the connection and never answers (a stuck daemon):
# the list and the trace requests give up after ptoctl's answer time
# (10 s), said, instead of waiting for ever.
dir=$(mktemp -d)
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1])
s.listen(8)
time.sleep(120)
' "$dir/mute.sock" &
mute=$!
trap 'kill "$mute" 2> /dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do
	[ -S "$dir/mute.sock" ] && break
	sleep 0.1
done
accepted_each "$CTL" <<ARGS
-s $dir/mute.sock clients|clients: no answer from ptod within 10 s
-s $dir/mute.sock trace -n 1|trace: no answer from ptod
ARGS
