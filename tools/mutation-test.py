#!/usr/bin/env python3
"""Mutation testing of the code where a wrong result would hide.

Applies one small change at a time (a mutant) to the sources of an area, rebuilds that area's
test programs in the release build, and runs them: a mutant the tests fail on is killed, one they
pass survives and shows a gap in the tests. The mutants are the usual ones: a comparison, a
logical or arithmetic operator, a boolean or a 0/1 constant turned into its neighbour, a
negation dropped, a statement deleted. Binary operators are found by their spacing, which
clang-format makes uniform (` < ` compares, `<` opens a template).

    tools/mutation-test.py [--areas lowering,reductions,...] [--per-area N] [--seed S]
                           [--only FILE:LINE,...] [--report FILE]

--only tests every mutant of the lines named (those that survived a run, say) and no other.

Needs a configured and built release tree (cmake --build --preset release). Kernels are compiled
afresh for every run (LZ_CACHE=0), so a kernel cached from the unmutated compiler is not read.
Each source is put back after its mutant, also on Ctrl-C.
"""

import argparse
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "release"

# Area: its sources, and the test programs (under build/release/tests) that cover them.
AREAS = {
    "lowering": (["codegen/cpu/element_ops.cpp", "codegen/cpu/lowering.cpp"],
                 ["codegen/codegen_cpu_jit_tests", "frontend/frontend_tests",
                  "frontend/frontend_autodiff_tests"]),
    "reductions": (["codegen/cpu/reduction_lowering.cpp", "codegen/cpu/reduction_state.cpp",
                    "plan/kernel_layout.cpp"],
                   ["codegen/codegen_cpu_jit_tests", "frontend/frontend_tests",
                    "frontend/frontend_kernel_count_tests"]),
    "epilogues": (["passes/matmul_epilogues.cpp", "runtime/cpu/matmul_kernel.cpp",
                   "runtime/cpu/blas_matmul.cpp"],
                  ["runtime/runtime_blas_matmul_tests", "codegen/codegen_cpu_jit_tests",
                   "passes/passes_fusion_tests",
                   "frontend/frontend_tests", "frontend/frontend_kernel_count_tests"]),
    "simplifier": (["passes/simplification.cpp"],
                   ["passes/passes_rewrite_tests", "frontend/frontend_tests"]),
    "plan_cache": (["passes/plan_cache.cpp", "passes/graph_signature.cpp"],
                   ["passes/passes_plan_cache_tests", "frontend/frontend_tests",
                    "frontend/frontend_async_tests"]),
    "in_place": (["memory/buffer.cpp", "runtime/kernel_executor.cpp",
                  "runtime/cpu/compiled_kernel.cpp", "plan/fusion_plan.cpp"],
                 ["frontend/frontend_kernel_count_tests", "passes/passes_fuzz_tests",
                  "frontend/frontend_tests"]),
}

OPERATORS = [
    (" < ", " <= "), (" <= ", " < "), (" > ", " >= "), (" >= ", " > "),
    (" == ", " != "), (" != ", " == "), (" && ", " || "), (" || ", " && "),
    (" + ", " - "), (" - ", " + "), (" * ", " / "), (" / ", " * "),
    (" += ", " -= "), (" -= ", " += "),
]
WORDS = [(r"\btrue\b", "false"), (r"\bfalse\b", "true"),
         (r"(?<![\w.'])0(?![\w.'])", "1"), (r"(?<![\w.'])1(?![\w.'])", "0"),
         (r"(?<![\w)\]])!(?!=)", "")]
# A call or an assignment standing alone: `f(x);`, `x.y = z;`, `total += n;`.
STATEMENT = re.compile(r"^\s*[A-Za-z_][\w.\->\[\]]*\s*(\(.*\)|(=|\+=|-=|\*=|/=|\|=|&=)\s*.+);\s*$")
SKIPPED = re.compile(r'^\s*(//|#|\*|/\*)|"|static_assert|\bassert\(')


def mutants_of(path):
    """(line number, original line, mutated line, description) for each mutant of `path`."""
    found = []
    lines = path.read_text().split("\n")
    for number, line in enumerate(lines, 1):
        code = line.split("//")[0]
        if SKIPPED.search(line) or not code.strip():
            continue
        for old, new in OPERATORS:
            start = 0
            while (at := code.find(old, start)) >= 0:
                found.append((number, line, line[:at] + new + line[at + len(old):],
                              f"'{old.strip()}' -> '{new.strip()}'"))
                start = at + len(old)
        for pattern, new in WORDS:
            for match in re.finditer(pattern, code):
                mutated = line[:match.start()] + new + line[match.end():]
                found.append((number, line, mutated, f"'{match.group()}' -> '{new}'"))
        if STATEMENT.match(code) and not code.strip().startswith("return"):
            found.append((number, line, "", "statement deleted"))
    return found


def run(command, timeout, environment=None):
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=timeout,
                              env=environment)
        return done.returncode, done.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, ""


def first_failure(output):
    failed = re.findall(r"\[  FAILED  \] (\S+)", output)
    return failed[0] if failed else "crash or exit without a named test"


def test_mutant(tests, environment, baseline_seconds):
    targets = [Path(test).name for test in tests]
    code, output = run(["cmake", "--build", str(BUILD), "--target", *targets], 1800)
    if code != 0:
        return "does not compile", ""
    for test in tests:
        limit = max(60, 5 * baseline_seconds[test])
        code, output = run([str(BUILD / "tests" / test), "--gtest_brief=1"], limit, environment)
        if code is None:
            return "killed", f"{Path(test).name} timed out"
        if code != 0:
            return "killed", f"{Path(test).name}: {first_failure(output)}"
    return "survived", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--areas", default=",".join(AREAS))
    parser.add_argument("--per-area", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="FILE:LINE,... (every mutant of those lines)")
    parser.add_argument("--report", default="")
    options = parser.parse_args()
    environment = dict(os.environ, LZ_CACHE="0")
    report = []
    totals = {}
    for area in options.areas.split(","):
        sources, tests = AREAS[area]
        baseline_seconds = {}
        for test in tests:
            start = time.monotonic()
            code, output = run([str(BUILD / "tests" / test), "--gtest_brief=1"], 600, environment)
            if code != 0:
                sys.exit(f"{test} fails before any mutant: {first_failure(output)}")
            baseline_seconds[test] = time.monotonic() - start
        candidates = [(source, *mutant) for source in sources
                      for mutant in mutants_of(ROOT / source)]
        if options.only:
            lines = set(options.only.split(","))
            candidates = [c for c in candidates if f"{c[0]}:{c[1]}" in lines]
            if not candidates:
                continue
        else:
            random.Random(f"{options.seed}/{area}").shuffle(candidates)
        tested = 0
        for source, number, original, mutated, description in candidates:
            if tested == options.per_area and not options.only:
                break
            path = ROOT / source
            text = path.read_text()
            lines = text.split("\n")
            lines[number - 1] = mutated
            try:
                path.write_text("\n".join(lines))
                outcome, detail = test_mutant(tests, environment, baseline_seconds)
            finally:
                path.write_text(text)
            if outcome == "does not compile":
                continue
            tested += 1
            totals.setdefault(area, {}).setdefault(outcome, 0)
            totals[area][outcome] += 1
            line = (f"{area}\t{outcome}\t{source}:{number}\t{description}\t"
                    f"{original.strip()}\t{detail}")
            print(line, flush=True)
            report.append(line)
        run(["cmake", "--build", str(BUILD), "--target", *[Path(t).name for t in tests]], 1800)
    summary = [f"{area}: " + ", ".join(f"{count} {outcome}" for outcome, count in counts.items())
               for area, counts in totals.items()]
    print("\n".join(summary))
    if options.report:
        Path(options.report).write_text("\n".join(report + summary) + "\n")


if __name__ == "__main__":
    main()
