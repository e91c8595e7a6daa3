# SPDX-License-Identifier: MIT
#
# check-refused.sh: sourced by the tools' check scripts (check_args.sh,
# pto-hws-sim's check.sh).
# shellcheck shell=bash
#
# refused_each COMMAND...: for each line "ARGS|WANT" of standard input,
# COMMAND ARGS (ARGS split into words) must exit 2 and print WANT (a
# fixed string) on stdout or stderr; an "ok:" line per refusal, or a
# "FAIL:" line with what it printed and status 1 at the first that is
# not refused so. A command that runs on instead of being refused is
# stopped after 20 s (status 124, a failure).
refused_each() {
	check_each refused "$@"
}

# accepted_each COMMAND...: the same lines, but COMMAND ARGS must get
# past the parsing: an exit status other than 2 (a refusal) and 124 (still
# running after 20 s), and WANT printed, typically the error of the
# missing device or daemon the options lead to.
accepted_each() {
	check_each accepted "$@"
}

# check_each refused|accepted COMMAND...: the loop of the two above
check_each() {
	local mode=$1 args want rc out ok
	shift

	out=$(mktemp)
	while IFS='|' read -r args want; do
		rc=0
		# shellcheck disable=SC2086
		timeout 20 "$@" $args > "$out" 2>&1 < /dev/null || rc=$?
		case $mode:$rc in
		refused:2) ok=yes ;;
		refused:* | accepted:2 | accepted:124) ok=no ;;
		*) ok=yes ;;
		esac
		if [ "$ok" = no ] || ! grep -qF -e "$want" "$out"; then
			echo "FAIL: $* $args (exit $rc, want $mode): $(cat "$out")"
			rm -f "$out"
			return 1
		fi
		echo "ok: $* $args: $mode: $(head -n 1 "$out")"
	done
	rm -f "$out"
}
