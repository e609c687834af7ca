// A rank ended by an uncaught exception takes its group with it (lz::dist::abort): rank 0, which
// waits for it in a collective, ends at once instead of after LZ_DIST_TIMEOUT.
#include <lazuli/dist.h>
#include <lazuli/lazuli.h>

#include <stdexcept>

int main() {
  lz::dist::init();
  if (lz::dist::rank() == 1) throw std::runtime_error("rank 1 gives up");
  lz::dist::all_reduce(lz::ones({4})).wait_to_read();  // waits for rank 1, which never comes
  return 0;
}
