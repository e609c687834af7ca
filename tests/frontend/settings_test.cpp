// The settings' functions: each rejects, at its call, what its environment variable would report
// and ignore (tests/frontend/CMakeLists.txt runs those), and takes what a user would write.
#include <gtest/gtest.h>

#include <string>

#include <lazuli/lazuli.h>

#include "error_of.h"

namespace {

TEST(SettingsTest, BoundsBelowTheirMinimumAreErrorsSayingWhatIsValid) {
  EXPECT_EQ(error_of([] { lz::set_max_in_flight(-3); }),
            "[set_max_in_flight] needs a whole number >= 1, got -3");
  EXPECT_EQ(error_of([] { lz::set_max_in_flight(0); }),
            "[set_max_in_flight] needs a whole number >= 1, got 0");
  EXPECT_EQ(error_of([] { lz::set_max_pending_nodes(-5); }),
            "[set_max_pending_nodes] needs a whole number >= 0 (0: no bound), got -5");
  EXPECT_EQ(error_of([] { lz::set_memory_limit(-1); }),
            "[set_memory_limit] needs a whole number >= 0 (0: the default), got -1");
  EXPECT_EQ(error_of([] { lz::set_kernel_cache_size(0); }),
            "[set_kernel_cache_size] needs a whole number >= 1, got 0");
  // Their smallest valid values are taken, and the work still runs.
  lz::set_max_in_flight(1);
  lz::set_max_pending_nodes(0);
  lz::set_memory_limit(0);
  EXPECT_EQ((lz::arange(0, 4) * 2).sum().item<float>(), 12);  // 0 + 2 + 4 + 6
  lz::set_max_in_flight(32);
  lz::set_max_pending_nodes(10000);
}

TEST(SettingsTest, AnUnknownPassIsAnErrorNamingThePasses) {
  EXPECT_EQ(error_of([] { lz::set_disabled_passes("cse,bogus"); }),
            "[set_disabled_passes] 'bogus' in 'cse,bogus' is no pass; the passes are dce, cse, "
            "simplify, fuse, schedule");
  EXPECT_EQ((lz::arange(0, 3) + 1).sum().item<float>(), 6) << "a failed setter changes nothing";
}

TEST(SettingsTest, DisabledPassesMayHaveSpacesAroundTheirNames) {
  const lz::Tensor x = lz::arange(0, 4);
  x.wait_to_read();
  (lz::exp(x) * 2).wait_to_read();
  EXPECT_EQ(lz::last_evaluation().kernels, 1) << "exp and the product fuse";
  lz::set_disabled_passes(" fuse , cse");
  (lz::exp(x) * 3).wait_to_read();
  const int64_t unfused = lz::last_evaluation().kernels;
  lz::set_disabled_passes("");
  EXPECT_GT(unfused, 1) << "without fusion, exp and the product are kernels of their own";
}

}  // namespace
