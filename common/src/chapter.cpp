#include "steps/chapter.hpp"

#include "steps/report.hpp"

#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>

namespace steps {

namespace {

const char* role_name(Role r) {
  switch (r) {
    case Role::version: return "version";
    case Role::baseline: return "baseline";
    case Role::yours: return "yours";
    case Role::mistake: return "mistake";
  }
  return "?";
}

// Throughput of a row; none for a row whose result is wrong (a fast wrong
// answer is not a speed).
double metric_value(const ChapterInfo& info, const RowResult& r) {
  if (!r.timed || (r.comparison && !r.comparison->ok)) return NAN;
  return info.metric == Metric::bandwidth ? gbps(r.work.bytes, r.ms.median) : tflops(r.work.flops, r.ms.median);
}

// What the "verified" column says for a row.
std::string verdict(const RowResult& r) {
  if (!r.error.empty()) return r.role == Role::mistake ? "caught (CUDA error)" : "CUDA error";
  if (r.verify_skipped) return "not run";
  if (r.role == Role::mistake) return r.verified ? "NOT caught" : "caught";
  if (r.role == Role::yours && !r.verified) return "not yet";
  return r.verified ? "yes" : "NO";
}

// Rows whose failure makes the program fail: the course's own code, and
// your code when you asked for it by name.
bool counts(const Options& opts, const RowResult& r) {
  if (r.role == Role::version || r.role == Role::baseline) return true;
  if (r.role == Role::yours) {
    for (const auto& v : opts.variants)
      if (v == r.name) return true;
  }
  return false;
}

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

} // namespace

Cli make_cli(const ChapterInfo& info) {
  Cli cli(info.binary, "Chapter " + info.number + ": " + info.title + ". " + info.summary, info.default_size,
          info.size_help, info.default_iters, info.default_warmup);
  for (const auto& o : info.int_options) cli.add(o);
  for (const auto& f : info.flag_options) cli.add(f);
  cli.add(FlagOption{"--mistakes", "also run the deliberately broken versions and show the checks catching them"});
  return cli;
}

int handle_cli(const ChapterInfo& info, const Cli& cli, int argc, const char* const* argv,
               const std::vector<std::pair<std::string, std::string>>& names, const std::vector<Role>& roles,
               Options& out) {
  try {
    out = cli.parse(argc, argv);
    for (const auto& v : out.variants) {
      bool found = false;
      for (const auto& n : names) found = found || n.first == v;
      if (!found) throw UsageError("--variant: no version named '" + v + "' (see --list)");
    }
  } catch (const UsageError& e) {
    std::cerr << info.binary << ": error: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (out.help || out.list) {
    if (out.help) std::cout << cli.help() << "\nVersions (--list):\n";
    std::size_t width = 0;
    for (const auto& n : names) width = std::max(width, n.first.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
      std::string name = names[i].first;
      name.resize(width, ' ');
      std::cout << "  " << name << " " << names[i].second;
      if (roles[i] == Role::baseline) std::cout << " [baseline]";
      if (roles[i] == Role::yours) std::cout << " [your exercise]";
      if (roles[i] == Role::mistake) std::cout << " [broken on purpose; --mistakes]";
      std::cout << '\n';
    }
    return 0;
  }
  return -1;
}

int open_device(const ChapterInfo& info, const Options& opts, DeviceInfo& out) {
  std::string reason;
  if (!gpu_available(&reason)) {
    std::cerr << info.binary << ": skipped: " << reason << "\n";
    return 77;
  }
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (opts.device >= count) {
    std::cerr << info.binary << ": error: --device " << opts.device << ": this machine has " << count
              << " GPU(s), numbered from 0 (see --help)\n";
    return 2;
  }
  CUDA_CHECK(cudaSetDevice(opts.device));
  out = query_device(opts.device);
  if (out.cc_major * 10 + out.cc_minor < info.min_cc_major * 10 + info.min_cc_minor) {
    std::cerr << info.binary << ": skipped: this chapter needs compute capability " << info.min_cc_major << "."
              << info.min_cc_minor << " or newer (" << info.needs << "); GPU " << out.index << " (" << out.name
              << ") is " << out.cc() << "\n";
    return 77;
  }
  return -1;
}

bool selected(const Options& opts, const std::string& name, Role role) {
  if (!opts.variants.empty()) {
    for (const auto& v : opts.variants)
      if (v == name) return true;
    return false;
  }
  return role != Role::mistake || opts.has("--mistakes");
}

bool run_row(RowResult& row, const Options& opts, cudaStream_t stream, const std::function<void()>& reset,
             const std::function<void(cudaStream_t)>& launch, const std::function<Comparison()>& check) {
  try {
    if (opts.verify) {
      reset();
      launch(stream);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      row.comparison = check();
      row.verified = row.comparison->ok;
    } else {
      row.verify_skipped = true;
    }
    TimingOptions t;
    t.warmup = opts.warmup;
    t.iters = opts.iters;
    t.flush_l2 = opts.flush_l2;
    row.ms = time_gpu(launch, t, stream);
    row.timed = true;
  } catch (const Error& e) {
    row.error = e.what();
    // A fault inside a kernel (illegal address, ...) is "sticky": the context
    // is unusable from then on and every later call fails. A bad launch
    // configuration is not, and the other rows can still run.
    const cudaError_t after = cudaDeviceSynchronize();
    (void)cudaGetLastError();
    return after == cudaSuccess;
  }
  return true;
}

int report_chapter(const ChapterInfo& info, const Options& opts, const DeviceInfo& dev, const std::string& problem,
                   const std::vector<RowResult>& rows, bool aborted) {
  const bool bw = info.metric == Metric::bandwidth;
  const RowResult* baseline = nullptr;
  const RowResult* first = nullptr;
  const RowResult* best = nullptr;
  for (const auto& r : rows) {
    if (r.role == Role::baseline && !baseline && r.timed) baseline = &r;
    if (r.role == Role::version && r.timed && (r.verified || r.verify_skipped)) {
      if (!first) first = &r;
      if (!best || metric_value(info, r) > metric_value(info, *best)) best = &r;
    }
  }
  const double base_value = baseline ? metric_value(info, *baseline) : NAN;
  const double first_value = first ? metric_value(info, *first) : NAN;

  std::cout << "Chapter " << info.number << ": " << info.title << "\n"
            << "GPU " << dev.index << ": " << dev.name << " (sm_" << dev.cc_major << dev.cc_minor << ", "
            << dev.sm_count << " SMs, " << format_bytes(static_cast<double>(dev.l2_bytes)) << " L2, "
            << format_bytes(static_cast<double>(dev.global_mem_bytes)) << ", theoretical "
            << fixed(dev.peak_bandwidth_gbs, 0) << " GB/s)\n"
            << "Problem: " << problem << "\n"
            << "Timing: median of " << opts.iters << " runs after " << opts.warmup << " warm-up runs"
            << (opts.flush_l2 ? ", L2 flushed before each" : "") << "\n\n";

  Table t;
  t.add_column("version", Table::Align::left);
  t.add_column("median ms");
  t.add_column("min-max ms");
  t.add_column(bw ? "GB/s" : "TFLOP/s");
  bool show_hw = false;
  for (const auto& r : rows) show_hw = show_hw || r.work.hw_bytes > 0;
  if (show_hw) t.add_column("moved GB/s");
  t.add_column("% " + (baseline ? baseline->name : std::string("baseline")));
  if (bw) t.add_column("% peak");
  t.add_column("speedup");
  t.add_column("verified", Table::Align::left);
  for (const auto& r : rows) {
    const double v = metric_value(info, r);
    std::vector<std::string> cells{r.name,
                                   r.timed ? fixed(r.ms.median, 4) : "-",
                                   r.timed ? fixed(r.ms.min, 3) + "-" + fixed(r.ms.max, 3) : "-",
                                   fixed(v, bw ? 0 : 1)};
    if (show_hw) cells.push_back(r.work.hw_bytes > 0 && std::isfinite(v) ? fixed(gbps(r.work.hw_bytes, r.ms.median), 0) : "-");
    cells.push_back(fixed(100.0 * v / base_value, 1));
    if (bw) cells.push_back(fixed(100.0 * v / dev.peak_bandwidth_gbs, 1));
    const double speedup = v / first_value;
    cells.push_back((r.role == Role::version || r.role == Role::yours) && std::isfinite(speedup)
                        ? fixed(speedup, 2) + "x"
                        : "-");
    cells.push_back(verdict(r));
    t.add_row(cells);
  }
  if (bw) {
    std::vector<std::string> peak{"theoretical peak", "-", "-", fixed(dev.peak_bandwidth_gbs, 0)};
    if (show_hw) peak.push_back("-");
    for (const char* c : {"", "100.0", "-", "-"}) peak.push_back(c);
    peak[peak.size() - 4] = fixed(100.0 * dev.peak_bandwidth_gbs / base_value, 1);
    t.add_row(peak);
  }
  t.print(std::cout);
  std::cout << "\n" << info.work_note << "\n";
  if (bw)
    std::cout << "% peak: of the theoretical bandwidth, 2 x " << dev.mem_clock_khz / 1000 << " MHz x "
              << dev.mem_bus_bits << "-bit bus / 8 = " << fixed(dev.peak_bandwidth_gbs, 0) << " GB/s.\n";
  if (show_hw) std::cout << "moved GB/s: bytes the memory system really transfers (whole 32-byte sectors) per second.\n";
  std::cout << "speedup: throughput relative to the first version.\n";

  const double best_ratio = best && baseline ? metric_value(info, *best) / base_value : NAN;
  const bool goal_met = info.goal > 0 && std::isfinite(best_ratio) && best_ratio >= info.goal;
  if (info.goal > 0) {
    if (best && baseline)
      std::cout << "Goal: best version " << info.goal_text << ": " << best->name << " reaches "
                << fixed(best_ratio, 3) << "x " << baseline->name << " -> " << (goal_met ? "met" : "NOT met")
                << "\n";
    else
      std::cout << "Goal: best version " << info.goal_text << ": not measured in this run\n";
  }

  // Failures and teaching notes.
  int code = 0;
  for (const auto& r : rows) {
    const std::string what = !r.error.empty() ? r.error
                             : r.comparison ? r.comparison->describe()
                                            : std::string();
    const bool failed = !r.error.empty() || (r.comparison && !r.comparison->ok);
    if (!failed) continue;
    if (r.role == Role::mistake) {
      std::cout << "mistake '" << r.name << "' caught: " << what << "\n";
    } else if (r.role == Role::yours && !counts(opts, r)) {
      std::cout << "yours: not verified yet: " << what << " (grade it: ./tutorial grade " << info.number << ")\n";
    } else {
      std::cerr << info.binary << ": version '" << r.name << "' FAILED "
                << (r.error.empty() ? "verification: " : "with a CUDA error: ") << what << "\n";
      code = 1;
    }
  }
  if (aborted) {
    std::cerr << info.binary << ": stopped early: the GPU context is unusable after the error above\n";
    code = 1;
  }

  if (!opts.json.empty()) {
    Json j = Json::object();
    j.set("chapter", info.number).set("binary", info.binary).set("title", info.title).set("date", utc_now());
    Json gpu = Json::object();
    gpu.set("name", dev.name).set("cc", dev.cc()).set("sms", dev.sm_count)
        .set("l2_bytes", static_cast<std::uint64_t>(dev.l2_bytes))
        .set("memory_bytes", static_cast<std::uint64_t>(dev.global_mem_bytes))
        .set("mem_clock_khz", dev.mem_clock_khz).set("bus_bits", dev.mem_bus_bits)
        .set("peak_bandwidth_gbs", dev.peak_bandwidth_gbs);
    j.set("gpu", gpu).set("problem", problem).set("size", opts.size).set("iters", opts.iters)
        .set("warmup", opts.warmup).set("flush_l2", opts.flush_l2).set("metric", bw ? "GB/s" : "TFLOP/s");
    Json arr = Json::array();
    for (const auto& r : rows) {
      Json row = Json::object();
      row.set("name", r.name).set("what", r.what).set("role", role_name(r.role))
          .set("bytes", r.work.bytes).set("flops", r.work.flops).set("hw_bytes", r.work.hw_bytes);
      if (r.timed)
        row.set("median_ms", r.ms.median).set("min_ms", r.ms.min).set("max_ms", r.ms.max)
            .set("value", metric_value(info, r)).set("ratio_to_baseline", metric_value(info, r) / base_value);
      row.set("verified", verdict(r));
      if (r.comparison)
        row.set("rel_l2_error", r.comparison->rel_l2_error).set("max_abs_error", r.comparison->max_abs_error);
      if (!r.error.empty()) row.set("error", r.error);
      arr.push(row);
    }
    j.set("rows", arr);
    j.set("baseline", baseline ? Json(baseline->name) : Json());
    j.set("best", best ? Json(best->name) : Json());
    j.set("best_ratio", best_ratio).set("goal", info.goal).set("goal_text", info.goal_text)
        .set("goal_met", goal_met).set("exit_code", code);
    std::ofstream f(opts.json);
    f << j.dump();
    if (!f) {
      std::cerr << info.binary << ": error: cannot write " << opts.json << "\n";
      return 1;
    }
  }
  return code;
}

int report_exception(const ChapterInfo& info, const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e))
    std::cerr << info.binary << ": error: not enough host memory for this size (use a smaller --size)\n";
  else
    std::cerr << info.binary << ": error: " << e.what() << "\n";
  return 1;
}

} // namespace steps
