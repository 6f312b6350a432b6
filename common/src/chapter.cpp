#include "steps/chapter.hpp"

#include "steps/report.hpp"
#include "steps/watchdog.hpp"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <new>
#include <set>

namespace steps {

namespace {

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

Cli make_cli(const ChapterInfo& info) {
  Cli cli(info.binary, "Chapter " + info.number + ": " + info.title + ". " + info.summary, info.default_size,
          info.size_help, info.default_iters, info.default_warmup);
  for (const auto& o : info.int_options) cli.add(o);
  for (const auto& f : info.flag_options) cli.add(f);
  cli.add(FlagOption{"--mistakes", "also run the deliberately broken versions and show the checks catching them",
                     true});
  return cli;
}

// A --json path must be writable before any GPU work is spent on the run.
void check_json_path(const std::string& path) {
  if (path.empty()) return;
  std::ifstream existing(path);
  const bool existed = existing.good();
  existing.close();
  std::ofstream f(path, std::ios::app);
  if (!f) throw UsageError("--json: cannot write to '" + path + "'");
  f.close();
  if (!existed) std::remove(path.c_str());
}

// Parses and validates the command line; prints --help / --list. Returns an
// exit code to stop with, or -1 to go on.
int handle_cli(const ChapterInfo& info, int argc, const char* const* argv, const std::vector<RowName>& names,
               Options& out) {
  const Cli cli = make_cli(info);
  try {
    out = cli.parse(argc, argv);
    for (const auto& v : out.variants) {
      bool found = false;
      for (const auto& n : names) found = found || n.name == v;
      if (!found) throw UsageError("--variant: no version named '" + v + "' (see --list)");
    }
    for (const auto& v : out.except) {
      bool found = false;
      for (const auto& n : names) found = found || n.name == v;
      if (!found) throw UsageError("--except: no version named '" + v + "' (see --list)");
    }
    if (!out.variants.empty() && !out.except.empty()) throw UsageError("--variant and --except: choose one");
    if (!out.help && !out.list) {
      if (info.validate) info.validate(out);
      check_json_path(out.json);
    }
  } catch (const UsageError& e) {
    // A message that already points somewhere ("(see --list)") gets no second pointer.
    const std::string what = e.what();
    std::cerr << info.binary << ": error: " << what << (what.find("(see --") == std::string::npos ? " (see --help)" : "")
              << "\n";
    return 2;
  }
  if (out.help || out.list) {
    if (out.help) std::cout << cli.help() << "\nVersions (--list):\n";
    std::size_t width = 0;
    for (const auto& n : names) width = std::max(width, n.name.size());
    for (const auto& n : names) {
      std::string name = n.name;
      name.resize(width, ' ');
      std::cout << "  " << name << " " << n.what;
      if (n.name == info.baseline) std::cout << " [baseline]";
      if (n.role == Role::reference) std::cout << " [reference: shown, not ranked]";
      if (n.role == Role::yours) std::cout << " [your exercise]";
      if (n.role == Role::mistake) std::cout << " [broken on purpose; --mistakes]";
      if (!n.on_request.empty()) std::cout << " [on request: " << n.on_request << "]";
      if (!n.needs.empty()) std::cout << " [needs " << n.needs << "]";
      std::cout << '\n';
    }
    return 0;
  }
  return -1;
}

// Finds the GPUs the chapter needs; returns an exit code (77 skipped, 2 bad
// --device) or -1 with `out` filled.
int open_devices(const ChapterInfo& info, const Options& opts, std::vector<DeviceInfo>& out) {
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
  const int usable = count - opts.device;
  if (usable < info.min_gpus) {
    std::cerr << info.binary << ": skipped: this chapter needs " << info.min_gpus << " GPUs; this machine has "
              << usable << " from --device " << opts.device << " on\n";
    return 77;
  }
  const int n = std::min(usable, std::max(1, info.max_gpus));
  for (int i = 0; i < n; ++i) {
    DeviceInfo d = query_device(opts.device + i);
    if (d.cc_major * 10 + d.cc_minor < info.min_cc_major * 10 + info.min_cc_minor) {
      std::cerr << info.binary << ": skipped: this chapter needs compute capability " << info.min_cc_major << "."
                << info.min_cc_minor << " or newer (" << info.needs << "); GPU " << d.index << " (" << d.name
                << ") is " << d.cc() << "\n";
      return 77;
    }
    if (info.max_cc_major > 0 && d.cc_major * 10 + d.cc_minor > info.max_cc_major * 10 + info.max_cc_minor) {
      std::cerr << info.binary << ": skipped: this chapter is built for compute capability " << info.max_cc_major
                << "." << info.max_cc_minor << " only (" << info.needs << "); GPU " << d.index << " (" << d.name
                << ") is " << d.cc() << "\n";
      return 77;
    }
    if (const std::string why = build_code_missing(d); !why.empty()) {
      std::cerr << info.binary << ": skipped: GPU " << d.index << " (" << d.name << "): " << why << "\n";
      return 77;
    }
    if (info.unsupported) {
      if (const std::string why = info.unsupported(d); !why.empty()) {
        std::cerr << info.binary << ": skipped: GPU " << d.index << " (" << d.name << "): " << why << "\n";
        return 77;
      }
    }
    out.push_back(std::move(d));
  }
  CUDA_CHECK(cudaSetDevice(opts.device));
  return -1;
}

std::string hang_message(const ChapterInfo& info, const std::string& row, double seconds) {
  return info.binary + ": error: version '" + row + "' did not finish within " + fixed(seconds, 0) +
         " s: a kernel that waits forever (a barrier not every thread reaches, a spin on a flag nobody sets, "
         "a wrong mbarrier parity). Stopped by the watchdog (exit code 3).";
}

} // namespace

std::string check_names(const ChapterInfo& info, const std::vector<RowName>& names) {
  std::set<std::string> rows;
  for (const auto& n : names) {
    if (n.name.empty()) return "a row of the registry has no name";
    if (!rows.insert(n.name).second) return "two rows of the registry are named '" + n.name + "'";
  }
  auto missing = [&](const std::string& row, const std::string& who) {
    return rows.count(row) ? std::string() : who + " names row '" + row + "', which the registry does not have";
  };
  if (!info.baseline.empty())
    if (std::string e = missing(info.baseline, "the baseline"); !e.empty()) return e;
  for (const auto& g : info.goals) {
    for (const std::string* row : {&g.numerator, &g.denominator})
      if (*row != "best")
        if (std::string e = missing(*row, "goal '" + g.text + "'"); !e.empty()) return e;
    if (g.shape.empty() != !g.at_shape)
      return "goal '" + g.text + "' needs both a shape name and a test of the options (Goal::shape, Goal::at_shape)";
  }
  for (const auto& n : names) {
    if (n.on_request.empty()) continue;
    bool flag = false;
    for (const auto& f : info.flag_options) flag = flag || f.name == n.on_request;
    if (!flag) return "row '" + n.name + "' runs on request of '" + n.on_request + "', which is not a flag of the chapter";
  }
  return "";
}

namespace detail {

RowResult start_row(const std::string& name, const std::string& what, Role role, int problem) {
  RowResult out;
  out.name = name;
  out.what = what;
  out.role = role;
  out.problem = problem;
  return out;
}

bool requested(const Options& opts, const GroupOptions& options) {
  return options.on_request.empty() || !opts.variants.empty() || opts.has(options.on_request);
}

} // namespace detail

bool selected(const Options& opts, const std::string& name, Role role) {
  if (!opts.variants.empty()) {
    for (const auto& v : opts.variants)
      if (v == name) return true;
    return false;
  }
  for (const auto& v : opts.except)
    if (v == name) return false;
  return role != Role::mistake || opts.has("--mistakes");
}

bool run_row(RowResult& row, const Options& opts, const ChapterInfo& info, Run& run,
             const std::function<void()>& reset, const std::function<void(cudaStream_t)>& before_each,
             const std::function<void()>& launch, const std::function<Comparison()>& check) {
  const std::string hang = hang_message(info, row.name, info.timeout_s);
  cudaStream_t stream = run.stream();
  auto one_run = [&](cudaStream_t) {
    launch();
    if (run.forked()) {
      run.join();
      throw std::logic_error("version '" + row.name + "' forked streams without joining them back (Run::join)");
    }
  };
  try {
    if (opts.verify) {
      reset();
      if (before_each) before_each(stream);
      one_run(stream);
      synchronize_or_timeout(stream, info.timeout_s, hang);
      row.comparison = check();
      row.verified = row.comparison->ok;
    } else {
      row.verify_skipped = true;
    }
    TimingOptions t;
    t.warmup = opts.warmup;
    t.iters = opts.iters;
    t.flush_l2 = opts.flush_l2;
    t.before_each = before_each;
    t.timeout_s = info.timeout_s;
    t.timeout_message = hang;
    row.ms = time_gpu(one_run, t, stream);
    row.timed = true;
  } catch (const Error& e) {
    row.error = e.what();
    // A fault inside a kernel (illegal address, ...) is "sticky": the context
    // is unusable from then on and every later call fails. A bad launch
    // configuration is not, and the other rows can still run.
    const cudaError_t after = cudaDeviceSynchronize();
    (void)cudaGetLastError();
    return after == cudaSuccess;
  } catch (const std::logic_error& e) {
    row.error = e.what();
  }
  return true;
}

int run_chapter_groups(int argc, char** argv, ChapterInfo info, const std::vector<GroupPtr>& groups) {
  std::vector<RowName> names;
  for (const auto& g : groups)
    for (auto& n : g->names()) names.push_back(std::move(n));
  // The registry's names first: a baseline or goal that names no row is a
  // mistake in the chapter, caught at every start, before any GPU work.
  if (const std::string error = check_names(info, names); !error.empty()) {
    std::cerr << info.binary << ": error: " << error << "\n";
    return 2;
  }
  Options opts;
  if (const int code = handle_cli(info, argc, argv, names, opts); code >= 0) return code;

  try {
    std::vector<DeviceInfo> devices;
    if (const int code = open_devices(info, opts, devices); code >= 0) return code;
    Run run(devices);
    if (info.before) info.before(opts, run);
    std::vector<RowResult> rows;
    std::vector<std::string> problems;
    bool usable = true;
    for (const auto& g : groups) {
      usable = g->run(opts, info, run, rows, problems);
      if (!usable) break;
    }
    for (auto& dev : devices) { // the clocks the rows ran at, still warm
      const Clocks c = current_clocks(dev.index);
      dev.run_sm_clock_mhz = c.sm_mhz;
      dev.run_mem_clock_mhz = c.mem_mhz;
    }
    const Summary s = summarize(info, opts, devices, problems, std::move(rows), !usable, run.notes());
    print_table(s, std::cout, std::cerr);
    if (!opts.json.empty()) {
      std::ofstream f(opts.json);
      f << to_json(s, utc_now()).dump();
      if (!f) {
        std::cerr << info.binary << ": error: cannot write " << opts.json << "\n";
        return 1;
      }
    }
    return s.exit_code;
  } catch (const std::bad_alloc&) {
    std::cerr << info.binary << ": error: not enough host memory for this size (use a smaller --size)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << info.binary << ": error: " << e.what() << "\n";
    return 1;
  }
}

} // namespace steps
