#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check_sock.sh [PTOD] - ptod puts its socket only in a directory that
# nobody but root (or ptod's own user) may write, unless it is sticky:
# anyone else who may write it could swap the socket for a link, which
# the socket's mode would then go to, or for a socket of their own. A
# directory of another user's, a group- or world-writable one and a link
# to a directory are refused with exit status 1 and a message naming the
# directory, and no socket is made; root's directory of mode 0755 and a
# sticky world-writable one are taken. Run as root (it makes a directory
# of nobody's); as another user it skips.
set -u
PTOD=$(realpath "${1:-build/daemon/ptod}")
fail=0

if [ "$(id -u)" != 0 ]; then
	echo "ok # SKIP check_sock.sh runs as root"
	exit 0
fi
top=$(mktemp -d /tmp/ptod-sock.XXXXXX)
trap 'rm -rf "$top"' EXIT

# refused DIR TEXT: ptod -s DIR/ptod.sock exits 1 saying TEXT, no socket
refused() {
	local dir=$1 text=$2 out rc

	out=$(timeout 20 "$PTOD" -d user -s "$dir/ptod.sock" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" != 1 ] || ! grep -qF -- "$text" <<<"$out" ||
	   [ -e "$dir/ptod.sock" ]; then
		echo "not ok: socket in $dir: status $rc (want 1), said: $out"
		fail=1
	else
		echo "ok: socket in $dir refused"
	fi
}

# taken DIR: ptod listens on DIR/ptod.sock (then it is stopped)
taken() {
	local dir=$1 pid i

	"$PTOD" -d user -s "$dir/ptod.sock" >"$top/log" 2>&1 &
	pid=$!
	for i in $(seq 1 200); do
		grep -q "listening on $dir/ptod.sock" "$top/log" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if grep -q "listening on $dir/ptod.sock" "$top/log" &&
	   [ -S "$dir/ptod.sock" ]; then
		echo "ok: socket in $dir taken"
	else
		echo "not ok: socket in $dir: ptod said: $(cat "$top/log")"
		fail=1
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

mkdir -m 0755 "$top/nobody" && chown 65534 "$top/nobody"
refused "$top/nobody" "socket directory $top/nobody: owned by uid 65534"
mkdir -m 0777 "$top/world"
refused "$top/world" "socket directory $top/world: owned by uid 0, mode 0777"
mkdir -m 0775 "$top/group"
refused "$top/group" "socket directory $top/group: owned by uid 0, mode 0775"
mkdir -m 0755 "$top/real" && ln -s real "$top/link"
refused "$top/link" "socket directory $top/link: not a directory"
taken "$top/real"
mkdir -m 1777 "$top/sticky"
taken "$top/sticky"
exit $fail
