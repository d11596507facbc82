#ifndef REGATTA_TESTS_INTEGRATION_PIPELINE_TEST_UTIL_H_
#define REGATTA_TESTS_INTEGRATION_PIPELINE_TEST_UTIL_H_

#include <fstream>
#include <sstream>
#include <string>

#include "regatta/v1/pipelines.pb.h"

namespace regatta::testing {

// A runnable test pipeline of tests/testdata/pipelines/run/ as text (the test's CMake defines
// REGATTA_PIPELINE_TESTDATA_DIR).
inline std::string ReadTestPipeline(const std::string& name) {
  std::ifstream in(std::string(REGATTA_PIPELINE_TESTDATA_DIR) + "/run/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline bool Ended(regatta::v1::PipelineRunState state) {
  return state == regatta::v1::PIPELINE_RUN_STATE_SUCCEEDED ||
         state == regatta::v1::PIPELINE_RUN_STATE_FAILED ||
         state == regatta::v1::PIPELINE_RUN_STATE_SKIPPED ||
         state == regatta::v1::PIPELINE_RUN_STATE_CANCELED;
}

}  // namespace regatta::testing

#endif  // REGATTA_TESTS_INTEGRATION_PIPELINE_TEST_UTIL_H_
