#!/usr/bin/env bash
# Audits every blind corpus (tests/fixtures/corpora/fresh-*, tests/fixtures/actions) and
# any further History files given, with two fibon-verify binaries, and compares what
# they wrote: report.json with its timings stripped, and stdout and stderr without the timing line.
# For changes that must not move a verdict (performance work): exit 0 when equal.
#
#   scripts/compare-verdicts.sh BEFORE_BIN AFTER_BIN [PROJECT_DIR:HISTORY ...]
set -euo pipefail
before=$(realpath "$1"); after=$(realpath "$2"); shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
runs=()
for h in "$root"/tests/fixtures/corpora/fresh-*/history.jsonl; do
  runs+=("$root/tests/fixtures/corpora/project:$h")
done
runs+=("$root/tests/fixtures/actions/project:$root/tests/fixtures/actions/history.jsonl")
runs+=("$@")
strip() { # report.json without timings, keys sorted
  python3 - "$1" <<'PY'
import json, sys
def s(v):
    if isinstance(v, dict):
        return {k: s(x) for k, x in v.items() if k not in ("duration_ms", "at_ms", "started_at")}
    if isinstance(v, list):
        return [s(x) for x in v]
    return v
print(json.dumps(s(json.load(open(sys.argv[1]))), indent=1, sort_keys=True, ensure_ascii=False))
PY
}
fail=0; n=0
for run in "${runs[@]}"; do
  project=${run%%:*}; history=$(realpath "${run#*:}"); n=$((n + 1))
  for side in before after; do
    bin=$before; [ "$side" = after ] && bin=$after
    set +e
    (cd "$project" && "$bin" audit --history "$history" --report-dir "$work/$side-$n" --color never \
      >"$work/$side-$n.out" 2>"$work/$side-$n.err")
    echo $? >"$work/$side-$n.rc"
    set -e
    strip "$work/$side-$n/report.json" >"$work/$side-$n.json"
    cat "$work/$side-$n.out" "$work/$side-$n.err" | { grep -v '^read .* in .* s$' || true; } \
      | sed "s#$work/$side-$n#DIR#g" >"$work/$side-$n.stdout"
  done
  for part in rc json stdout; do
    if ! cmp -s "$work/before-$n.$part" "$work/after-$n.$part"; then
      echo "DIFFERENT $part: $history"; diff "$work/before-$n.$part" "$work/after-$n.$part" | head -20
      fail=1
    fi
  done
  echo "checked: $history ($(wc -l <"$history") lines, exit $(cat "$work/after-$n.rc"))"
done
[ $fail = 0 ] && echo "all $n audits equal" || echo "DIFFERENCES (above)"
exit $fail
