#include "caller_location.h"

#include <Python.h>
#include <frameobject.h>

#include <bit>
#include <map>
#include <memory>
#include <utility>

namespace lz::python {
namespace {

// std::source_location holds one pointer to a record of the file, the function, the line and
// the column, which GCC and Clang fill in for __builtin_source_location() and which both require
// to have exactly these members in this order (that builtin's contract). A Python line gets a
// record of its own, made once and kept for the process, and a std::source_location pointing
// at it: the same value every lazuli op already carries, so nothing below the binding changes.
struct LocationRecord {
  const char* file_name;
  const char* function_name;
  unsigned line;
  unsigned column;
};
static_assert(sizeof(std::source_location) == sizeof(const LocationRecord*));

std::source_location pointing_at(const LocationRecord* record) {
  return std::bit_cast<std::source_location>(record);
}

/// Python's own strings for a code object's file and function, copied once. The code object is
/// held (a strong reference), so its address is never reused by another while it is a key.
struct CodeNames {
  std::string file;
  std::string function;
};

struct Interned {
  std::string package_directory;
  std::map<PyCodeObject*, CodeNames> names;
  std::map<std::pair<PyCodeObject*, int>, std::unique_ptr<LocationRecord>> records;
  // The last caller's instruction and its location: a loop calls lazuli from the same
  // instruction again and again, and finding a line from an instruction walks the code's line
  // table.
  PyCodeObject* last_code = nullptr;
  int last_instruction = -1;
  std::source_location last_location;
};

/// Only touched with the GIL held.
Interned& interned() {
  static auto* state = new Interned;  // never destroyed: locations outlive every tensor
  return *state;
}

const CodeNames& names_of(PyCodeObject* code) {
  Interned& state = interned();
  auto found = state.names.find(code);
  if (found != state.names.end()) return found->second;
  Py_INCREF(code);
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  const char* function = PyUnicode_AsUTF8(code->co_qualname);
  if (file == nullptr || function == nullptr) PyErr_Clear();
  return state.names
      .emplace(code, CodeNames{file != nullptr ? file : "<unknown>",
                               function != nullptr ? function : "<unknown>"})
      .first->second;
}

bool in_package(const CodeNames& names) {
  const std::string& directory = interned().package_directory;
  return !directory.empty() && names.file.compare(0, directory.size(), directory) == 0;
}

}  // namespace

void set_package_directory(const std::string& directory) {
  interned().package_directory = directory;
}

std::source_location caller_location() {
  Interned& state = interned();
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  if (frame != nullptr) {
    // The code object of the last caller is held (names_of), so an equal pointer is that code.
    PyCodeObject* code = PyFrame_GetCode(frame);  // a new reference
    Py_DECREF(code);
    if (code == state.last_code && PyFrame_GetLasti(frame) == state.last_instruction) {
      return state.last_location;
    }
  }
  Py_XINCREF(frame);
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // a new reference
    const CodeNames& names = names_of(code);
    if (!in_package(names)) {
      const int line = PyFrame_GetLineNumber(frame);
      auto& record = state.records[{code, line}];
      if (record == nullptr) {
        record = std::make_unique<LocationRecord>(LocationRecord{
            names.file.c_str(), names.function.c_str(), static_cast<unsigned>(line), 0});
      }
      const std::source_location location = pointing_at(record.get());
      if (frame == PyEval_GetFrame()) {  // the innermost frame: remembered for the next call
        state.last_code = code;
        state.last_instruction = PyFrame_GetLasti(frame);
        state.last_location = location;
      }
      Py_DECREF(code);
      Py_DECREF(frame);
      return location;
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);  // a new reference
    Py_DECREF(frame);
    frame = back;
  }
  return std::source_location();
}

}  // namespace lz::python
