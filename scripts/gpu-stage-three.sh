#!/usr/bin/env bash
# Re-split the staged GPU wheels into three carries when the project's own files no longer leave room for two.
#
# Run from the project root after `bash ../shared/gpu/stage-wheels.sh --with-jupyter`. Each device call carries
# the tracked files (benchmarks/results and notebooks/executed hold H200 traces and executed notebooks, several
# MB) plus what it names, at most 64 MiB in all; the shared recipe's two parts (about 58 MiB each) then no longer
# fit. This moves graphviz-pure and the largest notebook wheels out of .gpu/a and .gpu/b into .gpu/g, and makes
# the staged .gpu/b/env.sh install them from where the second call copies them. The three calls, back to back:
#   1. carry .gpu/a:  mkdir -p /root/gpu-a && cp .gpu/a/* /root/gpu-a/
#   2. carry .gpu/g:  mkdir -p /root/gpu-a/extra && cp .gpu/g/graphviz_pure-*.whl /root/gpu-a/ \
#                       && cp .gpu/g/extra/*.whl /root/gpu-a/extra/
#   3. carry .gpu/b:  source .gpu/b/env.sh && ...
set -euo pipefail
[ -f pyproject.toml ] && [ -f .gpu/b/env.sh ] && [ -f .gpu/b/cu13.name ] || {
  echo "run from the project root after ../shared/gpu/stage-wheels.sh --with-jupyter" >&2; exit 2; }
LIMIT=$((64 * 1024 * 1024))
tracked=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
room=$((LIMIT - tracked - 512 * 1024))  # what a carry may add, with 512 KiB to spare for new files
mkdir -p .gpu/g/extra
mv .gpu/a/graphviz_pure-*.whl .gpu/g/ 2>/dev/null || true
size() { du -cb "$@" | tail -1 | cut -f1; }
# the largest notebook wheels of .gpu/b go to .gpu/g/extra until .gpu/b fits (the DSL's own wheels stay)
for whl in $(ls -S .gpu/b/*.whl | grep -v nvidia_cutlass); do
  [ "$(size .gpu/b)" -le "$room" ] && break
  mv "$whl" .gpu/g/extra/
done
grep -q '/root/gpu-a/extra' .gpu/b/env.sh || \
  sed -i 's|"/tmp/$name" .gpu/b/\*.whl|"/tmp/$name" .gpu/b/*.whl $(ls /root/gpu-a/extra/*.whl 2>/dev/null)|' .gpu/b/env.sh
for part in a g b; do
  echo ".gpu/$part: $(size .gpu/$part) bytes + $tracked tracked = $(( $(size .gpu/$part) + tracked )) of $LIMIT"
  [ $(( $(size .gpu/$part) + tracked )) -le "$LIMIT" ] || { echo "  .gpu/$part still does not fit" >&2; exit 3; }
done
