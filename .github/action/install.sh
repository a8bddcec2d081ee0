#!/usr/bin/env bash
# Installs fibon-verify for the action: an existing one of the requested version on PATH is
# kept; `local` builds the action's own checkout; a release tag downloads the prebuilt
# binary for this runner when one exists; anything else is `cargo install --locked` of
# that git ref. The binary's directory is added to GITHUB_PATH.
set -euo pipefail
version="${INPUT_VERSION:-local}"
action_path="${ACTION_PATH:-$(cd "$(dirname "$0")/../.." && pwd)}"
repo_url="${GITHUB_SERVER_URL:-https://github.com}/${FIBON_VERIFY_REPOSITORY:-fibon-verify/fibon-verify}"

if command -v fibon-verify >/dev/null 2>&1; then
  have="$(fibon-verify --version | awk '{print $2}')"
  if [ "$version" = "local" ] || [ "v$have" = "$version" ] || [ "$have" = "$version" ]; then
    echo "fibon-verify $have is already installed"
    exit 0
  fi
fi

bin_dir="${RUNNER_TEMP:-/tmp}/fibon-verify-bin"
mkdir -p "$bin_dir"
if [ "$version" = "local" ]; then
  cargo install --locked --path "$action_path" --root "$bin_dir/.." --quiet
  bin_dir="$bin_dir/../bin"
else
  case "${RUNNER_OS:-$(uname -s)}-${RUNNER_ARCH:-$(uname -m)}" in
    Linux-X64|Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
    Linux-ARM64|Linux-aarch64) target=aarch64-unknown-linux-gnu ;;
    macOS-ARM64|Darwin-arm64) target=aarch64-apple-darwin ;;
    macOS-X64|Darwin-x86_64) target=x86_64-apple-darwin ;;
    *) target="" ;;
  esac
  url="$repo_url/releases/download/$version/fibon-verify-$target.tar.gz"
  if [ -n "$target" ] && curl -fsSL "$url" -o "$bin_dir/fv.tar.gz" 2>/dev/null; then
    tar -xzf "$bin_dir/fv.tar.gz" -C "$bin_dir"
  else
    echo "no prebuilt binary for $version on this runner; building it with cargo"
    cargo install --locked --git "$repo_url" --rev "$version" --root "$bin_dir/.." --quiet fibon-verify \
      || cargo install --locked --git "$repo_url" --tag "$version" --root "$bin_dir/.." --quiet fibon-verify
    bin_dir="$bin_dir/../bin"
  fi
fi
echo "$bin_dir" >> "${GITHUB_PATH:-/dev/null}"
"$bin_dir/fibon-verify" --version
