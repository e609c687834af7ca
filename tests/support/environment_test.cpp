// Numbers and switches read from environment variables (support/environment.h): whole numbers in
// range, and the words of a switch, are taken; anything else is ignored with a message naming the
// variable and what would be valid.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>

#include <stdlib.h>

#include "support/environment.h"

namespace {

using lz::support::integer_from_environment;

constexpr const char* kName = "LZ_ENVIRONMENT_TEST_NUMBER";

/// What integer_from_environment(kName, minimum, maximum) returns with kName set to `text`, and
/// what it wrote to stderr.
std::pair<std::optional<int64_t>, std::string> read_as(const char* text, int64_t minimum,
                                                       int64_t maximum) {
  setenv(kName, text, 1);
  testing::internal::CaptureStderr();
  const std::optional<int64_t> value = integer_from_environment(kName, minimum, maximum);
  std::string message = testing::internal::GetCapturedStderr();
  unsetenv(kName);
  return {value, std::move(message)};
}

TEST(EnvironmentTest, UnsetIsNothingAndSilent) {
  unsetenv(kName);
  testing::internal::CaptureStderr();
  EXPECT_EQ(integer_from_environment(kName, 0), std::nullopt);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(EnvironmentTest, WholeNumbersInRangeAreTakenSilently) {
  for (const auto& [text, expected] : {std::pair{"0", 0}, {"7", 7}, {"4096", 4096}}) {
    const auto [value, message] = read_as(text, 0, 4096);
    EXPECT_EQ(value, expected) << text;
    EXPECT_EQ(message, "") << text;
  }
  EXPECT_EQ(read_as("9000000000000", 0, std::numeric_limits<int64_t>::max()).first,
            int64_t{9000000000000});
}

TEST(EnvironmentTest, AnythingElseIsIgnoredSayingWhatIsValid) {
  for (const char* text : {"", "-1", "4097", "12x", "x12", "1.5", " 3", "99999999999999999999"}) {
    const auto [value, message] = read_as(text, 0, 4096);
    EXPECT_EQ(value, std::nullopt) << "'" << text << "'";
    EXPECT_EQ(message, std::string("[lazuli] ignoring ") + kName + "=" + text +
                           "; expected a whole number >= 0 and <= 4096\n");
  }
  EXPECT_EQ(read_as("0", 1, std::numeric_limits<int64_t>::max()).second,
            std::string("[lazuli] ignoring ") + kName + "=0; expected a whole number >= 1\n");
}

TEST(EnvironmentTest, ABadValueIsReportedOnceHoweverOftenItIsRead) {
  EXPECT_NE(read_as("twice", 0, 10).second, "");
  EXPECT_EQ(read_as("twice", 0, 10), std::pair(std::optional<int64_t>(), std::string()));
  EXPECT_NE(read_as("thrice", 0, 10).second, "") << "another bad value is reported again";
}

// Its own variable: a bad value is reported once per variable and value, and the number tests
// above already report some of the same values.
constexpr const char* kSwitchName = "LZ_ENVIRONMENT_TEST_SWITCH";

/// What boolean_from_environment(kSwitchName) returns with it set to `text`, and what it wrote.
std::pair<std::optional<bool>, std::string> switch_as(const char* text) {
  setenv(kSwitchName, text, 1);
  testing::internal::CaptureStderr();
  const std::optional<bool> value = lz::support::boolean_from_environment(kSwitchName);
  std::string message = testing::internal::GetCapturedStderr();
  unsetenv(kSwitchName);
  return {value, std::move(message)};
}

TEST(EnvironmentTest, SwitchesTakeTheUsualWordsInAnyCase) {
  for (const char* text : {"1", "on", "true", "yes", "ON", "True", "YES"}) {
    EXPECT_EQ(switch_as(text), std::pair(std::optional<bool>(true), std::string())) << text;
  }
  for (const char* text : {"0", "off", "false", "no", "OFF", "False", "No"}) {
    EXPECT_EQ(switch_as(text), std::pair(std::optional<bool>(false), std::string())) << text;
  }
  unsetenv(kSwitchName);
  EXPECT_EQ(lz::support::boolean_from_environment(kSwitchName), std::nullopt);
}

TEST(EnvironmentTest, AnySwitchElseIsIgnoredSayingWhatIsValid) {
  for (const char* text : {"", "2", "enable", "of", " on", "yes!"}) {
    const auto [value, message] = switch_as(text);
    EXPECT_EQ(value, std::nullopt) << "'" << text << "'";
    EXPECT_EQ(message, std::string("[lazuli] ignoring ") + kSwitchName + "=" + text +
                           "; expected 1, on, true or yes, or 0, off, false or no\n");
  }
}

}  // namespace
