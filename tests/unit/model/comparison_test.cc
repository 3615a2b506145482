// comparison.h: the classification table of the service's $filter comparison
// rules, pinned cell by cell, and its agreement with CompareValue (the row
// evaluator) on every (property type, literal type, operator) triple.
// Behaviour: docs/compatibility-notes/filter.md and
// https://learn.microsoft.com/en-us/rest/api/storageservices/querying-tables-and-entities
#include "storage/model/comparison.h"

#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <string>

#include "storage/model/filter_eval.h"

namespace tablestone::model {
namespace {


constexpr std::array<EdmType, 8> kTypes = {EdmType::kString,  EdmType::kInt32,    EdmType::kInt64, EdmType::kDouble,
                                           EdmType::kBoolean, EdmType::kDateTime, EdmType::kGuid,  EdmType::kBinary};
constexpr std::array<CompareOp, 6> kOps = {CompareOp::kEq, CompareOp::kNe, CompareOp::kLt,
                                           CompareOp::kLe, CompareOp::kGt, CompareOp::kGe};

// The expected kind of every pair, written independently of the table.
CompareKind Expected(EdmType property, EdmType literal) {
  if (literal == EdmType::kInt32 && (property == EdmType::kInt32 || property == EdmType::kInt64)) {
    return CompareKind::kInt64;  // the Int32 literal widens
  }
  if ((literal == EdmType::kInt32 || literal == EdmType::kInt64) && property == EdmType::kDouble) {
    return CompareKind::kDouble;  // an integer literal widens to double
  }
  if (property != literal) return CompareKind::kMismatch;  // the property never widens
  switch (property) {
    case EdmType::kString: return CompareKind::kString;
    case EdmType::kInt32:
    case EdmType::kInt64: return CompareKind::kInt64;
    case EdmType::kDouble: return CompareKind::kDouble;
    case EdmType::kBoolean: return CompareKind::kBoolean;
    case EdmType::kDateTime: return CompareKind::kDateTime;
    case EdmType::kGuid: return CompareKind::kGuid;
    case EdmType::kBinary: return CompareKind::kBinary;
  }
  return CompareKind::kMismatch;
}

TEST(FilterComparisonTest, TableMatchesTheRulesForEveryPair) {
  for (EdmType p : kTypes) {
    for (EdmType l : kTypes) {
      EXPECT_EQ(Classify(p, l), Expected(p, l))
          << "property " << model::EdmTypeName(p) << " literal " << model::EdmTypeName(l) << ": got "
          << CompareKindName(Classify(p, l)) << ", want " << CompareKindName(Expected(p, l));
    }
  }
}

TEST(FilterComparisonTest, PinnedCells) {
  // Widening goes from the literal to the property only.
  static_assert(Classify(EdmType::kInt64, EdmType::kInt32) == CompareKind::kInt64);
  static_assert(Classify(EdmType::kInt32, EdmType::kInt64) == CompareKind::kMismatch);
  static_assert(Classify(EdmType::kDouble, EdmType::kInt32) == CompareKind::kDouble);
  static_assert(Classify(EdmType::kDouble, EdmType::kInt64) == CompareKind::kDouble);
  static_assert(Classify(EdmType::kInt32, EdmType::kDouble) == CompareKind::kMismatch);
  static_assert(Classify(EdmType::kInt64, EdmType::kDouble) == CompareKind::kMismatch);
  // DateTime is not an integer, a Guid not a string.
  static_assert(Classify(EdmType::kDateTime, EdmType::kInt64) == CompareKind::kMismatch);
  static_assert(Classify(EdmType::kString, EdmType::kGuid) == CompareKind::kMismatch);
  static_assert(Classify(EdmType::kGuid, EdmType::kString) == CompareKind::kMismatch);
  // Out-of-range values (not an EdmType) never index past the table.
  static_assert(Classify(static_cast<EdmType>(0), EdmType::kString) == CompareKind::kMismatch);
  static_assert(Classify(static_cast<EdmType>(200), EdmType::kString) == CompareKind::kMismatch);
  static_assert(Classify(EdmType::kString, static_cast<EdmType>(9)) == CompareKind::kMismatch);
  SUCCEED();
}

TEST(FilterComparisonTest, MismatchAnswers) {
  // As if the property sorted below the literal.
  EXPECT_FALSE(MismatchAnswer(CompareOp::kEq));
  EXPECT_TRUE(MismatchAnswer(CompareOp::kNe));
  EXPECT_TRUE(MismatchAnswer(CompareOp::kLt));
  EXPECT_TRUE(MismatchAnswer(CompareOp::kLe));
  EXPECT_FALSE(MismatchAnswer(CompareOp::kGt));
  EXPECT_FALSE(MismatchAnswer(CompareOp::kGe));
}

TEST(FilterComparisonTest, LiteralAsDoubleWidensIntegers) {
  EXPECT_EQ(LiteralAsDouble(EdmValue::Int32(-7)), -7.0);
  EXPECT_EQ(LiteralAsDouble(EdmValue::Int64(5000000000LL)), 5e9);
  EXPECT_EQ(LiteralAsDouble(EdmValue::Double(2.5)), 2.5);
}

// A value of each type (property side), equal to Literal(type) where the
// types allow it.
ValueView Property(EdmType type) {
  ValueView v;
  v.type = type;
  switch (type) {
    case EdmType::kDouble: v.double_value = 5.0; break;
    case EdmType::kString: v.text = "abc"; break;
    case EdmType::kGuid: v.text = "0f8fad5b-d9cb-469f-a165-70867728950e"; break;
    case EdmType::kBinary: v.text = "\x0a"; break;
    case EdmType::kBoolean: v.int_value = 1; break;
    default: v.int_value = 5; break;
  }
  return v;
}

EdmValue Literal(EdmType type) {
  switch (type) {
    case EdmType::kString: return EdmValue::String("abd");
    case EdmType::kInt32: return EdmValue::Int32(6);
    case EdmType::kInt64: return EdmValue::Int64(6);
    case EdmType::kDouble: return EdmValue::Double(6.0);
    case EdmType::kBoolean: return EdmValue::Boolean(true);
    case EdmType::kDateTime: return EdmValue::DateTime(6);
    case EdmType::kGuid: return EdmValue::Guid("0F8FAD5B-D9CB-469F-A165-70867728950F");
    case EdmType::kBinary: return EdmValue::Binary("\x0b");
  }
  return {};
}

TEST(FilterComparisonTest, CompareValueGivesTheMismatchAnswerExactlyForMismatchPairs) {
  for (EdmType p : kTypes) {
    for (EdmType l : kTypes) {
      if (Classify(p, l) != CompareKind::kMismatch) continue;
      for (CompareOp op : kOps) {
        EXPECT_EQ(CompareValue(Property(p), op, Literal(l)), MismatchAnswer(op))
            << model::EdmTypeName(p) << " vs " << model::EdmTypeName(l) << " op " << static_cast<int>(op);
      }
    }
  }
}

TEST(FilterComparisonTest, CompareValueOrdersMatchingPairsByValue) {
  // Property below the literal (5 < 6, "abc" < "abd", ...-0e < ...-0F case-folded, false-free).
  for (EdmType p : kTypes) {
    for (EdmType l : kTypes) {
      const CompareKind kind = Classify(p, l);
      if (kind == CompareKind::kMismatch || kind == CompareKind::kBoolean) continue;
      const std::string what = std::string(model::EdmTypeName(p)) + " vs " + std::string(model::EdmTypeName(l));
      EXPECT_TRUE(CompareValue(Property(p), CompareOp::kLt, Literal(l))) << what;
      EXPECT_FALSE(CompareValue(Property(p), CompareOp::kGe, Literal(l))) << what;
      EXPECT_FALSE(CompareValue(Property(p), CompareOp::kEq, Literal(l))) << what;
    }
  }
  EXPECT_TRUE(CompareValue(Property(EdmType::kBoolean), CompareOp::kEq, EdmValue::Boolean(true)));
  EXPECT_TRUE(CompareValue(Property(EdmType::kBoolean), CompareOp::kGt, EdmValue::Boolean(false)));
}

TEST(FilterComparisonTest, NanIsUnorderedForEveryDoublePair) {
  ValueView nan = Property(EdmType::kDouble);
  nan.double_value = std::numeric_limits<double>::quiet_NaN();
  for (EdmType l : {EdmType::kInt32, EdmType::kInt64, EdmType::kDouble}) {
    ASSERT_EQ(Classify(EdmType::kDouble, l), CompareKind::kDouble);
    for (CompareOp op : kOps) {
      EXPECT_EQ(CompareValue(nan, op, Literal(l)), op == CompareOp::kNe) << static_cast<int>(op);
    }
  }
}

}  // namespace
}  // namespace tablestone::model
