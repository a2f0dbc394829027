#!/usr/bin/env bash
# Runs a libFuzzer target of the fuzz build for a fixed time and reports any crash.
#
#   scripts/run-fuzzer.sh TARGET [SECONDS]        e.g. scripts/run-fuzzer.sh onnx_import_fuzzer 600
#   make fuzz FUZZ_SECONDS=600                    (configures and builds the fuzz preset first)
#
# Layout (TARGET = onnx_import_fuzzer, NAME = onnx_import):
#   build-fuzz/tests/fuzz/TARGET            the binary (cmake --preset fuzz && cmake --build --preset fuzz)
#   tests/fuzz/seeds/NAME/                  checked-in seeds (read, never written)
#   tests/fuzz/regressions/NAME/            checked-in crash reproducers (replayed by ctest, not
#                                           fuzzed: one not yet fixed would end every run at once)
#   tests/fuzz/dicts/NAME.dict              optional libFuzzer dictionary
#   fuzz-work/TARGET/corpus/                the growing working corpus (gitignored; kept between runs)
#   fuzz-work/TARGET/crashes/               crash-*, leak-*, timeout-*, oom-* files libFuzzer writes
#   fuzz-work/TARGET/last-run.log           the output of the last run
#
# Environment: FUZZ_JOBS (default 1) parallel fuzzing processes; SOD2_FUZZ_BUILD_DIR (default
# build-fuzz) the fuzz build tree; FUZZ_EXTRA_ARGS more libFuzzer flags.
# Exit status: 0 when the run ended without a finding, 1 when it found one (or libFuzzer failed),
# 2 on usage errors.
set -euo pipefail

# Everything runs inside main, which bash reads whole before running: editing this file while a
# long run is going cannot change what the rest of that run does.
main() {
  usage() {
    echo "usage: $0 TARGET [SECONDS]   (e.g. $0 onnx_import_fuzzer 600)" >&2
    exit 2
  }
  if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
  TARGET=$1
  SECONDS_TO_RUN=${2:-60}
  [[ $TARGET =~ ^[A-Za-z0-9_]+$ ]] || usage
  if ! [[ $SECONDS_TO_RUN =~ ^[0-9]+$ ]] || [ "$SECONDS_TO_RUN" -eq 0 ]; then usage; fi

  ROOT=$(cd "$(dirname "$0")/.." && pwd)
  BUILD_DIR=${SOD2_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
  BIN=$BUILD_DIR/tests/fuzz/$TARGET
  NAME=${TARGET%_fuzzer}
  SEEDS=$ROOT/tests/fuzz/seeds/$NAME
  REGRESSIONS=$ROOT/tests/fuzz/regressions/$NAME
  DICT=$ROOT/tests/fuzz/dicts/$NAME.dict
  WORK=$ROOT/fuzz-work/$TARGET
  CORPUS=$WORK/corpus
  CRASHES=$WORK/crashes
  LOG=$WORK/last-run.log
  JOBS=${FUZZ_JOBS:-1}
  if ! [[ $JOBS =~ ^[0-9]+$ ]] || [ "$JOBS" -eq 0 ]; then
    echo "run-fuzzer: FUZZ_JOBS must be a positive integer" >&2
    exit 2
  fi

  if [ ! -x "$BIN" ]; then
    echo "run-fuzzer: $BIN does not exist; build it with:" >&2
    echo "  cmake --preset fuzz && cmake --build --preset fuzz --target $TARGET" >&2
    exit 2
  fi
  if [ ! -d "$SEEDS" ]; then
    echo "run-fuzzer: no seed corpus at $SEEDS" >&2
    exit 2
  fi
  mkdir -p "$CORPUS" "$CRASHES"

  # libFuzzer reads every directory given and writes new inputs only to the first one.
  CORPUS_DIRS=("$CORPUS" "$SEEDS")

  LIMITS=(-rss_limit_mb=2048 -timeout=10)
  ARGS=(
    -max_total_time="$SECONDS_TO_RUN"
    "${LIMITS[@]}"
    -artifact_prefix="$CRASHES/"
    -print_final_stats=1
  )
  [ -f "$DICT" ] && ARGS+=(-dict="$DICT")
  # One process by default. With -jobs/-workers libFuzzer runs children that log to fuzz-N.log in
  # the current directory (hence the cd below) and stops a child at its first crash; -jobs=1 would
  # only hide the output in fuzz-0.log, so it is passed only for more than one job.
  if [ "$JOBS" -gt 1 ]; then
    ARGS+=(-jobs="$JOBS" -workers="$JOBS")
  fi
  # shellcheck disable=SC2206
  [ -n "${FUZZ_EXTRA_ARGS:-}" ] && ARGS+=(${FUZZ_EXTRA_ARGS})

  # UBSan findings must stop the run (the build also uses -fno-sanitize-recover=undefined).
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

  list_findings() {
    find "$CRASHES" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
      -o -name 'oom-*' \) -printf '%f\n' | sort
  }
  before=$(list_findings)
  rm -f "$WORK"/fuzz-*.log

  echo "run-fuzzer: $TARGET for ${SECONDS_TO_RUN}s, jobs=$JOBS, corpus $CORPUS (+ ${CORPUS_DIRS[*]:1})"
  set +e
  (cd "$WORK" && exec "$BIN" "${ARGS[@]}" "${CORPUS_DIRS[@]}") 2>&1 | tee "$LOG"
  rc=${PIPESTATUS[0]}
  set -e
  if [ "$JOBS" -gt 1 ]; then
    cat "$WORK"/fuzz-*.log >>"$LOG" 2>/dev/null || true
  fi

  # Inputs saved by this run: new files, plus any libFuzzer reports writing (a crash found again has
  # the same sha1 name as before).
  new=$( { comm -13 <(echo "$before") <(list_findings);
           sed -n 's|.*Test unit written to .*/\([^/]*\)$|\1|p' "$LOG"; } | sed '/^$/d' | sort -u)
  if [ -z "$new" ] && [ "$rc" -eq 0 ]; then
    echo "run-fuzzer: no crash in ${SECONDS_TO_RUN}s; corpus now $(find "$CORPUS" -type f | wc -l) inputs"
    exit 0
  fi

  echo
  if [ -z "$new" ]; then
    echo "run-fuzzer: $TARGET exited with status $rc but saved no input; see $LOG" >&2
    exit 1
  fi
  echo "run-fuzzer: $TARGET found $(echo "$new" | wc -l) failing input(s) (exit status $rc):" >&2
  while IFS= read -r f; do
    echo "  $CRASHES/$f" >&2
  done <<<"$new"
  first=$CRASHES/$(echo "$new" | head -n1)
  cat >&2 <<EOF

Reproduce (prints the sanitizer report):
  $BIN ${LIMITS[*]} $first
Minimise:
  $BIN ${LIMITS[*]} -minimize_crash=1 -max_total_time=120 -exact_artifact_path=$first.min $first
Keep it as a regression (replayed by ctest, test ${NAME}_fuzz_replay), then fix the bug:
  cp $first.min $REGRESSIONS/<short-description>
The same file also replays without libFuzzer:
  build/tests/fuzz/${NAME}_fuzz_replay $first
EOF
  exit 1
}

main "$@"
