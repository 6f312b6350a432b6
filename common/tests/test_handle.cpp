// Host tests of the generic owning handle.
#include "steps/catch.hpp"
#include "steps/handle.hpp"

namespace {
int destroyed = 0;
int last_destroyed = 0;
int destroy_fake(int h) {
  ++destroyed;
  last_destroyed = h;
  return 0;
}
using Fake = steps::Handle<int, destroy_fake>;
} // namespace

TEST_CASE("handle: destroyed exactly once, moves transfer ownership", "[handle]") {
  destroyed = 0;
  {
    Fake a(7);
    CHECK(static_cast<bool>(a));
    Fake b(std::move(a));
    CHECK_FALSE(static_cast<bool>(a)); // NOLINT: moved-from is empty by contract
    CHECK(b.get() == 7);
    Fake c;
    c = std::move(b);
    CHECK(c.get() == 7);
    CHECK(destroyed == 0);
  }
  CHECK(destroyed == 1);
  CHECK(last_destroyed == 7);
}

TEST_CASE("handle: out() releases the old handle first; release() gives it up", "[handle]") {
  destroyed = 0;
  Fake a(3);
  *a.out() = 4; // as a create call writes through the pointer
  CHECK(destroyed == 1);
  CHECK(last_destroyed == 3);
  CHECK(a.get() == 4);
  CHECK(a.release() == 4);
  CHECK_FALSE(static_cast<bool>(a));
  a.reset();
  CHECK(destroyed == 1); // an empty handle destroys nothing
}
