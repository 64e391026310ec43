#!/usr/bin/env bash
# The GPU global step (issue #14 item 8, docs/face_solver.md "GPU") checked in one go on a machine with an NVIDIA
# GPU: CuPy (the one installed, else `pip install .[gpu]`), the face kernels compiled, the GPU tests, then
# bench_face.py on the small face without and with --device gpu. About 3-5 minutes on a 16-core H100/H200 machine
# (most of it Numba compiling the face kernels on a cold cache). Run from anywhere; prints everything:
#
#     bash benchmarks/gpu_check.sh 2>&1 | tee gpu_check.log
#
# PYTHON picks the interpreter (default python3); BENCH_ARGS adds bench_face.py options (e.g. "--frames 2").
# Exit status: the number of steps that failed.
set -u -o pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
failed=0

step() {  # step NAME TIMEOUT_S COMMAND...: run, time and count a failure
    local name=$1 limit=$2 t0=$SECONDS rc
    shift 2
    echo "=== $name"
    timeout "$limit" "$@"
    rc=$?
    echo "=== $name: exit $rc in $((SECONDS - t0)) s"
    [ "$rc" -eq 0 ] || failed=$((failed + 1))
}

if ! "$PY" -c "import cupy" 2>/dev/null; then
    step "pip install .[gpu]" 300 "$PY" -m pip install -q ".[gpu]"
fi
step "environment" 60 "$PY" -c "
import cupy, numba, numpy, scipy, ipcsim
from ipcsim.face.dense_device import dense_backend
dense_backend('gpu')  # DeviceError here when CuPy sees no GPU
name = cupy.cuda.runtime.getDeviceProperties(0)['name']
print('ipcsim', ipcsim.__file__, '| numpy', numpy.__version__, '| scipy', scipy.__version__, '| numba',
      numba.__version__, '| cupy', cupy.__version__, '| GPU', name.decode() if isinstance(name, bytes) else name)"
step "compile the face kernels" 400 env IPCSIM_COMPILE_PROCESSES=8 "$PY" -c "
from ipcsim.app.warmup import prepare_kernels
print(f'{prepare_kernels(\"face\"):.0f} s')"
step "GPU tests" 300 "$PY" -m pytest -q -rs -s -p no:cacheprovider tests/face/test_global_step_gpu.py
# shellcheck disable=SC2086  # BENCH_ARGS: several words
step "bench_face small, CPU" 300 "$PY" benchmarks/bench_face.py --size small ${BENCH_ARGS:-}
# shellcheck disable=SC2086
step "bench_face small, --device gpu" 300 "$PY" benchmarks/bench_face.py --size small --device gpu ${BENCH_ARGS:-}
echo "gpu_check: $failed step(s) failed"
exit "$failed"
