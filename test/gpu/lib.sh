# shellcheck shell=bash
# What the GPU test scripts share; each sources it, then calls junit_begin.
#
# The scripts run from a GPU bundle (scripts/make_gpu_bundle.sh), where this
# file lies in test/gpu/ below the bundle's root: bin/tile-run, kernels/,
# user-kernels/, python/. Each script records its cases with `record` into
# $OUT/junit/PART.xml (JUnit XML), which run.sh sums with
# scripts/summarize_tests.py; its logs go to $OUT/PART/.
#
# Environment: OUT (default: <bundle>/results), BACKEND (default cuda; interp
# runs the same cases on the CPU, slowly, where the bundle has the
# interpreter).

GPU_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$GPU_TESTS/../.." && pwd)
RUN=$ROOT/bin/tile-run
OUT=${OUT:-$ROOT/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BACKEND=${BACKEND:-cuda}
if [ ! -x "$RUN" ]; then
  echo "no $RUN: run the GPU tests from a GPU bundle (scripts/make_gpu_bundle.sh)"
  exit 2
fi

xml_escape() {
  printf '%s' "$1" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' \
    -e 's/"/\&quot;/g'
}

# junit_begin PART: the cases recorded from here go to $OUT/junit/PART.xml,
# written when the script exits, however it exits. LOGS is $OUT/PART.
junit_begin() {
  PART=$1
  LOGS=$OUT/$PART
  mkdir -p "$OUT/junit" "$LOGS"
  JUNIT=$OUT/junit/$PART.xml
  JUNIT_CASES=$LOGS/.cases
  : > "$JUNIT_CASES"
  passed=0 failed=0 skipped=0
  elsewhere=0   # 1: a failure recorded in another report (pytest's, say)
  trap 'junit_end $?' EXIT
}

# record NAME pass|fail|skip [DETAIL]: one case; DETAIL says why it failed
# or was skipped.
record() {
  local name result=$2 detail=${3:-}
  name=$(xml_escape "$1")
  case $result in
    pass)
      passed=$((passed + 1))
      echo "<testcase classname=\"$PART\" name=\"$name\"/>" >> "$JUNIT_CASES" ;;
    fail)
      failed=$((failed + 1))
      echo "<testcase classname=\"$PART\" name=\"$name\"><failure message=\"failed\">$(
        xml_escape "$detail")</failure></testcase>" >> "$JUNIT_CASES" ;;
    skip)
      skipped=$((skipped + 1))
      echo "<testcase classname=\"$PART\" name=\"$name\"><skipped message=\"$(
        xml_escape "$detail")\"/></testcase>" >> "$JUNIT_CASES" ;;
  esac
}

# A check written in Python on PyTorch's CUDA tensors, recorded as one
# case (its output in $LOGS/LOG.log), skipped where PyTorch sees no GPU:
#   record_torch_check NAME LOG SCRIPT [ARG ...]    (SCRIPT in test/gpu/)
record_torch_check() {
  local name=$1 log="$LOGS/$2.log" script=$3
  shift 3
  if ! python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null; then
    record "$name" skip "PyTorch with CUDA is needed"
  elif python3 "$GPU_TESTS/$script" "$@" > "$log" 2>&1; then
    tail -1 "$log"
    record "$name" pass
  else
    echo "FAIL $name"; tail -12 "$log"
    record "$name" fail "$(tail -12 "$log")"
  fi
}

# A script that stops with an error it did not record fails as a case of
# its own, so that the summary cannot miss it.
junit_end() {
  local status=$1
  trap - EXIT
  if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ] && [ "$elsewhere" -eq 0 ]; then
    record "$PART: exited with status $status" fail "see its output"
  fi
  {
    echo "<testsuite name=\"$PART\" tests=\"$((passed + failed + skipped))\"" \
      "failures=\"$failed\" skipped=\"$skipped\">"
    cat "$JUNIT_CASES"
    echo "</testsuite>"
  } > "$JUNIT"
  rm -f "$JUNIT_CASES"
  exit "$status"
}
