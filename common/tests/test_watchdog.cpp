// Host tests of the watchdog (the process-ending action is tested by
// host.common.watchdog_ends_a_host_hang, which runs steps_watchdog_demo).
#include "steps/catch.hpp"
#include "steps/watchdog.hpp"

#include <atomic>
#include <chrono>
#include <thread>

TEST_CASE("watchdog: fires with its message when not disarmed in time", "[watchdog]") {
  std::atomic<int> fired{0};
  std::string said;
  {
    steps::Watchdog dog(0.05, "a kernel did not finish", [&](const std::string& m) {
      said = m;
      ++fired;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the "hang"
    CHECK(dog.expired());
  }
  CHECK(fired == 1);
  CHECK(said == "a kernel did not finish");
}

TEST_CASE("watchdog: silent when disarmed in time, and when disabled", "[watchdog]") {
  std::atomic<int> fired{0};
  const auto start = std::chrono::steady_clock::now();
  {
    steps::Watchdog dog(30, "never", [&](const std::string&) { ++fired; });
  } // disarmed at once: the destructor must not wait 30 s
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  {
    steps::Watchdog off(0, "never", [&](const std::string&) { ++fired; });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(off.expired());
  }
  CHECK(fired == 0);
}
