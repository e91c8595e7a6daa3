#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check_args.sh [PTOLAT] - ptolat refuses a filter the probes' arguments
# cannot hold (-c CLIENT 32 bits, -k KERNEL a non-negative int32_t, -g
# GRAPH up to 2^63 - 1), a number that is not plain decimal, a bad
# INTERVAL or COUNT and an argument after them: exit 2 and a message
# naming the value, before it loads any BPF (so no privilege is needed).
set -eu -o pipefail
LAT=${1:-build/tools/ptolat/ptolat}
# shellcheck source=scripts/check-refused.sh
. "$(dirname "$0")/../../scripts/check-refused.sh"

refused_each "$LAT" <<'END'
-c 4294967296|bad -c '4294967296' (0 .. 4294967295)
-c -1|bad -c '-1'
-c 0x10|bad -c '0x10'
-c x|bad -c 'x'
-k 2147483648|bad -k '2147483648' (0 .. 2147483647)
-k 4294967295|bad -k '4294967295'
-g 9223372036854775808|bad -g '9223372036854775808' (0 .. 9223372036854775807)
-g 1x|bad -g '1x'
0|bad interval '0' (1 .. 86400)
86401|bad interval '86401'
1 0|bad count '0' (1 .. 4294967295)
1 4294967296|bad count '4294967296'
1 2 3|unexpected argument '3'
END
