// The main of the test executables that a ctest entry runs as a whole (the
// core suites, thread-ranks or processes): like gtest_main, but an entry that
// ran no test fails. A filter that matches nothing, or cases that all skip
// (written for another number of ranks than the job has), would otherwise
// pass having checked nothing.
#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  if (GTEST_FLAG_GET(list_tests)) return rc;  // gtest_discover_tests asks for the list only
  const ::testing::UnitTest& u = *::testing::UnitTest::GetInstance();
  // Passed and failed exclude skipped tests.
  int ran = u.successful_test_count() + u.failed_test_count();
  if (rc == 0 && ran == 0) {
    std::fprintf(stderr,
                 "FAILED: no test ran (%d selected by the filter, %d skipped); "
                 "this entry checks nothing\n",
                 u.test_to_run_count(), u.skipped_test_count());
    return 1;
  }
  return rc;
}
