// What the runner's tests share (test_chapter.cpp, test_gpu_chapter.cpp,
// test_summary.cpp): the test chapter "99", and a row with a name, a role and
// a description made from the name.
#pragma once

#include "steps/summary.hpp"

#include <string>

namespace steps_test {

// Chapter 99, "Test" (binary ch99_test), whose baseline is the row `baseline`.
inline steps::ChapterInfo chapter_99(const std::string& baseline) {
  steps::ChapterInfo i;
  i.number = "99";
  i.binary = "ch99_test";
  i.title = "Test";
  i.baseline = baseline;
  return i;
}

// A row (a registry's steps::Row<P> or a result's steps::RowResult) named
// `name`, with `role`, described as "<name> <does>".
template <class R>
R named_row(const std::string& name, steps::Role role, const std::string& does) {
  R r;
  r.name = name;
  r.what = name + " " + does;
  r.role = role;
  return r;
}

} // namespace steps_test
