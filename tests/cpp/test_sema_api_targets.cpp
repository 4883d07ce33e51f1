// The targets each API supports and the default target (sema/Target.h), which the
// command line and the Python APIs read instead of lists of their own.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sema/Target.h"

namespace nkic {
namespace {

TEST(SemaTargets, EachApiCoversItsTargetsAndNeitherInf1) {
  EXPECT_EQ(sema::api_targets(true), (std::vector<std::string>{"trn2", "trn3"}));
  EXPECT_EQ(sema::api_targets(false), (std::vector<std::string>{"trn1", "inf2", "trn2"}));
  for (bool current : {true, false})
    for (const std::string& name : sema::api_targets(current)) EXPECT_NE(sema::find_target(name), nullptr);
  EXPECT_EQ(sema::default_target().name, "trn2");
}

}  // namespace
}  // namespace nkic
