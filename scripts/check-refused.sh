# SPDX-License-Identifier: MIT
#
# check-refused.sh: sourced by the tools' check_args.sh scripts.
# shellcheck shell=bash
#
# refused_each COMMAND...: for each line "ARGS|WANT" of standard input,
# COMMAND ARGS (ARGS split into words) must exit 2 and print WANT (a
# fixed string) on stdout or stderr; an "ok:" line per refusal, or a
# "FAIL:" line with what it printed and status 1 at the first that is
# not refused so. A command that runs on instead of being refused is
# stopped after 20 s (status 124, a failure).
refused_each() {
	local args want rc out

	out=$(mktemp)
	while IFS='|' read -r args want; do
		rc=0
		# shellcheck disable=SC2086
		timeout 20 "$@" $args > "$out" 2>&1 < /dev/null || rc=$?
		if [ "$rc" != 2 ] || ! grep -qF -e "$want" "$out"; then
			echo "FAIL: $* $args (exit $rc): $(cat "$out")"
			rm -f "$out"
			return 1
		fi
		echo "ok: $* $args: $(head -n 1 "$out")"
	done
	rm -f "$out"
}
