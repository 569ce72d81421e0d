#!/usr/bin/env bash
# Install the Debian packages ts-explore needs when their programs are missing.
#   scripts/system-deps.sh graphviz            -> `dot` (required)
#   scripts/system-deps.sh chromium --optional -> /usr/bin/chromium (browser test)
# As root it runs apt-get; otherwise it tries passwordless sudo, then explains.
set -euo pipefail
pkg="$1"; optional="${2:-}"
case "$pkg" in
  graphviz) have() { command -v dot >/dev/null 2>&1; } ;;
  chromium) have() { [ -x /usr/bin/chromium ]; } ;;
  python3-venv) have() { python3 -c 'import ensurepip' >/dev/null 2>&1; } ;;
  *) echo "system-deps.sh: unknown package $pkg" >&2; exit 2 ;;
esac
have && exit 0
if [ "$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO="none"; fi
if [ "$SUDO" = none ] || ! command -v apt-get >/dev/null 2>&1; then
  msg="ts-explore needs the '$pkg' system package, and it is missing. Install it as root, e.g.  sudo apt-get install -y --no-install-recommends $pkg  (conda: conda install $pkg), then run make again."
  if [ "$optional" = --optional ]; then echo "note: $msg (only the real-browser test needs it; it will be skipped)" >&2; exit 0; fi
  echo "error: $msg" >&2; exit 1
fi
echo "installing Debian package $pkg ..."
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null || true
if ! $SUDO apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null; then
  if [ "$optional" = --optional ]; then echo "note: could not install $pkg; the browser test will be skipped" >&2; exit 0; fi
  echo "error: apt-get could not install $pkg" >&2; exit 1
fi
have || { echo "error: $pkg installed but its program is still missing" >&2; exit 1; }
