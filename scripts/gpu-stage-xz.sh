#!/usr/bin/env bash
# Re-pack the staged GPU wheels into two carries that fit beside the project's tracked files.
#
# Run from the project root after `bash ../shared/gpu/stage-wheels.sh --with-jupyter` (and, for the reference
# kernels, `bash ../shared/gpu/stage-anchors.sh`). A device call carries the tracked files (about 8 MB: executed
# notebooks and H200 traces) plus what it names, at most 64 MiB. The DSL's cu13 wheel is 92 MB deflated; its
# files re-compressed with xz are about 64 MB, so its first 52 MiB travel alone in .gpu/a and the rest with every
# other wheel (the DSL's small wheels, the notebook wheels, graphviz-pure, the anchors) in .gpu/b, whose env.sh
# joins the two, unpacks them into /tmp/site and installs the rest there. Two calls, back to back:
#   1. carry .gpu/a:  mkdir -p /root/gpu-a && cp .gpu/a/* /root/gpu-a/
#   2. carry .gpu/b:  source .gpu/b/env.sh && ...
# (later calls on the same warm machine: carry .gpu/b, source .gpu/b/env.sh, which finds /tmp/site ready).
set -euo pipefail
[ -f pyproject.toml ] && [ -f .gpu/b/cu13.name ] || {
  echo "run from the project root after ../shared/gpu/stage-wheels.sh --with-jupyter" >&2; exit 2; }
LIMIT=$((64 * 1024 * 1024))
whl=$(cat .gpu/b/cu13.name)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat .gpu/a/cu13.part.aa .gpu/b/cu13.part.ab > "$work/$whl"
mkdir "$work/files"
python3 -m zipfile -e "$work/$whl" "$work/files"
tar -C "$work/files" -cf - . | xz -T0 -9e > "$work/cu13.tar.xz"
rm -f .gpu/a/cu13.part.aa .gpu/b/cu13.part.ab
mv .gpu/a/*.whl .gpu/b/ 2>/dev/null || true  # graphviz-pure travels with the rest
split -b 52M "$work/cu13.tar.xz" "$work/cu13.tar.xz."
mv "$work/cu13.tar.xz.aa" .gpu/a/
mv "$work/cu13.tar.xz.ab" .gpu/b/
if [ -d .gpu/anchors ]; then mkdir -p .gpu/b/anchors && cp .gpu/anchors/*.whl .gpu/b/anchors/; fi
cat > .gpu/b/env.sh <<'EOF'
# Sourced on the device machine:  source .gpu/b/env.sh
# Joins the xz parts (/root/gpu-a from the first call, .gpu/b), unpacks the cu13 wheel's files into /tmp/site,
# installs the other wheels there once per machine, and puts /tmp/site, the DSL and the project on PYTHONPATH.
if [ ! -f /tmp/site/.ts-ready ]; then
  [ -f /root/gpu-a/cu13.tar.xz.aa ] || { echo "env.sh: /root/gpu-a/cu13.tar.xz.aa missing: make the first call (copy .gpu/a) right before this one" >&2; return 3; }
  # the wheels first: pip --target skips a top-level folder that already exists, and the cu13 files share
  # nvidia_cutlass_dsl/ with the DSL's other wheels, so they are unpacked into it afterwards
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
    $(ls .gpu/b/*.whl | grep -v graphviz_pure) $(ls .gpu/b/anchors/*.whl 2>/dev/null) || return 5
  cat /root/gpu-a/cu13.tar.xz.aa .gpu/b/cu13.tar.xz.ab | python3 -c \
    "import sys, tarfile; tarfile.open(fileobj=sys.stdin.buffer, mode='r|xz').extractall('/tmp/site')" || return 4
  if ls .gpu/b/graphviz_pure-*.whl >/dev/null 2>&1; then   # a `dot` for the diagrams
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/gv \
      .gpu/b/graphviz_pure-*.whl || return 6
    mkdir -p /tmp/site/bin && ln -sf /tmp/gv/bin/graphviz-pure /tmp/site/bin/dot
  fi
  touch /tmp/site/.ts-ready
fi
export PYTHONPATH="$(pwd):/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages${PYTHONPATH:+:$PYTHONPATH}"
export PATH="/tmp/site/bin:$PATH"
export PYTHONUNBUFFERED=1
EOF
tracked=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
for part in a b; do
  size=$(du -cb .gpu/$part | tail -1 | cut -f1)
  echo ".gpu/$part: $size bytes + $tracked tracked = $((size + tracked)) of $LIMIT"
  [ $((size + tracked)) -le "$LIMIT" ] || { echo "  .gpu/$part does not fit" >&2; exit 3; }
done
