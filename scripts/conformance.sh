#!/usr/bin/env bash
# Runs every case of ONNX's backend test suite (Debian's libonnx-testdata) through the CPU runtime
# with `sod2 run --test-data`, one process per case under a time and memory limit, and writes:
#
#   OUT/conformance.json   {"summary": {...}, "by_reason": {...}, "cases": [{folder, case, status,
#                          reason, ms}, ...]}
#   OUT/conformance.txt    pass counts by folder, then the failures grouped by reason
#
#   scripts/conformance.sh [SOD2] [DATA] [OUT]   defaults: build/bin/sod2,
#                                               /usr/share/libonnx-testdata/data, build/bench
# Environment: CONFORMANCE_JOBS (default: nproc) cases at once; CONFORMANCE_TIMEOUT (default 120)
# seconds per case; CONFORMANCE_FILTER a regular expression on "folder/case" to run a subset;
# CONFORMANCE_MIN_PASS fail unless at least this many cases pass (the ctest's regression floor).
#
# Status per case: pass; mismatch (ran, an output is outside the tolerance); error (a clear error
# message, named in reason); crash (killed by a signal: always a defect); timeout (a defect too).
# Exit status: 0 when no case crashed or timed out (and CONFORMANCE_MIN_PASS held), 1 otherwise,
# 2 on usage errors.
set -euo pipefail

main() {
  local root sod2 data out jobs timeout_s filter min_pass
  root=$(cd "$(dirname "$0")/.." && pwd)
  sod2=${1:-$root/build/bin/sod2}
  data=${2:-/usr/share/libonnx-testdata/data}
  out=${3:-$root/build/bench}
  jobs=${CONFORMANCE_JOBS:-$(nproc)}
  timeout_s=${CONFORMANCE_TIMEOUT:-120}
  filter=${CONFORMANCE_FILTER:-}
  min_pass=${CONFORMANCE_MIN_PASS:-0}
  [[ $min_pass =~ ^[0-9]+$ ]] || { echo "conformance: CONFORMANCE_MIN_PASS must be a number" >&2; exit 2; }
  [ -x "$sod2" ] || { echo "conformance: $sod2 is not built (make build)" >&2; exit 2; }
  [ -d "$data" ] || { echo "conformance: no test data at $data (apt-get install libonnx-testdata)" >&2; exit 2; }
  [[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "conformance: CONFORMANCE_JOBS must be a positive integer" >&2; exit 2; }
  [[ $timeout_s =~ ^[1-9][0-9]*$ ]] || { echo "conformance: CONFORMANCE_TIMEOUT must be a positive integer" >&2; exit 2; }
  mkdir -p "$out"
  work=""  # global: the EXIT trap reads it
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT

  # The suite the issue counts: the four folders of generated cases (1,072 in libonnx-testdata
  # 1.12). `real` holds full-size downloaded models and is not part of it.
  local folder dir n=0
  : >"$work/list"
  for folder in node simple pytorch-converted pytorch-operator; do
    [ -d "$data/$folder" ] || continue
    for dir in "$data/$folder"/*/; do
      dir=${dir%/}
      local name=$folder/$(basename "$dir")
      if [ -n "$filter" ] && ! [[ $name =~ $filter ]]; then continue; fi
      echo "$name" >>"$work/list"
      n=$((n + 1))
    done
  done
  echo "conformance: $n cases, $jobs at a time, ${timeout_s}s each" >&2

  export SOD2_CONF_BIN=$sod2 SOD2_CONF_DATA=$data SOD2_CONF_WORK=$work SOD2_CONF_TIMEOUT=$timeout_s
  xargs -P "$jobs" -d '\n' -n 1 bash -c 'run_case "$1"' _ <"$work/list"

  report "$work" "$out" "$min_pass"
}

# One case: its status and reason into $SOD2_CONF_WORK/results/<folder>__<case>.
run_case() {
  local name=$1 folder case_name dir log start end rc status reason
  folder=${name%%/*}
  case_name=${name#*/}
  dir=$SOD2_CONF_DATA/$name
  log=$SOD2_CONF_WORK/logs/${folder}__$case_name.log
  mkdir -p "$SOD2_CONF_WORK/logs" "$SOD2_CONF_WORK/results"
  start=$(date +%s%N)
  set +e
  # One thread per case (the cases run in parallel); the memory limit keeps a case that asks for
  # too much an error, not a machine that swaps.
  timeout -k 5 "$SOD2_CONF_TIMEOUT" "$SOD2_CONF_BIN" run "$dir/model.onnx" \
    --test-data "$dir/test_data_set_0" --threads 1 --max-run-mb 4096 >"$log" 2>&1
  rc=$?
  set -e
  end=$(date +%s%N)
  if [ $rc -eq 0 ]; then
    status=pass
    reason=""
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    status=timeout
    reason="no result after ${SOD2_CONF_TIMEOUT}s"
  elif [ $rc -gt 128 ]; then
    status=crash
    reason="killed by signal $((rc - 128))"
  elif grep -q '^FAIL' "$log"; then
    status=mismatch
    reason=$(grep -m1 -E '^(FAIL|mismatch|bad) ' "$log" || true)
    reason=${reason:-$(grep -m1 '^FAIL' "$log")}
  else
    status=error
    reason=$(grep -v '^ok ' "$log" | tail -1)
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$folder" "$case_name" "$status" "$(((end - start) / 1000000))" \
    "${reason//$'\t'/ }" >"$SOD2_CONF_WORK/results/${folder}__$case_name"
}
export -f run_case

json_string() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\r'/ }
  s=$(printf '%s' "$s" | tr -d '\000-\037')
  printf '"%s"' "$s"
}

# The reason with what identifies one case taken out, so that cases failing for the same cause
# share one line of the summary: "node 'Add_3' (Add): msg" and "input 'x': msg" become "Add: msg"
# and "input: msg".
reason_key() {
  local r=$1
  r=${r#sod2 run: }
  r=$(printf '%s' "$r" | sed -E "s/^node '[^']*' \(([^)]*)\): /\1: /; s/^(input|output) '[^']*'/\1/;
    s/'[^']*'/'…'/g; s/[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?/N/g")
  printf '%s' "$r"
}

report() {
  local work=$1 out=$2 min_pass=$3 json=$out/conformance.json txt=$out/conformance.txt
  sort "$work"/results/* >"$work/all.tsv"
  local total pass
  total=$(wc -l <"$work/all.tsv")
  pass=$(awk -F'\t' '$3 == "pass"' "$work/all.tsv" | wc -l)

  # Reasons, most frequent first.
  : >"$work/keys.tsv"
  local folder case_name status ms reason
  while IFS=$'\t' read -r folder case_name status ms reason; do
    [ "$status" = pass ] && continue
    printf '%s\t%s\t%s\n' "$status" "$(reason_key "$reason")" "$folder/$case_name" >>"$work/keys.tsv"
  done <"$work/all.tsv"

  {
    echo "libonnx-testdata conformance: $pass of $total pass"
    echo
    printf '%-20s %6s %6s %9s %6s %6s %8s\n' folder cases pass mismatch error crash timeout
    for folder in node simple pytorch-converted pytorch-operator; do
      awk -F'\t' -v f="$folder" '$1 == f { n++; s[$3]++ } END { if (n) printf "%-20s %6d %6d %9d %6d %6d %8d\n", f, n, s["pass"], s["mismatch"], s["error"], s["crash"], s["timeout"] }' "$work/all.tsv"
    done
    echo
    echo "failures by reason (count, status, reason: cases)"
    awk -F'\t' '{ k = $1 "\t" $2; c[k]++; if (length(ex[k]) < 160) ex[k] = ex[k] (ex[k] ? " " : "") $3 }
      END { for (k in c) { split(k, p, "\t"); printf "%5d  %-8s %s: %s\n", c[k], p[1], p[2], ex[k] } }' \
      "$work/keys.tsv" | sort -k1,1nr -k3
  } >"$txt"

  {
    printf '{\n  "suite": "libonnx-testdata",\n  "summary": {"cases": %d, "pass": %d' "$total" "$pass"
    for status in mismatch error crash timeout; do
      printf ', "%s": %d' "$status" "$(awk -F'\t' -v s="$status" '$3 == s' "$work/all.tsv" | wc -l)"
    done
    printf '},\n  "by_folder": {'
    local first=1
    for folder in node simple pytorch-converted pytorch-operator; do
      local fc fp
      fc=$(awk -F'\t' -v f="$folder" '$1 == f' "$work/all.tsv" | wc -l)
      [ "$fc" -eq 0 ] && continue
      fp=$(awk -F'\t' -v f="$folder" '$1 == f && $3 == "pass"' "$work/all.tsv" | wc -l)
      [ $first -eq 1 ] || printf ', '
      first=0
      printf '"%s": {"cases": %d, "pass": %d}' "$folder" "$fc" "$fp"
    done
    printf '},\n  "cases": [\n'
    first=1
    while IFS=$'\t' read -r folder case_name status ms reason; do
      [ $first -eq 1 ] || printf ',\n'
      first=0
      printf '    {"folder": "%s", "case": "%s", "status": "%s", "ms": %s, "reason": %s}' \
        "$folder" "$case_name" "$status" "$ms" "$(json_string "$reason")"
    done <"$work/all.tsv"
    printf '\n  ]\n}\n'
  } >"$json"

  head -8 "$txt"
  echo "(table: $json; failures by reason: $txt)"
  local bad status=0
  if [ "$pass" -lt "$min_pass" ]; then
    echo "conformance: $pass cases pass, fewer than the $min_pass this build must pass (a regression: see $txt)" >&2
    status=1
  fi
  bad=$(awk -F'\t' '$3 == "crash" || $3 == "timeout" { print $1 "/" $2 " " $3 }' "$work/all.tsv")
  if [ -n "$bad" ]; then
    echo "conformance: cases that crashed or hung (defects):" >&2
    echo "$bad" >&2
    status=1
  fi
  return $status
}

main "$@"
