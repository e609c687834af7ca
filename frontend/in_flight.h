// The bound on launched work not finished yet (LZ_MAX_IN_FLIGHT, promised bytes, recorded nodes):
// past it, the next launch waits for the oldest.
#pragma once

#include <source_location>

namespace lz::frontend {

struct Launch;

/// Counts `launch` in flight until its event `done` is set.
void add_in_flight(const Launch& launch);

/// Back-pressure: blocks until fewer than max_in_flight() launches are unfinished and their
/// promised bytes are at most half the memory limit, saying in the log why it waited.
void wait_for_room(std::source_location loc);

}  // namespace lz::frontend
