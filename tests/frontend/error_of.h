// The message of the lz::Error a call throws, for tests of what an error says.
#pragma once

#include <string>

#include <lazuli/error.h>

/// The message of the lz::Error `call` throws, or "" when it throws none.
template <class Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const lz::Error& error) {
    return error.what();
  }
  return "";
}
