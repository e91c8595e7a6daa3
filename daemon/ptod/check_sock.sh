#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check_sock.sh [PTOD] - ptod puts its socket only where nobody but root
# (or ptod's own user) can change what the path names: the directory and
# every directory above it must be theirs and writable by no one else
# (above it, sticky ones may be: others cannot rename what is not
# theirs there), links on the way theirs. Anyone else could swap the
# socket for a link, which the socket's mode would then go to, or for a
# socket of their own; in a sticky directory take its name while ptod is
# not running, which ptod warns of. A directory of another user's, one under such a
# directory, a group- or world-writable one and a link of another user's
# are refused with exit status 1 and a message naming what is wrong, and
# no socket is made; root's directory of mode 0755, under the sticky
# /tmp, and root's link to it are taken, and a sticky world-writable one
# with a warning. Run as root (it makes files of nobody's); as another
# user it skips.
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

# taken DIR [TEXT]: ptod listens on DIR/ptod.sock, saying TEXT if given
# (then it is stopped)
taken() {
	local dir=$1 text=${2:-} pid i

	"$PTOD" -d user -s "$dir/ptod.sock" >"$top/log" 2>&1 &
	pid=$!
	for i in $(seq 1 200); do
		grep -q "listening on $dir/ptod.sock" "$top/log" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if grep -q "listening on $dir/ptod.sock" "$top/log" &&
	   [ -S "$dir/ptod.sock" ] &&
	   { [ -z "$text" ] || grep -qF -- "$text" "$top/log"; }; then
		echo "ok: socket in $dir taken"
	else
		echo "not ok: socket in $dir: ptod said: $(cat "$top/log")"
		fail=1
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

mkdir -m 0755 "$top/nobody" && chown 65534 "$top/nobody"
refused "$top/nobody" "socket directory $top/nobody: $top/nobody is not root's nor ptod's user's"
mkdir -m 0755 "$top/nobody/in"
refused "$top/nobody/in" "socket directory $top/nobody/in: $top/nobody is not root's nor ptod's user's"
mkdir -m 0777 "$top/world"
refused "$top/world" "socket directory $top/world: $top/world is writable by others"
mkdir -m 0775 "$top/group"
refused "$top/group" "socket directory $top/group: $top/group is writable by others"
mkdir -m 0755 "$top/real"
ln -s real "$top/nlink" && chown -h 65534 "$top/nlink"
refused "$top/nlink" "socket directory $top/nlink: $top/nlink is not root's nor ptod's user's"
taken "$top/real"
ln -s real "$top/link"
taken "$top/link"
mkdir -m 1777 "$top/sticky"
taken "$top/sticky" "socket directory $top/sticky is writable by others (sticky): none can take ptod's socket while it runs, but any can take its name"
exit $fail
