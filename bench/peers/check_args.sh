#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check_args.sh [PTO_BENCH_PEERS] - pto-bench-peers refuses a shape or a
# system it does not know, naming it and the names there are (exit 2),
# instead of running without it; and runs what it was asked for.
set -eu -o pipefail
BP=${1:-build/bench/peers/pto-bench-peers}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck source=scripts/check-refused.sh
. "$(dirname "$0")/../../scripts/check-refused.sh"

refused_each "$BP" <<'ARGS'
-p sim -s bogus -r 1|unknown shape 'bogus' (independent, chain,
-p sim -s chain, -r 1|unknown shape ''
-p sim,bogus -r 1|unknown system 'bogus' (sim, user, starpu-lws, omp, tbb)
ARGS

"$BP" -p sim -s chain -r 1 > "$out" 2>&1
if ! grep -q "^chain  *sim  " "$out"; then
	echo "FAIL: pto-bench-peers -p sim -s chain -r 1: $(cat "$out")"
	exit 1
fi
echo "ok: pto-bench-peers -p sim -s chain -r 1 ran the chain on sim"
