#ifndef REGATTA_TESTS_UNIT_PIPELINES_IR_TESTDATA_H_
#define REGATTA_TESTS_UNIT_PIPELINES_IR_TESTDATA_H_

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace regatta::pipelines::ir {

// The text of tests/testdata/pipelines/<name>.
inline std::string ReadPipelineFile(const std::string& name) {
  std::ifstream in(std::string(REGATTA_PIPELINE_TESTDATA_DIR) + "/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace regatta::pipelines::ir

#endif  // REGATTA_TESTS_UNIT_PIPELINES_IR_TESTDATA_H_
