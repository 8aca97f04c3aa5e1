// rml/transport/mailbox.h: posts from another thread wake the owning loop
// through its eventfd; posts from the owning thread itself only mark the
// wake event active (no eventfd traffic), and nothing posted is lost or
// reordered either way.
#include <event2/event.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "rml/transport/mailbox.h"

using namespace grove;

namespace {

struct Base {
  event_base* base = event_base_new();
  ~Base() { event_base_free(base); }
};

}  // namespace

TEST_CASE("a post from the owning thread wakes its loop without the eventfd", "[mailbox]") {
  Base loop;
  std::vector<int> seen;
  std::unique_ptr<Mailbox<int>> box;
  auto created = Mailbox<int>::create(loop.base, [&](int& value) {
    seen.push_back(value);
    // Posting from the handler (the owning thread) runs after it, in the
    // same pass, without the eventfd.
    if (value == 1) box->post(2);
    if (value == 2) {
      box->post(3);
      box->post(4);  // queue not empty: no second wakeup
    }
    if (value == 4) event_base_loopbreak(loop.base);
  });
  REQUIRE(created);
  box = std::move(*created);
  // Before any drain the owner is unknown: the first post uses the eventfd.
  box->post(1);
  CHECK(box->cross_thread_wakes() == 1);
  event_base_dispatch(loop.base);
  CHECK(seen == std::vector<int>{1, 2, 3, 4});
  CHECK(box->cross_thread_wakes() == 1);
  CHECK(box->local_wakes() == 2);
}

TEST_CASE("posts from another thread and from the owner all arrive, in each poster's order",
          "[mailbox]") {
  Base loop;
  constexpr int kEach = 20000;
  std::vector<int> from_thread, from_owner;
  std::unique_ptr<Mailbox<int>> box;
  int owner_next = 0;
  auto created = Mailbox<int>::create(loop.base, [&](int& value) {
    if (value >= 0) {
      from_thread.push_back(value);
    } else {
      from_owner.push_back(-value - 1);
    }
    // The owner keeps posting from its handler, racing the other thread.
    if (owner_next < kEach) box->post(-(owner_next++) - 1);
    if (from_thread.size() == kEach && from_owner.size() == kEach) event_base_loopbreak(loop.base);
  });
  REQUIRE(created);
  box = std::move(*created);
  box->post(-(owner_next++) - 1);
  std::thread poster([&] {
    for (int i = 0; i < kEach; ++i)
      box->post(i);
  });
  event_base_dispatch(loop.base);
  poster.join();
  REQUIRE(from_thread.size() == kEach);
  REQUIRE(from_owner.size() == kEach);
  for (int i = 0; i < kEach; ++i) {
    REQUIRE(from_thread[i] == i);
    REQUIRE(from_owner[i] == i);
  }
  CHECK(box->local_wakes() > 0);
}

TEST_CASE("a post from another thread to an idle loop wakes it through the eventfd", "[mailbox]") {
  Base loop;
  std::vector<int> seen;
  std::unique_ptr<Mailbox<int>> box;
  std::thread other;
  auto created = Mailbox<int>::create(loop.base, [&](int& value) {
    seen.push_back(value);
    if (value == 1) {
      // The owner is known now; the loop goes idle, and only the other
      // thread's post can wake it.
      other = std::thread([&] { box->post(2); });
    }
    if (value == 2) event_base_loopbreak(loop.base);
  });
  REQUIRE(created);
  box = std::move(*created);
  box->post(1);
  event_base_dispatch(loop.base);
  other.join();
  CHECK(seen == std::vector<int>{1, 2});
  CHECK(box->cross_thread_wakes() == 2);  // the first post (no owner yet) and the thread's
  CHECK(box->local_wakes() == 0);
}
