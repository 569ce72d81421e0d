#!/bin/bash
# Stage the wheels a GPU sweep needs on a machine without network or Dask (Python 3.12, Linux x86_64).
#
# Run from the project root:   bash scripts/stage-sweep-wheels.sh
#
# That machine has torch, numpy, pandas, pyarrow, cloudpickle, msgpack, toolz, psutil,
# sortedcontainers and nvidia-ml-py, but not Dask. This fills .gpu/c (a few MB) with
#   - dask, distributed, dask-cuda (always installed there), and
#   - their smaller dependencies (click, tblib, zict, partd, locket, tornado, PyYAML,
#     Jinja2, MarkupSafe, fsspec, packaging), which .gpu/c/env-sweep.sh installs only where the
#     machine cannot import them already,
# plus .gpu/c/env-sweep.sh, to be sourced there after the DSL's own env.sh:
#   source .gpu/b/env.sh && source .gpu/c/env-sweep.sh && bash scripts/gpu-sweep.sh
set -euo pipefail
[ -f pyproject.toml ] && [ -d ts_explore ] || { echo "run this from the project root" >&2; exit 2; }
EXCLUDE=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$EXCLUDE")"
grep -qx '/.gpu/' "$EXCLUDE" 2>/dev/null || echo '/.gpu/' >> "$EXCLUDE"

PY=${PYTHON:-python3}
DASK_VERSION=${DASK_VERSION:-2026.7.1}
DASK_CUDA_VERSION=${DASK_CUDA_VERSION:-26.10.0}
OUTDIR=.gpu/c
rm -rf "$OUTDIR" && mkdir -p "$OUTDIR"
PLAT=(--only-binary=:all: --python-version 3.12 --implementation cp
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64
      --platform manylinux2014_x86_64 --platform any)
# module  requirement  (always: installed even when the machine has some version)
WHEELS="dask dask==$DASK_VERSION always
distributed distributed==$DASK_VERSION always
dask_cuda dask-cuda==$DASK_CUDA_VERSION always
click click>=8.1 missing
tblib tblib>=1.6,!=3.2.0,!=3.2.1 missing
zict zict>=3.0 missing
partd partd>=1.4 missing
locket locket>=1.0 missing
tornado tornado>=6.2 missing
yaml PyYAML>=5.4.1 missing
jinja2 Jinja2>=2.10.3 missing
markupsafe MarkupSafe>=2.0 missing
fsspec fsspec>=2021.09.0 missing
packaging packaging>=20.0 missing"
: > "$OUTDIR/wheels.txt"
while read -r module requirement when; do
  before=$(ls "$OUTDIR")
  "$PY" -m pip download -q --no-deps "${PLAT[@]}" -d "$OUTDIR" "$requirement"
  file=$(comm -13 <(echo "$before" | sort) <(ls "$OUTDIR" | sort) | grep '\.whl$' | head -1)
  [ -n "$file" ] || { echo "no wheel downloaded for $requirement" >&2; exit 3; }
  echo "$module $file $when" >> "$OUTDIR/wheels.txt"
done <<< "$WHEELS"

cat > "$OUTDIR/env-sweep.sh" <<'ENV'
# Sourced on the GPU machine after the DSL's env.sh:  source .gpu/c/env-sweep.sh
# Installs Dask, distributed and dask-cuda (and any dependency the machine lacks) into /tmp/site.
# Once a run has installed the DSL there (.gpu/b/env.sh), a later run on the same warm machine may carry
# .gpu/c alone (.gpu/b and .gpu/c together exceed what one run carries): this file then sets the paths.
_sweep_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -f /tmp/site/.ts-ready ] && [ -z "${_ts_dsl_paths:-}" ]; then
  _ts_root=$(cd "$_sweep_dir/../.." && pwd)
  export PYTHONPATH="$_ts_root:/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages${PYTHONPATH:+:$PYTHONPATH}"
  export PATH="/tmp/site/bin:$PATH" PYTHONUNBUFFERED=1 _ts_dsl_paths=1
fi
if [ ! -f /tmp/site/.ts-sweep-ready ]; then
  _sweep_wheels=()
  while read -r _module _file _when; do
    if [ "$_when" = always ] || ! python3 -c "import $_module" 2>/dev/null; then
      _sweep_wheels+=("$_sweep_dir/$_file")
    fi
  done < "$_sweep_dir/wheels.txt"
  echo "env-sweep.sh: installing ${#_sweep_wheels[@]} wheel(s) into /tmp/site" >&2
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "${_sweep_wheels[@]}" || return 5
  touch /tmp/site/.ts-sweep-ready
fi
case ":${PYTHONPATH:-}:" in *:/tmp/site:*) ;; *) export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}" ;; esac
python3 -c "import distributed, dask_cuda; print('env-sweep.sh: distributed', distributed.__version__, '/ dask-cuda', dask_cuda.__version__)" || return 6
ENV
du -sh "$OUTDIR"
ls -l "$OUTDIR"
