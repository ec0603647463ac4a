#!/usr/bin/env bash
# Runs the cargo-fuzz targets (all, or those named) for FUZZ_SECONDS each, one after the
# other, each in one process on one core, without a sanitizer (the stable toolchain has
# none; overflow checks and debug assertions stay on). Prints per target the executions
# run and whether it crashed; exits 1 if any target crashed, hung or ran out of memory.
#
#   fuzz/run.sh [TARGET...]          FUZZ_SECONDS=60 by default
#
# fuzz/corpus/<target>/ is read, never written: new inputs go to work/<target>/ (beside this script) and a
# crashing input to fuzz/artifacts/<target>/ (both ignored by git). Fix the parser, then
# copy the input to fuzz/regressions/<target>/, which `make test` replays.
set -uo pipefail
cd "$(dirname "$0")"

seconds=${FUZZ_SECONDS:-60}
cargo=${CARGO:-cargo}
max_len=65536 # zombiesim::fuzzing::MAX_INPUT

if ! "$cargo" fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz is missing: installing it (cargo install cargo-fuzz --locked)"
    "$cargo" install cargo-fuzz --locked || exit 1
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <("$cargo" fuzz list)
fi
"$cargo" fuzz build --sanitizer none || exit 1

failed=()
summary=()
for t in "${targets[@]}"; do
    mkdir -p "work/$t" "artifacts/$t"
    log="work/$t.log"
    echo "== $t: ${seconds} s"
    "$cargo" fuzz run --sanitizer none "$t" "work/$t" "corpus/$t" -- \
        -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -print_pcs=0 >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    if [ -z "$runs" ]; then
        runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
    fi
    if [ -z "$runs" ]; then
        runs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    fi
    slowest=$(sed -n 's/^stat::slowest_unit_time_sec: *//p' "$log" | tail -n 1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
    if [ "$rc" -eq 0 ]; then
        result="ok (slowest input ${slowest:-?} s, peak RSS ${rss:-?} MB)"
    else
        kind=$(grep -m1 -oE 'libFuzzer: (deadly signal|timeout|out-of-memory[^)]*\)?|fuzz target exited)|unbounded allocation|panicked at [^:]*:[0-9]+' "$log" || true)
        artifact=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -n 1)
        result="CRASHED (${kind:-exit $rc}${artifact:+: $artifact}; log fuzz/$log)"
        failed+=("$t")
    fi
    line=$(printf '%-16s %12s executions in %4s s  %s' "$t" "${runs:-?}" "$seconds" "$result")
    echo "$line"
    summary+=("$line")
done

echo
echo "fuzz summary (FUZZ_SECONDS=$seconds):"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "crashed: ${failed[*]}"
    exit 1
fi
