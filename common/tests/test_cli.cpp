#include "steps/catch.hpp"
#include "steps/cli.hpp"

#include <vector>

using steps::Cli;
using steps::Options;
using steps::UsageError;

namespace {
Options parse(const Cli& cli, std::vector<const char*> args) {
  args.insert(args.begin(), "prog");
  return cli.parse(static_cast<int>(args.size()), args.data());
}
Cli make() {
  Cli cli("prog", "A test program.", 1000, "elements", 20, 3);
  cli.add(steps::IntOption{"--m", "M", "rows", 64, 1, 1 << 20});
  cli.add(steps::FlagOption{"--mistakes", "run broken versions"});
  return cli;
}
} // namespace

TEST_CASE("defaults apply when no option is given", "[cli]") {
  const Options o = parse(make(), {});
  CHECK(o.size == 1000);
  CHECK(o.iters == 20);
  CHECK(o.warmup == 3);
  CHECK(o.device == 0);
  CHECK(o.verify);
  CHECK_FALSE(o.flush_l2);
  CHECK(o.variants.empty());
  CHECK(o.get("--m") == 64);
  CHECK_FALSE(o.has("--mistakes"));
  CHECK(o.off_default.empty());
}

TEST_CASE("off_default names what leaves the default problem, and only that", "[cli]") {
  Cli cli = make();
  cli.add(steps::IntOption{"--rows-shown", "N", "rows printed", 8, 1, 100, true}); // output only: keeps the goals
  cli.add(steps::FlagOption{"--cold", "another problem"});
  // Timing, verification, output and the options that keep goals: still the default problem.
  CHECK(parse(cli, {"--iters", "5", "--warmup", "0", "--no-verify", "--variant", "a", "--json", "r.json",
                    "--rows-shown", "50", "--seed", "3"})
            .off_default.empty());
  CHECK(parse(cli, {"--size", "1000", "--m", "64"}).off_default.empty()); // the defaults, given
  CHECK(parse(cli, {"--size", "1K"}).off_default == "--size 1024");
  CHECK(parse(cli, {"--m", "33", "--cold", "--size", "7"}).off_default == "--size 7 --m 33 --cold");
}

TEST_CASE("standard and chapter options parse", "[cli]") {
  const Options o = parse(make(), {"--size", "4K", "--iters=7", "--warmup", "0", "--device", "1", "--json", "r.json",
                                   "--no-verify", "--flush-l2", "--variant", "a,b", "--variant", "c", "--m", "33",
                                   "--mistakes", "--seed", "9"});
  CHECK(o.size == 4096);
  CHECK(o.iters == 7);
  CHECK(o.warmup == 0);
  CHECK(o.device == 1);
  CHECK(o.json == "r.json");
  CHECK_FALSE(o.verify);
  CHECK(o.flush_l2);
  CHECK(o.variants == std::vector<std::string>{"a", "b", "c"});
  CHECK(o.get("--m") == 33);
  CHECK(o.has("--mistakes"));
  CHECK(o.seed == 9);
}

TEST_CASE("parse_count understands binary suffixes and rejects junk", "[cli]") {
  CHECK(steps::parse_count("--size", "0") == 0);
  CHECK(steps::parse_count("--size", "123") == 123);
  CHECK(steps::parse_count("--size", "1k") == 1024);
  CHECK(steps::parse_count("--size", "3M") == 3 * (1 << 20));
  CHECK(steps::parse_count("--size", "2G") == (std::int64_t{2} << 30));
  CHECK(steps::parse_count("--size", "1T") == (std::int64_t{1} << 40));
  for (const char* bad : {"", "abc", "12abc", "1KB", "-5", "1.5", " 3", "0x10", "K", "99999999999999999999"})
    CHECK_THROWS_AS(steps::parse_count("--size", bad), UsageError);
  CHECK_THROWS_AS(steps::parse_count("--size", "9999999T"), UsageError);
}

TEST_CASE("bad values are usage errors that name the option", "[cli]") {
  const Cli cli = make();
  auto message = [&](std::vector<const char*> args) -> std::string {
    try {
      parse(cli, std::move(args));
    } catch (const UsageError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(message({"--size", "abc"}).find("--size") != std::string::npos);
  CHECK(message({"--size", "-5"}).find("negative") != std::string::npos);
  CHECK(message({"--size", "0"}).find("too small") != std::string::npos);
  CHECK(message({"--iters", "0"}).find("--iters") != std::string::npos);
  CHECK(message({"--iters"}).find("missing value") != std::string::npos);
  CHECK(message({"--frobnicate"}).find("unknown option '--frobnicate'") != std::string::npos);
  CHECK(message({"--m", "0"}).find("--m") != std::string::npos);
  CHECK(message({"--m", "2M"}).find("too large") != std::string::npos);
  CHECK(message({"--variant", ","}).find("--variant") != std::string::npos);
  CHECK(message({"--list=yes"}).find("takes no value") != std::string::npos);
  CHECK(message({"--json", ""}).find("--json") != std::string::npos);
}

TEST_CASE("help lists every option with its default", "[cli]") {
  const std::string h = make().help();
  for (const char* s : {"Usage: prog", "--size N", "(default 1000", "--m M", "(default 64)", "--mistakes",
                        "--iters N", "--warmup N", "--device N", "--json FILE", "--no-verify", "--list",
                        "--variant", "Exit codes"})
    CHECK(h.find(s) != std::string::npos);
}
