// How much lazuli logs: LZ_LOG, or set_log_level (lazuli/settings.h).
#pragma once

namespace lz {

/// Off, or Info: one line per evaluation on stderr (why, where, nodes, kernels, time), or Debug:
/// Info and the time of each pass.
enum class LogLevel { Off, Info, Debug };

}  // namespace lz
