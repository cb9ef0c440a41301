// Test helpers: a generalized request whose callbacks record what ran, in
// which order and with what, and one-rank devices.
#pragma once
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "adi3/device.hpp"
#include "channels/inproc/inproc.hpp"
#include "greq/greq.hpp"

namespace greq_test {

using adi3::Device;
using adi3::Request;
using adi3::Status;

inline adi3::Config config(bool mt, int sleep_us = adi3::Config{}.sleep_us) {
  adi3::Config c;  // not from the environment
  c.thread_multiple = mt;
  c.sleep_us = sleep_us;
  return c;
}

// A device of a one-rank job (finalized by the destructor of Solo).
struct Solo {
  explicit Solo(bool mt = false, int sleep_us = adi3::Config{}.sleep_us)
      : fabric(1), dev(fabric.channel(0), config(mt, sleep_us)) {}
  ~Solo() { dev.finalize(); }
  adi3::InprocFabric fabric;
  Device dev;
};

struct Recorder {
  // What the query function reports.
  int elements = 3;
  int source = 7;
  int tag = 11;
  bool mark_cancelled = false;
  // Return codes.
  int query_rc = 0, free_rc = 0, cancel_rc = 0;

  std::atomic<int> queries{0}, frees{0}, cancels{0};
  std::atomic<int> cancel_complete{-1};
  std::atomic<bool> null_status{false};
  // Set by a test around a call, read by free_fn: where free_fn ran.
  std::atomic<int> phase{0};
  std::atomic<int> free_phase{-1};

  std::mutex m;
  std::string order;  // 'q' query, 'f' free, 'c' cancel
  void log(char c) {
    std::lock_guard<std::mutex> g(m);
    order += c;
  }
  std::string trace() {
    std::lock_guard<std::mutex> g(m);
    return order;
  }

  static int query(void* extra, Status* s) {
    auto* r = static_cast<Recorder*>(extra);
    r->queries.fetch_add(1);
    r->log('q');
    if (!s) {
      r->null_status = true;
      return r->query_rc;
    }
    adi3::status_set_elements(*s, adi3::Datatype::byte(), r->elements);
    adi3::status_set_cancelled(*s, r->mark_cancelled);
    s->source = r->source;
    s->tag = r->tag;
    return r->query_rc;
  }
  static int free(void* extra) {
    auto* r = static_cast<Recorder*>(extra);
    r->frees.fetch_add(1);
    r->free_phase = r->phase.load();
    r->log('f');
    return r->free_rc;
  }
  static int cancel(void* extra, int complete) {
    auto* r = static_cast<Recorder*>(extra);
    r->cancels.fetch_add(1);
    r->cancel_complete = complete;
    r->log('c');
    return r->cancel_rc;
  }

  Request* start(Device& dev) {
    Request* req = nullptr;
    EXPECT_EQ(adi3::grequest_start(dev, &query, &free, &cancel, this, &req), 0);
    return req;
  }
};

inline std::string why(Device& dev, int code) { return code ? dev.errors().message(code) : std::string("success"); }

}  // namespace greq_test
