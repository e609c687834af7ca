// Every rank joins the process group once, runs the tests, and leaves it.
#include <gtest/gtest.h>

#include "lazuli/dist.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  lz::dist::init();
  const int result = RUN_ALL_TESTS();
  lz::dist::finalize();
  return result;
}
