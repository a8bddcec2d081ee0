#!/usr/bin/env bash
# Runs fibon-verify for the action and reports `exit_code`, `report` and `html` as step
# outputs.
# fibon-verify itself writes the job summary and the annotations (GITHUB_ACTIONS=true).
set -uo pipefail
command="${INPUT_COMMAND:-run}"
config="${INPUT_CONFIG:-fibon.yaml}"
report_dir="${INPUT_REPORT_DIR:-target/fibon}"
case "$command" in
  run|probe|sample|audit|check|merge|gate) ;;
  *) echo "::error title=fibon-verify::unknown command \`$command\` (run, probe, sample, audit, check, merge, gate)"; exit 64 ;;
esac

args=("$command" --config "$config")
case "$command" in
  run|sample|audit|merge|gate) args+=(--report-dir "$report_dir") ;;
esac
# A baseline: compared by cell id; `fail-on: new` gates only what fails anew. A baseline
# that cannot be read is fibon-verify's error (64/65), never a quiet run without one.
if [ -n "${INPUT_BASELINE:-}" ]; then
  case "$command" in
    run|audit|merge|gate) args+=(--baseline "$INPUT_BASELINE" --fail-on "${INPUT_FAIL_ON:-all}") ;;
    *) echo "::error title=fibon-verify::\`baseline\` applies to run, audit, merge and gate, not $command"; exit 64 ;;
  esac
fi
# Extra arguments, split on whitespace (no shell evaluation of the input).
read -r -a extra <<< "${INPUT_ARGS:-}"
args+=(${extra[@]+"${extra[@]}"})

if [ "${INPUT_JOB_SUMMARY:-true}" != "true" ]; then
  unset GITHUB_STEP_SUMMARY
fi
export GITHUB_ACTIONS="${GITHUB_ACTIONS:-true}"

echo "fibon-verify ${args[*]}"
fibon-verify "${args[@]}"
code=$?

report="$report_dir/report.json"
html="$report_dir/report.html"
{
  echo "exit_code=$code"
  if [ -f "$report" ]; then echo "report=$report"; else echo "report="; fi
  if [ -f "$html" ]; then echo "html=$html"; else echo "html="; fi
} >> "${GITHUB_OUTPUT:-/dev/null}"

if [ -n "${INPUT_JUNIT_PATH:-}" ] && [ -f "$report_dir/junit.xml" ]; then
  mkdir -p "$(dirname "$INPUT_JUNIT_PATH")"
  cp "$report_dir/junit.xml" "$INPUT_JUNIT_PATH"
fi

if [ "$code" -ne 0 ] && [ "${INPUT_FAIL:-true}" = "true" ]; then
  echo "::error title=fibon-verify::fibon-verify $command exited $code"
  exit "$code"
fi
exit 0
