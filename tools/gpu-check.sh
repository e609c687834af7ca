#!/usr/bin/env bash
# The GPU check: builds lazuli on a machine with an NVIDIA GPU, runs the GPU tests and the GPU
# benchmarks, and prints a short table last.
#
# Such a machine has the CUDA toolkit, CMake and a compiler, but may lack LLVM, Boost, OpenBLAS
# and GoogleTest, and has no network. So, on a development machine (tools/setup-debian.sh done):
#
#   tools/gpu-check.sh --pack     # writes build/gpu-pack: the Boost headers lazuli includes
#                                 # (just those, ~5 MB) and GoogleTest's sources
#
# then bring the working tree with build/gpu-pack to the GPU machine and run there:
#
#   tools/gpu-check.sh            # build/gpu: LLVM and OpenBLAS used when present, else left out
#
# The GPU tests are the test executables named *cuda*; each skips, saying why, without a GPU,
# so the script also runs (and shows the skips) on a machine without one. LAZULI_GPU_CHECK_BARE=1
# builds as on a bare GPU machine (no LLVM, OpenBLAS, system Boost or GoogleTest) anywhere;
# LAZULI_GPU_CHECK_SIZES=64K runs the benchmarks at that size only (a quick pass);
# LAZULI_GPU_CHECK_TIMEOUT (seconds, default 240) ends a test executable or the benchmark that
# runs longer, as a FAILED row, so a hang on the GPU cannot use up the machine's time. With
# LD_LIBRARY_PATH at the CUDA emulation's folder (tests/cuda_emulation/README.md) the whole
# check runs here as it will on a GPU, slowly: a rehearsal.
set -euo pipefail
cd "$(dirname "$0")/.."
readonly pack=build/gpu-pack
readonly build=build/gpu
readonly bare=${LAZULI_GPU_CHECK_BARE:-0}
readonly time_limit=${LAZULI_GPU_CHECK_TIMEOUT:-240}

has() {  # has <what>: whether this machine provides it (never, when pretending to be bare)
  [[ $bare != 1 ]] || return 1
  case $1 in
    llvm) command -v llvm-config-14 >/dev/null ;;
    openblas) ldconfig -p 2>/dev/null | grep -q libopenblas ;;
    onednn) ldconfig -p 2>/dev/null | grep -q libdnnl ;;
    boost) [[ -f /usr/include/boost/graph/adjacency_list.hpp ]] ;;
    gtest) [[ -f /usr/include/gtest/gtest.h ]] ;;
  esac
}

need_pack() {
  [[ -d $pack/$1 ]] && return
  echo "gpu-check: $2 is missing here and $pack/$1 was not brought;" \
       "run tools/gpu-check.sh --pack where it is installed" >&2
  exit 1
}

# count <PASSED|SKIPPED|FAILED> <log>: the number in GoogleTest's summary line, or nothing.
count() { grep -oE "^\[  $1 *\] [0-9]+" "$2" | grep -oE '[0-9]+$' | head -1 || true; }

make_pack() {
  rm -rf "$pack"
  mkdir -p "$pack/boost-headers"
  # Every Boost header the sources include, and what those include in turn, as the compiler
  # reads them.
  local includes
  local layers
  read -ra layers <<< "$(sed -n 's/^set(lazuli_layers \(.*\))$/\1/p' cmake/layers.cmake)"
  includes=$(grep -rhoE '#include <boost/[^>]+>' --include='*.cpp' --include='*.h' \
               "${layers[@]}" | sort -u)
  printf '%s\n#include <boost/version.hpp>\n' "$includes" |
    g++ -std=c++20 -x c++ -M - |
    tr ' \\' '\n\n' | grep '/boost/' | sort -u |
    while read -r header; do
      local relative=${header#*/include/}
      mkdir -p "$pack/boost-headers/$(dirname "$relative")"
      cp "$header" "$pack/boost-headers/$relative"
    done
  cp -r /usr/src/googletest "$pack/googletest"
  echo "gpu-check: wrote $pack ($(du -sh "$pack" | cut -f1)); carry it with the working tree"
}

# Prints the configure arguments, one per line, leaving out what this machine lacks.
configure_arguments() {
  local arguments=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLAZULI_BUILD_EXAMPLES=OFF)
  if command -v ninja >/dev/null; then arguments+=(-G Ninja); fi
  has llvm || arguments+=(-DLAZULI_WITH_LLVM=OFF)
  has openblas || arguments+=(-DLAZULI_WITH_BLAS=OFF)
  has onednn || arguments+=(-DLAZULI_WITH_ONEDNN=OFF)
  if ! has boost; then
    need_pack boost-headers Boost
    arguments+=(-DBoost_INCLUDE_DIR="$PWD/$pack/boost-headers" -DBoost_NO_SYSTEM_PATHS=ON)
  fi
  if ! has gtest; then
    need_pack googletest GoogleTest
    arguments+=(-DLAZULI_GTEST_SOURCE_DIR="$PWD/$pack/googletest")
  fi
  printf '%s\n' "${arguments[@]}"
}

if [[ ${1:-} == --pack ]]; then
  make_pack
  exit 0
fi

start=$(date +%s)
# A substitution, not `< <(...)`: a missing pack's exit must end the check, not just a subshell.
configured=$(configure_arguments) || exit 1
mapfile -t arguments <<<"$configured"
echo "gpu-check: cmake ${arguments[*]}"
cmake -S . -B "$build" "${arguments[@]}" >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }

# The GPU tests are the test executables named *cuda* (but the CUDA emulation's own test, which
# a GPU adds nothing to) and the differential fuzzer's CUDA variant; the benchmarks are
# lazuli-bench's. (`--target help` lists "name: phony" with Ninja, "... name" with Makefiles.)
mapfile -t gpu_tests < <(cmake --build "$build" --target help |
  sed -nE 's/^(\.\.\. )?([a-z0-9_]*cuda[a-z0-9_]*_tests)(: .*)?$/\2/p' |
  grep -v '^cuda_emulation_stack_tests$' | sort -u)
cmake --build "$build" -j "$(nproc)" --target lazuli-bench passes_fuzz_tests "${gpu_tests[@]}"
built=$(date +%s)

rows=()
failed=0
# run_test <executable> [argument...]: runs it, adds its row to the table.
run_test() {
  local test=$1
  shift
  local binary log test_start status=ok
  binary=$(find "$build/tests" -type f -name "$test" | head -1)
  log="$build/$test.log"
  test_start=$(date +%s)
  if [[ -z $binary ]]; then
    echo "$test was not built under $build/tests" >"$log"
    status=FAILED failed=1
  else
    timeout "$time_limit" "$binary" "$@" >"$log" 2>&1 || {
      [[ $? == 124 ]] && echo "gpu-check: ended after ${time_limit}s (LAZULI_GPU_CHECK_TIMEOUT)" >>"$log"
      status=FAILED failed=1
    }
  fi
  rows+=("$(printf '| %-32s | %6s | %7s | %6s | %5ss | %s' "$test" "$(count PASSED "$log")" \
    "$(count SKIPPED "$log")" "$(count FAILED "$log")" "$(($(date +%s) - test_start))" "$status")")
  # A failure's first lines; `|| true` because under pipefail a log without a match, or head
  # closing the pipe early, would otherwise end the whole check before its table.
  if [[ $status != ok ]]; then { grep -E "Failure|FAILED|error|not built|ended after" "$log" || true; } | head -20 || true; fi
}
# On the GPU machine a GPU test that would skip fails instead: nothing passes by not running
# (tests that need a second device still skip on one).
export LAZULI_REQUIRE_CUDA=1
for test in "${gpu_tests[@]}"; do run_test "$test"; done
# 50 random graphs on the GPU (each compiled by NVRTC) keep the whole check inside 8 minutes.
LAZULI_FUZZ_CUDA_GRAPHS=${LAZULI_FUZZ_CUDA_GRAPHS:-50} run_test passes_fuzz_tests \
  --gtest_filter='*CudaDevice'

bench_log="$build/lazuli-bench-cuda.log"
bench_suites=$("$build/benchmarks/lazuli_bench/lazuli-bench" --list 2>&1 || true)
if grep -q '^cuda' <<<"$bench_suites"; then
  timeout "$time_limit" "$build/benchmarks/lazuli_bench/lazuli-bench" --suite cuda \
    ${LAZULI_GPU_CHECK_SIZES:+--sizes "$LAZULI_GPU_CHECK_SIZES"} >"$bench_log" 2>&1 || failed=1
else
  echo "lazuli-bench has no cuda suite yet" >"$bench_log"
fi

echo
echo "== gpu-check: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"
echo "   build $((built - start))s; total $(($(date +%s) - start))s; cmake ${arguments[*]}"
printf '| %-32s | %6s | %7s | %6s | %6s | %s\n' "GPU test executable" passed skipped failed time status
for row in "${rows[@]}"; do echo "$row"; done
echo "-- lazuli-bench --suite cuda:"
tail -n 40 "$bench_log"
exit "$failed"
