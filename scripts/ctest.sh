#!/bin/sh
# Runs the test suite (CTest) of a build folder and ends with a summary that
# never counts a skipped test as passed: CTest's own "100% tests passed"
# line counts skips among the passes, so it is dropped, and the summary
# lists every skipped test with its reason (the SKIP: line it printed).
# A test whose cmocka cases were skipped inside a passing run counts as
# skipped too.  Exit status: CTest's (non-zero when a test failed).
# Usage: sh scripts/ctest.sh BUILD_DIR [JOBS [CTEST_ARGS...]]
# (`make test` gives -LE long, `make test-long` -L long: the two tiers.)
set -u
build=$1
jobs=${2:-2}
shift; [ $# -gt 0 ] && shift
junit=Testing/junit.xml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rcfile=$tmp/rc
rows=$tmp/rows
(
  cd "$build" || exit 1
  rm -f "$junit"
  ctest --output-on-failure -j "$jobs" --output-junit "$junit" "$@"
  echo $? >"$rcfile"
) 2>&1 | grep -v -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+$'
rc=$(cat "$rcfile")
[ -n "$rc" ] || rc=1
[ -f "$build/$junit" ] || { echo "test summary: no results ($build/$junit missing)"; exit "$rc"; }

# One record per testcase: status (run, skipped, fail), name, reason.  The
# reason of a skip is the first SKIP: line of its output (else CTest's
# message); of a cmocka skip inside a passing test, the skipped cases.  A
# test CTest did not run for another reason (no executable) failed.
awk '
function unxml(s) {
    gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&quot;/, "\"", s);
    gsub(/&apos;/, "\047", s); gsub(/&amp;/, "\\&", s); return s
}
function attr(line, key,    m) {
    if (match(line, key "=\"[^\"]*\"")) return substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 3)
    return ""
}
function flush() {
    if (name == "") return
    if (status == "run" && cm != "") { status = "skipped"; reason = "cmocka case(s) skipped:" cm }
    else if (status == "notrun" && msg ~ /^SKIP_RETURN_CODE=/) status = "skipped"
    else if (status == "notrun") { status = "fail"; reason = "not run: " msg }
    if (status == "skipped" && reason == "") reason = msg
    printf "%s\t%s\t%s\n", status, name, reason
    name = ""
}
/<testcase / { flush(); name = unxml(attr($0, "name")); status = attr($0, "status"); reason = ""; msg = ""; cm = ""; next }
/<skipped / { msg = unxml(attr($0, "message")); next }
/<\/testsuite>/ { flush(); next }
{
    line = $0; sub(/^[ \t]*<system-out>/, "", line); sub(/<\/system-out>.*$/, "", line)
    if (reason == "" && line ~ /^SKIP: /) { sub(/^SKIP: /, "", line); reason = unxml(line) }
    if (line ~ /^\[  SKIPPED \] /) { sub(/^\[  SKIPPED \] /, "", line); cm = cm " " unxml(line) }
}
' "$build/$junit" >"$rows"
pass=$(grep -c '^run	' "$rows")
skip=$(grep -c '^skipped	' "$rows")
fail=$(grep -c -v -e '^run	' -e '^skipped	' "$rows")
total=$((pass + skip + fail))
echo
echo "test summary: $pass passed, $skip skipped, $fail failed (of $total)"
if [ "$skip" -gt 0 ]; then
  echo "skipped, not passed:"
  grep '^skipped	' "$rows" | cut -f2,3 | while IFS='	' read -r n why; do
    printf '  %-40s %s\n' "$n" "$why"
  done
fi
exit "$rc"
