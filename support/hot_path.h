// LZ_HOT_PATH marks the functions every recorded op runs through. GCC and Clang place hot
// functions together (.text.hot), so the recording path shares cache lines and pages instead of
// spreading over the library. From Python, whose interpreter competes for the same instruction
// cache, it halved the simulated first-level instruction cache misses per `x = x + 1` (56 -> 28;
// callgrind over benchmarks/python/recording_loop.py). A function that is not on that path
// should not carry it: the section is only small while the path is.
#pragma once

#define LZ_HOT_PATH [[gnu::hot]]
