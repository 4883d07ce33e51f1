// The NKI version served (sema/NkiVersion.h): NKIC_NKI_VERSION's spellings, the version
// order builders gate rules on, and the forms each version accepts, warns about or rejects.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "diagnostic_test_util.h"
#include "sema/NkiVersion.h"

namespace nkic {
namespace {

using sema::NkiVersion;

TEST(NkiVersion, ParsesEachServedVersionWithOrWithoutAPatchNumber) {
  for (int minor = 2; minor <= 8; ++minor) {
    const std::string v = "0." + std::to_string(minor);
    EXPECT_EQ(sema::parse_nki_version(v), (NkiVersion{0, minor}));
    EXPECT_EQ(sema::parse_nki_version(v + ".0"), (NkiVersion{0, minor}));
  }
  for (const char* bad : {"", "0.1", "0.9", "1.0", "0", "0.", "0.6.", "0.6.0.0", "v0.6", "0.6x", " 0.6", "-0.6", "0.02", "00.6"})
    EXPECT_EQ(sema::parse_nki_version(bad), std::nullopt) << bad;
}

TEST(NkiVersion, AtLeastOrdersByMajorThenMinor) {
  const NkiVersion v{0, 6};
  EXPECT_TRUE(v.at_least(0, 6));
  EXPECT_TRUE(v.at_least(0, 2));
  EXPECT_FALSE(v.at_least(0, 7));
  EXPECT_FALSE(v.at_least(1, 0));
  EXPECT_EQ(v.str(), "0.6");
}

TEST(NkiVersion, ServedIsTheEnvironmentsOrTheNewest) {
  ::unsetenv("NKIC_NKI_VERSION");
  EXPECT_EQ(sema::served_nki_version(), sema::kNewestNkiVersion);
  ::setenv("NKIC_NKI_VERSION", "0.4.0", 1);
  EXPECT_EQ(sema::served_nki_version(), (NkiVersion{0, 4}));
  ::setenv("NKIC_NKI_VERSION", "0.10", 1);
  sema::Diagnostic d = test_util::diagnostic_of([] { sema::served_nki_version(); });
  EXPECT_EQ(d.code, "err_unsupported_nki_version");
  EXPECT_EQ(d.message, "NKIC_NKI_VERSION='0.10' names no NKI version nkic serves: one of 0.2, 0.3, 0.4, 0.5, 0.6, "
                       "0.7, 0.8 (with or without a patch number, e.g. 0.6.0)");
  ::unsetenv("NKIC_NKI_VERSION");
}

// The diagnostics check_versioned_form gives `form` at `served`: raised, then warned.
std::vector<std::string> outcome(std::string_view form, NkiVersion served) {
  std::vector<std::string> got;
  try {
    sema::check_versioned_form(form, served, [](sema::Diagnostic d) { sema::fail(std::move(d)); },
                               [&got](sema::Diagnostic d) { got.push_back(d.code + ": " + d.message); });
  } catch (const sema::NkiError& e) {
    got.push_back(e.diag().code + ": " + e.diag().message);
  }
  return got;
}

TEST(NkiVersion, DynamicRangeRunsSilentlyThenWarnsThenIsRemoved) {
  EXPECT_TRUE(outcome("nl.dynamic_range", {0, 5}).empty());
  EXPECT_EQ(outcome("nl.dynamic_range", {0, 6}),
            std::vector<std::string>{"warn_deprecated_in_nki_version: nl.dynamic_range is deprecated since nki 0.6: "
                                     "use nl.fori_loop(lower, upper, body)"});
  EXPECT_EQ(outcome("nl.dynamic_range", {0, 7}),
            std::vector<std::string>{"err_removed_in_nki_version: nl.dynamic_range was removed in nki 0.7 (nkic "
                                     "serves nki 0.7)"});
}

TEST(NkiVersion, FormsNewInAVersionAreRejectedBeforeIt) {
  EXPECT_EQ(outcome("nl.while_loop", {0, 5}),
            std::vector<std::string>{"err_not_in_nki_version: nl.while_loop is not in nki 0.5 (NKIC_NKI_VERSION=0.5): "
                                     "it came in nki 0.6"});
  EXPECT_TRUE(outcome("nl.while_loop", {0, 6}).empty());
  EXPECT_TRUE(outcome("nisa.tensor_copy(dtype=)", {0, 2}).empty());
  EXPECT_EQ(outcome("nisa.tensor_copy(dtype=)", {0, 3}).size(), 1u);
}

TEST(NkiVersion, AFormBothNewAndDeprecatedHintsItsPredecessorBeforeAndItsSuccessorAfter) {
  auto raised = [](NkiVersion served) {
    return test_util::diagnostic_of([served] {
      sema::check_versioned_form("nisa.sendrecv_compute", served, [](sema::Diagnostic d) { sema::fail(std::move(d)); },
                                 [](sema::Diagnostic d) { sema::fail(std::move(d)); });
    });
  };
  EXPECT_EQ(raised({0, 6}).hint, "NKIC_NKI_VERSION=0.7 or newer serves it; nki 0.6 writes nisa.sendrecv, then "
                                 "nisa.tensor_tensor on the received tile");
  EXPECT_TRUE(outcome("nisa.sendrecv_compute", {0, 7}).empty());
  EXPECT_EQ(outcome("nisa.sendrecv_compute", {0, 8}),
            std::vector<std::string>{"warn_deprecated_in_nki_version: nisa.sendrecv_compute is deprecated since nki "
                                     "0.8: use nki.lnc.sendrecv_compute"});
}

TEST(NkiVersion, AcceptsIsTheRangeWithoutDiagnostics) {
  EXPECT_TRUE(sema::accepts("a write to a loop variable inside its loop", {0, 3}));
  EXPECT_FALSE(sema::accepts("a write to a loop variable inside its loop", {0, 4}));
  EXPECT_TRUE(sema::accepts("nl.dynamic_range", {0, 6}));  // deprecated, still accepted
  EXPECT_FALSE(sema::accepts("nl.fori_loop", {0, 5}));
  EXPECT_FALSE(sema::accepts("nl.int64", {0, 6}));
  EXPECT_TRUE(sema::accepts("nl.int64", {0, 7}));
  EXPECT_FALSE(sema::accepts("the result of an NkiScalar comparison", {0, 7}));
  EXPECT_TRUE(sema::accepts("the result of an NkiScalar comparison", {0, 8}));
}

TEST(NkiVersion, EveryFormHasAHintAndAConsistentRange) {
  for (const sema::VersionedForm& f : sema::versioned_forms()) {
    EXPECT_FALSE(f.instead.empty()) << f.form;
    EXPECT_GE(f.introduced, sema::kOldestNkiVersion) << f.form;
    if (f.deprecated && f.removed) EXPECT_LT(*f.deprecated, *f.removed) << f.form;
    if (f.removed) EXPECT_GT(*f.removed, f.introduced) << f.form;
  }
  EXPECT_EQ(test_util::diagnostic_of([] { sema::check_versioned_form(
                "no such form", sema::kNewestNkiVersion, [](sema::Diagnostic d) { sema::fail(std::move(d)); },
                [](sema::Diagnostic) {}); }).code,
            "err_internal");
}

}  // namespace
}  // namespace nkic
