#include "storage/model/edm.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace tablestone::model {
namespace {

TEST(EdmTest, TypeNamesRoundTripExactly) {
  for (EdmType t : {EdmType::kString, EdmType::kInt32, EdmType::kInt64, EdmType::kDouble, EdmType::kBoolean,
                    EdmType::kDateTime, EdmType::kGuid, EdmType::kBinary}) {
    EXPECT_EQ(EdmTypeFromName(EdmTypeName(t)), t);
  }
  EXPECT_EQ(EdmTypeName(EdmType::kInt64), "Edm.Int64");
  EXPECT_FALSE(EdmTypeFromName("edm.int64").has_value());  // case-sensitive like the service
  EXPECT_FALSE(EdmTypeFromName("Edm.Single").has_value());
}

TEST(EdmTest, EqualityComparesTypeAndPayload) {
  EXPECT_EQ(EdmValue::Int32(5), EdmValue::Int32(5));
  EXPECT_NE(EdmValue::Int32(5), EdmValue::Int64(5));
  EXPECT_NE(EdmValue::String("a"), EdmValue::Binary("a"));
  EXPECT_EQ(EdmValue::Double(std::nan("")), EdmValue::Double(std::nan("")));
  EXPECT_NE(EdmValue::Double(1.0), EdmValue::Double(std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(EdmValue::Boolean(true).bool_value());
}

}  // namespace
}  // namespace tablestone::model
