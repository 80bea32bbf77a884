#!/usr/bin/env bash
# Fuzzes one target for a bounded time, nice'd, with hangs and memory blowups
# reported as failures; its log goes to fuzz/logs/<target>.log.
#
#   fuzz/run.sh <target> <seconds> [extra libFuzzer flags...]
#
# New inputs go to fuzz/corpus/<target>; the seeds of fuzz/seed.py (if
# written) are read too. Crashes land in fuzz/artifacts/<target>/.
# FUZZ_TARGET_DIR, if set, is cargo's target directory (to share builds
# between a snapshot of the repository and the working tree).
set -euo pipefail
cd "$(dirname "$0")"
target=$1 seconds=$2
shift 2
mkdir -p "corpus/$target" logs
dirs=("corpus/$target")
if [[ -d "seeds/$target" ]]; then dirs+=("seeds/$target"); fi
# -timeout: one input taking 10 s is a hang (inputs are at most 4 KB);
# -rss_limit_mb: the parser's memory is linear in a 4 KB input.
target_dir=()
if [[ -n "${FUZZ_TARGET_DIR:-}" ]]; then target_dir=(--target-dir "$FUZZ_TARGET_DIR"); fi
exec nice -n 10 cargo +nightly fuzz run -O "${target_dir[@]}" "$target" "${dirs[@]}" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 "$@" > "logs/$target.log" 2>&1
