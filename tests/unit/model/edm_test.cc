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

// The lookup picks a candidate by the letters after "Edm." and then compares
// the whole name: prefixes, extensions and near names of every type are not it.
TEST(EdmTest, OnlyTheExactTypeNameIsAType) {
  for (std::string_view name :
       {"", "E", "Edm.", "Edm.I", "Edm.In", "Edm.Int", "Edm.Int3", "Edm.Int6", "Edm.Int32x", "Edm.Int65", "Edm.Strin",
        "Edm.Strings", "Edm.Doubl", "Edm.Dx", "Edm.DateTim", "Edm.DateTimeOffset", "Edm.Boolea", "Edm.Bx", "Edm.Binar",
        "Edm.Guid2", "Edm.Gui", "Xdm.Int32", "Edm.int32", "Edm Int32", "Edm.\0nt32"}) {
    EXPECT_FALSE(EdmTypeFromName(name).has_value()) << name;
  }
  EXPECT_EQ(EdmTypeFromName("Edm.Int32"), EdmType::kInt32);
  EXPECT_EQ(EdmTypeFromName("Edm.Int64"), EdmType::kInt64);
  EXPECT_EQ(EdmTypeFromName("Edm.DateTime"), EdmType::kDateTime);
  EXPECT_EQ(EdmTypeFromName("Edm.Double"), EdmType::kDouble);
  EXPECT_EQ(EdmTypeFromName("Edm.Boolean"), EdmType::kBoolean);
  EXPECT_EQ(EdmTypeFromName("Edm.Binary"), EdmType::kBinary);
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
