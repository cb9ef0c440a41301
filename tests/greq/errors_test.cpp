// Callback error codes through every wait/test family: the single and "any"
// forms return free_fn's code (the last callback), or query_fn's when free_fn
// succeeded; the "some" and "all" forms return ERR_IN_STATUS and put each
// request's code in its status, also when the statuses are ignored (then the
// individual codes are lost, as MPI says, but the message keeps the first).
#include <string>
#include <vector>

#include "recorder.hpp"

namespace {

using namespace greq_test;
using adi3::error_class_of;
using adi3::error_code;
using adi3::ErrorClass;

const int kQueryErr = error_code(ErrorClass::Io);
const int kFreeErr = error_code(ErrorClass::Other);

enum class Family { Wait, Test, Waitany, Testany };

// Completes one request through a single/any family and returns its result.
int complete_one(Device& dev, Family f, Request** r, Status* st) {
  int index = 0;
  bool flag = false;
  switch (f) {
    case Family::Wait:
      return dev.wait(r, st);
    case Family::Test: {
      int e = dev.test(r, &flag, st);
      EXPECT_TRUE(flag);
      return e;
    }
    case Family::Waitany:
      return dev.waitany(1, r, &index, st);
    case Family::Testany: {
      int e = dev.testany(1, r, &index, &flag, st);
      EXPECT_TRUE(flag);
      return e;
    }
  }
  return -1;
}

class SingleFamilies : public ::testing::TestWithParam<Family> {};

TEST_P(SingleFamilies, FreeErrorIsReturned) {
  Solo s;
  Recorder rec;
  rec.query_rc = kQueryErr;
  rec.free_rc = kFreeErr;
  Request* r = rec.start(s.dev);
  adi3::grequest_complete(r);
  Status st;
  EXPECT_EQ(complete_one(s.dev, GetParam(), &r, &st), kFreeErr);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(rec.trace(), "qf");
  EXPECT_EQ(st.bytes, 3u);  // the status is filled all the same
}

TEST_P(SingleFamilies, QueryErrorIsReturnedWhenFreeSucceeds) {
  Solo s;
  Recorder rec;
  rec.query_rc = kQueryErr;
  Request* r = rec.start(s.dev);
  adi3::grequest_complete(r);
  EXPECT_EQ(complete_one(s.dev, GetParam(), &r, nullptr), kQueryErr);
  EXPECT_EQ(rec.trace(), "qf");
}

TEST_P(SingleFamilies, SuccessIsSuccess) {
  Solo s;
  Recorder rec;
  Request* r = rec.start(s.dev);
  adi3::grequest_complete(r);
  EXPECT_EQ(complete_one(s.dev, GetParam(), &r, nullptr), 0);
}

std::string single_name(const ::testing::TestParamInfo<Family>& i) {
  static const char* const kNames[] = {"Wait", "Test", "Waitany", "Testany"};
  return kNames[static_cast<int>(i.param)];
}
INSTANTIATE_TEST_SUITE_P(Greq, SingleFamilies,
                         ::testing::Values(Family::Wait, Family::Test, Family::Waitany, Family::Testany), single_name);

enum class Multi { Waitall, Testall, Waitsome, Testsome };

// Three requests: the middle one's free_fn fails, the last one's query_fn.
class MultiFamilies : public ::testing::TestWithParam<Multi> {
 protected:
  // Returns the call's code; fills sts (if given) in request order.
  int run(Device& dev, Recorder* recs, bool ignore_statuses, std::vector<Status>& sts) {
    Request* reqs[3];
    for (int i = 0; i < 3; ++i) {
      reqs[i] = recs[i].start(dev);
      adi3::grequest_complete(reqs[i]);
    }
    sts.assign(3, Status{});
    Status* out = ignore_statuses ? nullptr : sts.data();
    bool flag = false;
    int count = 0, idx[3] = {0, 1, 2};
    int e = 0;
    switch (GetParam()) {
      case Multi::Waitall:
        e = dev.waitall(3, reqs, out);
        break;
      case Multi::Testall:
        e = dev.testall(3, reqs, &flag, out);
        EXPECT_TRUE(flag);
        break;
      case Multi::Waitsome:
        e = dev.waitsome(3, reqs, &count, idx, out);
        EXPECT_EQ(count, 3);
        break;
      case Multi::Testsome:
        e = dev.testsome(3, reqs, &count, idx, out);
        EXPECT_EQ(count, 3);
        break;
    }
    for (Request* r : reqs) EXPECT_EQ(r, nullptr);
    if (!ignore_statuses) {
      // some-forms list statuses by completion index.
      std::vector<Status> by_req(3);
      for (int k = 0; k < 3; ++k) by_req[static_cast<std::size_t>(idx[k])] = sts[static_cast<std::size_t>(k)];
      sts = by_req;
    }
    return e;
  }
};

TEST_P(MultiFamilies, ErrInStatusWithFreeCodes) {
  Solo s;
  Recorder recs[3];
  recs[1].free_rc = kFreeErr;
  recs[2].query_rc = kQueryErr;
  std::vector<Status> sts;
  int e = run(s.dev, recs, false, sts);
  EXPECT_EQ(error_class_of(e), ErrorClass::InStatus) << why(s.dev, e);
  EXPECT_EQ(sts[0].error, 0);
  EXPECT_EQ(sts[1].error, kFreeErr);
  EXPECT_EQ(sts[2].error, kQueryErr);
  for (const Status& st : sts) EXPECT_EQ(st.bytes, 3u);
  for (Recorder& r : recs) EXPECT_EQ(r.trace(), "qf");
}

TEST_P(MultiFamilies, ErrInStatusEvenWhenStatusesAreIgnored) {
  Solo s;
  Recorder recs[3];
  recs[1].free_rc = kFreeErr;
  std::vector<Status> sts;
  int e = run(s.dev, recs, true, sts);
  EXPECT_EQ(error_class_of(e), ErrorClass::InStatus) << why(s.dev, e);
  std::string msg = s.dev.errors().message(e);
  EXPECT_NE(msg.find("ignored"), std::string::npos) << msg;
  EXPECT_NE(msg.find(s.dev.errors().message(kFreeErr)), std::string::npos) << msg;
  for (Recorder& r : recs) EXPECT_EQ(r.trace(), "qf");
}

TEST_P(MultiFamilies, AllSucceed) {
  Solo s;
  Recorder recs[3];
  std::vector<Status> sts;
  EXPECT_EQ(run(s.dev, recs, false, sts), 0);
  for (const Status& st : sts) EXPECT_EQ(st.error, 0);
}

std::string multi_name(const ::testing::TestParamInfo<Multi>& i) {
  static const char* const kNames[] = {"Waitall", "Testall", "Waitsome", "Testsome"};
  return kNames[static_cast<int>(i.param)];
}
INSTANTIATE_TEST_SUITE_P(Greq, MultiFamilies,
                         ::testing::Values(Multi::Waitall, Multi::Testall, Multi::Waitsome, Multi::Testsome),
                         multi_name);

TEST(GreqErrors, GetStatusReturnsQueryError) {
  Solo s;
  Recorder rec;
  rec.query_rc = kQueryErr;
  rec.free_rc = kFreeErr;
  Request* r = rec.start(s.dev);
  adi3::grequest_complete(r);
  bool flag = false;
  EXPECT_EQ(s.dev.request_get_status(r, &flag, nullptr), kQueryErr);
  EXPECT_TRUE(flag);
  EXPECT_EQ(s.dev.wait(&r, nullptr), kFreeErr);
}

}  // namespace
