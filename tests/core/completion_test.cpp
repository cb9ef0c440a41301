// The wait/test families: wait, test, waitall, testall, waitany, testany,
// waitsome, testsome and request_get_status, with null requests and inactive
// persistent requests mixed in (index / outcount UNDEFINED when nothing is
// active), and MPI_ERR_IN_STATUS when one request of a set fails.
//
// Rank 1 is a message service: rank 0 asks it for a message (tag, size) and
// waits for its marker, so rank 0 knows exactly which receives can have
// completed when it calls a test function.
#include "harness.hpp"

namespace {

using namespace core_test;
using adi3::error_class_of;
using adi3::ErrorClass;
using adi3::kUndefined;
using adi3::Request;
using adi3::Status;

constexpr int kCmd = 60, kMarker = 61;

class Completion : public CoreTest {};

void service(Device& dev) {
  adi3::Comm ctl = ctl_comm(dev);
  std::vector<Request*> reqs;
  std::vector<std::vector<unsigned char>> bufs;
  for (;;) {
    int64_t cmd = recv_int(dev, ctl, 0, kCmd);
    if (cmd < 0) break;
    int tag = static_cast<int>(cmd >> 32);
    bufs.push_back(pattern(static_cast<std::size_t>(cmd & 0xffffffff), static_cast<uint32_t>(tag)));
    Request* r = nullptr;
    ASSERT_OK(dev, dev.isend(bufs.back().data(), bufs.back().size(), byte(), 0, tag, dev.world(),
                             adi3::SendMode::Standard, &r));
    reqs.push_back(r);
    notify(dev, ctl, 0, kMarker);
  }
  ASSERT_OK(dev, dev.waitall(static_cast<int>(reqs.size()), reqs.data(), nullptr));
}

// Rank 0's side: ask for a message and wait until its envelope has arrived
// (an eager message is then delivered to a posted receive).
void deliver(Device& dev, int tag, std::size_t bytes = 16) {
  adi3::Comm ctl = ctl_comm(dev);
  send_int(dev, ctl, 1, int64_t{tag} << 32 | static_cast<int64_t>(bytes), kCmd);
  await(dev, ctl, 1, kMarker);
}

// Runs body on rank 0 with rank 1 as the service.
void with_service(const Setup& setup, const std::function<void(Device&)>& body) {
  run_ranks(setup, 2, [&](Device& dev) {
    if (dev.rank() == 1) return service(dev);
    body(dev);
    send_int(dev, ctl_comm(dev), 1, -1, kCmd);
  });
}

struct Recvs {
  std::vector<std::vector<unsigned char>> bufs;
  Request* post(Device& dev, int tag, std::size_t cap = 64) {
    bufs.emplace_back(cap);
    Request* r = nullptr;
    EXPECT_OK(dev, dev.irecv(bufs.back().data(), cap, byte(), 1, tag, dev.world(), &r));
    return r;
  }
};

void expect_msg(const Status& st, int tag, std::size_t bytes = 16) {
  EXPECT_EQ(st.source, 1);
  EXPECT_EQ(st.tag, tag);
  EXPECT_EQ(st.bytes, bytes);
  EXPECT_EQ(st.error, 0);
}

// An inactive persistent receive (never started).
Request* inactive_persistent(Device& dev, std::vector<unsigned char>& buf) {
  Request* r = nullptr;
  EXPECT_OK(dev, dev.recv_init(buf.data(), buf.size(), byte(), 1, 999, dev.world(), &r));
  return r;
}

TEST_P(Completion, WaitTestAndStatusOnNull) {
  with_service(GetParam(), [](Device& dev) {
    Request* null = nullptr;
    Status st;
    st.source = 5;
    EXPECT_OK(dev, dev.wait(&null, &st));
    EXPECT_TRUE(is_empty_status(st));
    bool flag = false;
    st.tag = 5;
    EXPECT_OK(dev, dev.test(&null, &flag, &st));
    EXPECT_TRUE(flag);
    EXPECT_TRUE(is_empty_status(st));
    flag = false;
    st.bytes = 5;
    EXPECT_OK(dev, dev.request_get_status(nullptr, &flag, &st));
    EXPECT_TRUE(flag);
    EXPECT_TRUE(is_empty_status(st));
    // Empty sets.
    int index = 3, outcount = 3;
    EXPECT_OK(dev, dev.waitall(0, nullptr, nullptr));
    EXPECT_OK(dev, dev.testall(0, nullptr, &flag, nullptr));
    EXPECT_TRUE(flag);
    EXPECT_OK(dev, dev.waitany(0, nullptr, &index, &st));
    EXPECT_EQ(index, kUndefined);
    EXPECT_OK(dev, dev.waitsome(0, nullptr, &outcount, nullptr, nullptr));
    EXPECT_EQ(outcount, kUndefined);
  });
}

TEST_P(Completion, TestAndRequestGetStatus) {
  with_service(GetParam(), [](Device& dev) {
    Recvs rv;
    Request* r = rv.post(dev, 1);
    bool flag = true;
    Status st;
    EXPECT_OK(dev, dev.test(&r, &flag, &st));
    EXPECT_FALSE(flag);
    EXPECT_NE(r, nullptr);
    EXPECT_OK(dev, dev.request_get_status(r, &flag, &st));
    EXPECT_FALSE(flag);
    deliver(dev, 1);
    for (int i = 0; i < 2; ++i) {  // request_get_status neither frees nor changes anything
      flag = false;
      st = Status{};
      EXPECT_OK(dev, dev.request_get_status(r, &flag, &st));
      EXPECT_TRUE(flag);
      expect_msg(st, 1);
      ASSERT_NE(r, nullptr);
    }
    st = Status{};
    EXPECT_OK(dev, dev.test(&r, &flag, &st));
    EXPECT_TRUE(flag);
    expect_msg(st, 1);
    EXPECT_EQ(r, nullptr);
    EXPECT_TRUE(has_pattern(rv.bufs[0].data(), 16, 1));
  });
}

TEST_P(Completion, WaitallAndTestallWithNullAndInactive) {
  with_service(GetParam(), [](Device& dev) {
    Recvs rv;
    std::vector<unsigned char> pbuf(8);
    Request* reqs[5] = {nullptr, rv.post(dev, 2), inactive_persistent(dev, pbuf), rv.post(dev, 3), nullptr};
    Request* persistent = reqs[2];
    bool flag = true;
    Status st[5];
    EXPECT_OK(dev, dev.testall(5, reqs, &flag, st));
    EXPECT_FALSE(flag);
    deliver(dev, 3);
    EXPECT_OK(dev, dev.testall(5, reqs, &flag, st));
    EXPECT_FALSE(flag);
    EXPECT_NE(reqs[3], nullptr) << "testall must not free anything while it returns false";
    deliver(dev, 2);
    for (auto& s : st) s.source = 42;
    EXPECT_OK(dev, dev.waitall(5, reqs, st));
    EXPECT_TRUE(is_empty_status(st[0]));
    expect_msg(st[1], 2);
    EXPECT_TRUE(is_empty_status(st[2]));
    expect_msg(st[3], 3);
    EXPECT_TRUE(is_empty_status(st[4]));
    EXPECT_EQ(reqs[1], nullptr);
    EXPECT_EQ(reqs[3], nullptr);
    EXPECT_EQ(reqs[2], persistent) << "an inactive persistent request stays";
    // testall returns true at once when nothing is active.
    flag = false;
    EXPECT_OK(dev, dev.testall(5, reqs, &flag, st));
    EXPECT_TRUE(flag);
    for (auto& s : st) EXPECT_TRUE(is_empty_status(s));
    // And testall completing a set.
    reqs[0] = rv.post(dev, 4);
    reqs[4] = rv.post(dev, 5);
    deliver(dev, 5);
    deliver(dev, 4);
    EXPECT_OK(dev, dev.testall(5, reqs, &flag, st));
    EXPECT_TRUE(flag);
    expect_msg(st[0], 4);
    expect_msg(st[4], 5);
    EXPECT_EQ(reqs[0], nullptr);
    EXPECT_EQ(reqs[4], nullptr);
    ASSERT_OK(dev, dev.request_free(&reqs[2]));
  });
}

// waitall finds a set plain and skips its complete head in one look:
// a set whose first requests are complete, then a null one, then one still
// in flight, and an active persistent request last (not plain: the class
// wait and the full scan), must still wait for the rest and report each.
TEST_P(Completion, WaitallCompleteHeadThenPending) {
  with_service(GetParam(), [](Device& dev) {
    Recvs rv;
    Request* head[4] = {rv.post(dev, 20), rv.post(dev, 21), nullptr, nullptr};
    deliver(dev, 20);
    deliver(dev, 21);
    // Messages to ourselves wait in our inbox until waitall's progress.
    std::vector<unsigned char> mine(16, 7), in(16), pin(16);
    Request* self = nullptr;
    ASSERT_OK(dev, dev.irecv(in.data(), in.size(), byte(), 0, 22, dev.world(), &self));
    head[3] = self;
    ASSERT_OK(dev, dev.send(mine.data(), mine.size(), byte(), 0, 22, dev.world()));
    Status st[4];
    ASSERT_OK(dev, dev.waitall(4, head, st));
    expect_msg(st[0], 20);
    expect_msg(st[1], 21);
    EXPECT_TRUE(is_empty_status(st[2]));
    EXPECT_EQ(st[3].source, 0);
    EXPECT_EQ(st[3].tag, 22);
    EXPECT_EQ(in, mine);
    for (Request* r : head) EXPECT_EQ(r, nullptr);

    Request* p = nullptr;
    ASSERT_OK(dev, dev.recv_init(pin.data(), pin.size(), byte(), 0, 23, dev.world(), &p));
    ASSERT_OK(dev, dev.start(p));
    Request* mixed[3] = {rv.post(dev, 24), nullptr, p};
    deliver(dev, 24);
    ASSERT_OK(dev, dev.send(mine.data(), mine.size(), byte(), 0, 23, dev.world()));
    ASSERT_OK(dev, dev.waitall(3, mixed, st));
    expect_msg(st[0], 24);
    EXPECT_EQ(st[2].tag, 23);
    EXPECT_EQ(pin, mine);
    EXPECT_EQ(mixed[0], nullptr);
    EXPECT_EQ(mixed[2], p) << "a persistent request stays, inactive";
    ASSERT_OK(dev, dev.request_free(&mixed[2]));
  });
}

TEST_P(Completion, WaitanyAndTestany) {
  with_service(GetParam(), [](Device& dev) {
    Recvs rv;
    std::vector<unsigned char> pbuf(64);
    Request* reqs[4] = {nullptr, inactive_persistent(dev, pbuf), rv.post(dev, 6), rv.post(dev, 7)};
    int index = -1;
    bool flag = true;
    Status st;
    EXPECT_OK(dev, dev.testany(4, reqs, &index, &flag, &st));
    EXPECT_FALSE(flag);
    EXPECT_EQ(index, kUndefined);
    deliver(dev, 7);
    EXPECT_OK(dev, dev.waitany(4, reqs, &index, &st));
    EXPECT_EQ(index, 3);
    expect_msg(st, 7);
    EXPECT_EQ(reqs[3], nullptr);
    deliver(dev, 6);
    EXPECT_OK(dev, dev.testany(4, reqs, &index, &flag, &st));
    EXPECT_TRUE(flag);
    EXPECT_EQ(index, 2);
    expect_msg(st, 6);
    EXPECT_EQ(reqs[2], nullptr);
    // Only null and inactive requests left.
    st.source = 3;
    EXPECT_OK(dev, dev.waitany(4, reqs, &index, &st));
    EXPECT_EQ(index, kUndefined);
    EXPECT_TRUE(is_empty_status(st));
    flag = false;
    index = 0;
    st.tag = 3;
    EXPECT_OK(dev, dev.testany(4, reqs, &index, &flag, &st));
    EXPECT_TRUE(flag) << "testany with nothing active: flag true";
    EXPECT_EQ(index, kUndefined);
    EXPECT_TRUE(is_empty_status(st));
    // An active persistent request completes through waitany and stays.
    Request* persistent = reqs[1];
    pbuf.assign(64, 0);
    ASSERT_OK(dev, dev.recv_init(pbuf.data(), 64, byte(), 1, 8, dev.world(), &reqs[0]));
    ASSERT_OK(dev, dev.start(reqs[0]));
    deliver(dev, 8);
    EXPECT_OK(dev, dev.waitany(4, reqs, &index, &st));
    EXPECT_EQ(index, 0);
    expect_msg(st, 8);
    EXPECT_NE(reqs[0], nullptr);
    EXPECT_OK(dev, dev.testany(4, reqs, &index, &flag, &st));
    EXPECT_TRUE(flag);
    EXPECT_EQ(index, kUndefined) << "a completed persistent request is inactive";
    ASSERT_OK(dev, dev.request_free(&reqs[0]));
    ASSERT_OK(dev, dev.request_free(&persistent));
  });
}

TEST_P(Completion, WaitsomeAndTestsome) {
  with_service(GetParam(), [](Device& dev) {
    Recvs rv;
    std::vector<unsigned char> pbuf(8);
    Request* reqs[5] = {rv.post(dev, 11), nullptr, rv.post(dev, 12), inactive_persistent(dev, pbuf), rv.post(dev, 13)};
    int outcount = -1, indices[5] = {-1, -1, -1, -1, -1};
    Status st[5];
    EXPECT_OK(dev, dev.testsome(5, reqs, &outcount, indices, st));
    EXPECT_EQ(outcount, 0);
    deliver(dev, 13);
    deliver(dev, 11);
    EXPECT_OK(dev, dev.testsome(5, reqs, &outcount, indices, st));
    ASSERT_EQ(outcount, 2);
    EXPECT_EQ(indices[0], 0);
    EXPECT_EQ(indices[1], 4);
    expect_msg(st[0], 11);
    expect_msg(st[1], 13);
    EXPECT_EQ(reqs[0], nullptr);
    EXPECT_EQ(reqs[4], nullptr);
    EXPECT_NE(reqs[2], nullptr);
    deliver(dev, 12);
    EXPECT_OK(dev, dev.waitsome(5, reqs, &outcount, indices, st));
    ASSERT_EQ(outcount, 1);
    EXPECT_EQ(indices[0], 2);
    expect_msg(st[0], 12);
    // Nothing active any more: outcount UNDEFINED.
    EXPECT_OK(dev, dev.waitsome(5, reqs, &outcount, indices, st));
    EXPECT_EQ(outcount, kUndefined);
    outcount = 0;
    EXPECT_OK(dev, dev.testsome(5, reqs, &outcount, indices, st));
    EXPECT_EQ(outcount, kUndefined);
    ASSERT_OK(dev, dev.request_free(&reqs[3]));
  });
}

// Rendezvous messages: completions that need several progress steps.
TEST_P(Completion, RendezvousThroughEveryFamily) {
  with_service(GetParam(), [](Device& dev) {
    const std::size_t big = dev.eager_limit() + 1000, huge = 1 << 20;
    Recvs rv;
    Request* reqs[3] = {rv.post(dev, 20, big), rv.post(dev, 21, huge), rv.post(dev, 22, big)};
    deliver(dev, 21, huge);
    int index = -1;
    Status st[3];
    ASSERT_OK(dev, dev.waitany(3, reqs, &index, &st[0]));
    EXPECT_EQ(index, 1);
    expect_msg(st[0], 21, huge);
    EXPECT_TRUE(has_pattern(rv.bufs[1].data(), huge, 21));
    deliver(dev, 20, big);
    deliver(dev, 22, big);
    int done = 0, indices[3];
    while (done < 2) {
      int outcount = 0;
      ASSERT_OK(dev, dev.testsome(3, reqs, &outcount, indices, st));
      ASSERT_NE(outcount, kUndefined);
      for (int k = 0; k < outcount; ++k) {
        expect_msg(st[k], 20 + indices[k], big);
        EXPECT_TRUE(has_pattern(rv.bufs[static_cast<std::size_t>(indices[k])].data(), big,
                                static_cast<uint32_t>(20 + indices[k])));
      }
      done += outcount;
    }
    Request* one = rv.post(dev, 23, huge);
    deliver(dev, 23, huge);
    bool flag = false;
    while (!flag) ASSERT_OK(dev, dev.testall(1, &one, &flag, st));
    expect_msg(st[0], 23, huge);
  });
}

// One truncated receive among several: ERR_IN_STATUS from the multiple
// completion calls, with the error in that request's status only; the
// single completion calls return the error itself.
TEST_P(Completion, ErrInStatus) {
  with_service(GetParam(), [](Device& dev) {
    for (std::size_t bytes : {std::size_t{100}, dev.eager_limit() + 1}) {
      SCOPED_TRACE("bytes " + std::to_string(bytes));
      Recvs rv;
      auto check = [&](int code, const Status* st, int bad, int n, const char* what) {
        SCOPED_TRACE(what);
        EXPECT_EQ(error_class_of(code), ErrorClass::InStatus) << why(dev, code);
        EXPECT_TRUE(contains(dev.errors().message(code), "MPI_ERR_TRUNCATE")) << dev.errors().message(code);
        for (int i = 0; st && i < n; ++i) {
          if (i == bad) {
            EXPECT_EQ(error_class_of(st[i].error), ErrorClass::Truncate) << why(dev, st[i].error);
            EXPECT_EQ(st[i].bytes, 4u);
          } else {
            EXPECT_EQ(st[i].error, 0) << "status " << i;
          }
        }
      };
      // waitall
      Request* reqs[3] = {rv.post(dev, 30, bytes), rv.post(dev, 31, 4), rv.post(dev, 32, bytes)};
      for (int t : {30, 31, 32}) deliver(dev, t, bytes);
      Status st[3];
      check(dev.waitall(3, reqs, st), st, 1, 3, "waitall");
      // waitall with the statuses ignored still says IN_STATUS
      reqs[0] = rv.post(dev, 33, 4);
      reqs[1] = rv.post(dev, 34, bytes);
      deliver(dev, 33, bytes);
      deliver(dev, 34, bytes);
      check(dev.waitall(2, reqs, nullptr), nullptr, 0, 2, "waitall, statuses ignored");
      // testall
      reqs[0] = rv.post(dev, 35, bytes);
      reqs[1] = rv.post(dev, 36, 4);
      deliver(dev, 35, bytes);
      deliver(dev, 36, bytes);
      bool flag = false;
      int e = 0;
      while (!flag && !e) e = dev.testall(2, reqs, &flag, st);
      check(e, st, 1, 2, "testall");
      // waitsome / testsome
      reqs[0] = rv.post(dev, 37, 4);
      reqs[1] = rv.post(dev, 38, bytes);
      deliver(dev, 37, bytes);
      int outcount = 0, indices[2];
      e = dev.waitsome(2, reqs, &outcount, indices, st);
      ASSERT_EQ(outcount, 1);
      EXPECT_EQ(indices[0], 0);
      check(e, st, 0, 1, "waitsome");
      reqs[0] = rv.post(dev, 39, 4);
      deliver(dev, 38, bytes);
      deliver(dev, 39, bytes);
      for (int got = 0; got < 2;) {
        e = dev.testsome(2, reqs, &outcount, indices, st);
        ASSERT_NE(outcount, kUndefined);
        int bad = -1;
        for (int k = 0; k < outcount; ++k) {
          if (indices[k] == 0) bad = k;
        }
        if (bad >= 0) {
          check(e, st, bad, outcount, "testsome");
        } else {
          EXPECT_EQ(e, 0) << why(dev, e);
        }
        got += outcount;
      }
      // single completions: the error itself
      Request* r = rv.post(dev, 40, 4);
      deliver(dev, 40, bytes);
      int index = -1;
      Request* any[2] = {nullptr, r};
      e = dev.waitany(2, any, &index, &st[0]);
      EXPECT_EQ(index, 1);
      EXPECT_EQ(error_class_of(e), ErrorClass::Truncate) << "waitany: " << why(dev, e);
      r = rv.post(dev, 41, 4);
      deliver(dev, 41, bytes);
      e = dev.wait(&r, &st[0]);
      EXPECT_EQ(error_class_of(e), ErrorClass::Truncate) << "wait: " << why(dev, e);
      EXPECT_EQ(error_class_of(st[0].error), ErrorClass::Truncate);
    }
  });
}

// A message-rate window to ourselves: waitall finishes a plain set in
// bulk (no threads). Half the receives are posted before their sends, half
// after (they match unexpected messages), one slot is null; every request
// goes back to the pool and every status is filled.
TEST_P(Completion, WaitallPlainWindowInBulk) {
  with_service(GetParam(), [](Device& dev) {
    constexpr int kWin = 16;
    const std::size_t live = dev.live_requests();
    std::vector<std::vector<unsigned char>> out(kWin), in(kWin, std::vector<unsigned char>(8));
    Request* reqs[2 * kWin] = {};
    for (int k = 0; k < kWin / 2; ++k) {
      ASSERT_OK(dev, dev.irecv(in[k].data(), 8, byte(), 0, 100 + k, dev.world(), &reqs[k]));
    }
    for (int k = 0; k < kWin; ++k) {
      out[k] = pattern(8, static_cast<uint32_t>(k));
      ASSERT_OK(
          dev, dev.isend(out[k].data(), 8, byte(), 0, 100 + k, dev.world(), adi3::SendMode::Standard, &reqs[kWin + k]));
    }
    ASSERT_OK(dev, dev.waitall(kWin, reqs + kWin, nullptr));
    for (int k = kWin / 2; k < kWin; ++k) {
      ASSERT_OK(dev, dev.irecv(in[k].data(), 8, byte(), 0, 100 + k, dev.world(), &reqs[k]));
    }
    Status st[kWin + 1];
    for (auto& s : st) s.source = 42;
    reqs[kWin] = nullptr;  // a null request last: the bulk loop stops there
    ASSERT_OK(dev, dev.waitall(kWin + 1, reqs, st));
    for (int k = 0; k < kWin; ++k) {
      EXPECT_EQ(reqs[k], nullptr) << k;
      EXPECT_EQ(st[k].source, 0) << k;
      EXPECT_EQ(st[k].tag, 100 + k);
      EXPECT_EQ(st[k].bytes, 8u);
      EXPECT_EQ(in[k], out[k]) << k;
    }
    EXPECT_TRUE(is_empty_status(st[kWin]));
    EXPECT_EQ(dev.live_requests(), live) << "every request of the window went back to the pool";
  });
}

CORE_INSTANTIATE(Completion);

}  // namespace
