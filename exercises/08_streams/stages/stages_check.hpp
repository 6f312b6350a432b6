/// @file stages_check.hpp
/// @brief Exercise 08, stretch: the check that makes a pipeline a stage
///        pipeline, on a recorded graph (../graph_check.hpp's types). Host
///        code only: tested without a GPU (test_stages_check.cpp).
#pragma once

#include "../graph_check.hpp"

#include <string>

namespace ex08::check {

/// What a stage pipeline never does: an input copy that waits for a kernel
/// or an output copy, or a kernel that waits for an output copy (of any
/// chunk). "" when the graph has none.
inline std::string stages_apart(const Graph& g, const Job& job) {
  const detail::Reach reach(g);
  // 0: input copy, 1: kernel, 2: output copy, -1: anything else
  auto stage = [&](std::size_t i) {
    const Node& v = g.nodes[i];
    if (v.kind == Kind::kernel) return 1;
    if (v.kind != Kind::copy) return -1;
    if (v.reads.at(0).overlaps(job.input)) return 0;
    if (v.writes.at(0).overlaps(job.output)) return 2;
    return -1;
  };
  const char* names[] = {"an input copy", "a kernel", "an output copy"};
  for (std::size_t a = 0; a < g.nodes.size(); ++a)
    for (std::size_t b = 0; b < g.nodes.size(); ++b) {
      const int sa = stage(a), sb = stage(b);
      if (sa < 0 || sb < 0 || sb >= sa || !reach.path(a, b)) continue;
      return std::string(names[sb]) + " waits for " + names[sa] + " (of an earlier chunk): a stage must never " +
             "wait for a later stage. Give every input copy one stream, every kernel a second and every output " +
             "copy a third, and order them only with an event per chunk (kernel c after input copy c, output " +
             "copy c after kernel c). Two stages in one stream make the earlier stage wait behind the later one.";
    }
  return "";
}

} // namespace ex08::check
