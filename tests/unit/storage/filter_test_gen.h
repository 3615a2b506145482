// Random rows and $filter texts shared by the filter evaluation tests of
// storage/ (block_evaluator_test.cc, encoded_filter_test.cc): mixed Edm
// types, absent properties, NaN, Int64 extremes, ordinal-sensitive strings,
// upper-case Guids; filters of every operator and literal type, system
// properties, and/or/not.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "storage/model/datetime.h"
#include "storage/model/entity.h"

namespace tablestone::storage::filter_test {

using model::EdmType;
using model::EdmValue;
using model::Entity;

inline const char* const kEmoji = "\xF0\x9F\x98\x80";   // U+1F600: sorts below U+E000 in UTF-16
inline const char* const kPrivate = "\xEE\x80\x80";     // U+E000
inline const int64_t kT0 = 637500000001234567LL;
inline const char* const kGuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
inline const char* const kGuidUpper = "0F8FAD5B-D9CB-469F-A165-70867728950E";
inline const char* const kGuid2 = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

class RowGenerator {
 public:
  explicit RowGenerator(uint32_t seed) : rng_(seed) {}

  // Rows of one partition. Each property name gets a per-block mode: one type
  // in every row (the tight loops), one type with gaps, or any type per row.
  // A `narrow` block draws each property's numbers from a small window
  // (sometimes one value) placed below, across or above the literals' values,
  // so that zone maps prove "no row matches" for many comparisons.
  std::vector<Entity> Make(size_t n, bool narrow = false) {
    static const char* kNames[] = {"A", "B", "C", "D"};
    std::vector<int> mode(4), type(4);
    for (int i = 0; i < 4; ++i) {
      mode[i] = narrow ? (Pick(5) == 0 ? 2 : Pick(2)) : Pick(3);
      type[i] = 1 + Pick(8);
      window_[i] = narrow ? Window{Pick(9) - 4, Pick(3), Pick(2) == 0, Pick(4) == 0} : Window{};
    }
    std::vector<Entity> rows(n);
    const std::string pk = Pick(2) ? "p" : "b";
    for (size_t r = 0; r < n; ++r) {
      Entity& e = rows[r];
      e.partition_key = pk;
      e.row_key = RowKeyFor(r);
      e.timestamp = kT0 + Pick(3) - 1;
      for (int i = 0; i < 4; ++i) {
        if (mode[i] == 1 && Pick(4) == 0) continue;                 // gaps
        if (mode[i] == 2 && Pick(3) == 0) continue;
        const int t = mode[i] == 2 ? 1 + Pick(8) : type[i];
        const EdmType et = static_cast<EdmType>(t);
        e.properties.push_back({kNames[i], window_[i].narrow ? NarrowValue(et, window_[i]) : Value(et)});
      }
    }
    return rows;
  }

  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

 private:
  std::string RowKeyFor(size_t r) {
    static const char* kPrefixes[] = {"", "a", "b", "B"};
    std::string rk = kPrefixes[r % 4];
    rk += std::to_string(r);
    if (r % 7 == 3) rk += kEmoji;
    if (r % 7 == 5) rk += kPrivate;
    return rk;
  }

  EdmValue Value(EdmType t) {
    switch (t) {
      case EdmType::kString: {
        static const std::vector<std::string> kValues = {"", "a", "ab", "b", "B", "1", "10", kEmoji, kPrivate};
        return EdmValue::String(kValues[static_cast<size_t>(Pick(static_cast<int>(kValues.size())))]);
      }
      case EdmType::kInt32:
        if (Pick(16) == 0) return EdmValue::Int32(Pick(2) ? INT32_MAX : INT32_MIN);
        return EdmValue::Int32(Pick(7) - 2);
      case EdmType::kInt64:
        if (Pick(16) == 0) return EdmValue::Int64(Pick(2) ? INT64_MAX : INT64_MIN);
        return EdmValue::Int64(Pick(4) == 0 ? (int64_t{1} << 40) : Pick(7) - 2);
      case EdmType::kDouble: {
        static const double kValues[] = {-0.0, 0.0, 1.0, 2.5, 3.0, std::nan(""),
                                         std::numeric_limits<double>::infinity(), -1.0};
        return EdmValue::Double(kValues[Pick(8)]);
      }
      case EdmType::kBoolean: return EdmValue::Boolean(Pick(2) == 1);
      case EdmType::kDateTime: return EdmValue::DateTime(kT0 + Pick(3) - 1);
      case EdmType::kGuid: {
        const int k = Pick(3);
        return EdmValue::Guid(k == 0 ? kGuid : k == 1 ? kGuidUpper : kGuid2);
      }
      case EdmType::kBinary: {
        static const char* kValues[] = {"", "\x01", "\x01\x02", "\xff"};
        return EdmValue::Binary(kValues[Pick(4)]);
      }
    }
    return EdmValue::String("");
  }

  // A narrow block's window for one property: values lo .. lo + width.
  struct Window {
    int lo = 0;
    int width = 0;
    bool big = false;   // Int64 values around 2^40
    bool nan = false;   // a NaN among the doubles now and then
    bool narrow = false;
    Window() = default;
    Window(int l, int w, bool b, bool n) : lo(l), width(w), big(b), nan(n), narrow(true) {}
  };

  EdmValue NarrowValue(EdmType t, const Window& w) {
    const int v = w.lo + Pick(w.width + 1);
    switch (t) {
      case EdmType::kInt32: return EdmValue::Int32(v);
      case EdmType::kInt64: return EdmValue::Int64((w.big ? (int64_t{1} << 40) : 0) + v);
      case EdmType::kDouble: {
        // Sorted, so a window of indices is a narrow range; -0.0 and 0.0 are
        // equal and both present.
        static const double kSorted[] = {-std::numeric_limits<double>::infinity(), -1.0, -0.0, 0.0, 1.0,
                                         2.0, 2.5, 3.0, std::numeric_limits<double>::infinity()};
        if (w.nan && Pick(20) == 0) return EdmValue::Double(std::nan(""));
        return EdmValue::Double(kSorted[(v + 4) % 9]);
      }
      case EdmType::kBoolean: return EdmValue::Boolean(w.width == 0 ? w.lo > 0 : Pick(2) == 1);
      case EdmType::kDateTime: return EdmValue::DateTime(kT0 + v / 2);
      default: return Value(t);
    }
  }

  std::mt19937 rng_;
  Window window_[4];
};

class FilterGenerator {
 public:
  explicit FilterGenerator(RowGenerator* rng) : rng_(rng) {}

  std::string Make(int depth) {
    const int choice = Pick(depth <= 0 ? 4 : 8);
    switch (choice) {
      case 0:
      case 1: return Property() + " " + Op() + " " + Literal();
      case 2: return Pick(3) == 0 ? SystemComparison() : Property() + " " + Op() + " " + Literal();
      case 3: return Pick(4) == 0 ? (Pick(2) ? "true" : "false") : Property();  // bare property
      case 4:
      case 5: return "(" + Make(depth - 1) + " and " + Make(depth - 1) + ")";
      case 6: return "(" + Make(depth - 1) + " or " + Make(depth - 1) + ")";
      default: return "not (" + Make(depth - 1) + ")";
    }
  }

 private:
  int Pick(int n) { return rng_->Pick(n); }
  std::string Property() {
    static const char* kNames[] = {"A", "B", "C", "D", "Missing"};
    return kNames[Pick(5)];
  }
  std::string Op() {
    static const char* kOps[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    return kOps[Pick(6)];
  }
  std::string SystemComparison() {
    switch (Pick(3)) {
      case 0: return "PartitionKey " + Op() + " " + (Pick(4) ? (Pick(2) ? "'p'" : "'b'") : Literal());
      case 1: {
        static const char* kKeys[] = {"'a1'", "'b'", "'B4'", "'5'", "''"};
        return "RowKey " + Op() + " " + (Pick(4) ? std::string(kKeys[Pick(5)]) : Literal());
      }
      default: return "Timestamp " + Op() + " " + (Pick(4) ? DateTimeLiteral() : Literal());
    }
  }
  std::string DateTimeLiteral() {
    return "datetime'" + model::FormatDateTime7(kT0 + Pick(3) - 1) + "'";
  }
  std::string Literal() {
    switch (Pick(10)) {
      case 0: {
        static const char* kValues[] = {"''", "'a'", "'ab'", "'B'", "'10'"};
        return Pick(5) == 0 ? std::string("'") + kEmoji + "'" : kValues[Pick(5)];
      }
      case 1: return std::to_string(Pick(7) - 2);               // Int32
      case 2: return std::to_string(Pick(7) - 2) + "L";         // Int64
      case 3:
        if (Pick(8) == 0) {  // the extremes
          static const char* kValues[] = {"9223372036854775807L", "-9223372036854775808L", "2147483647",
                                          "-2147483648"};
          return kValues[Pick(4)];
        }
        return Pick(3) == 0 ? "1099511627776L" : "2.5";  // 2^40 as Int64, a Double
      case 4: return Pick(2) ? "3.0" : "-0.0";
      case 5: return Pick(2) ? "true" : "false";
      case 6: return DateTimeLiteral();
      case 7: return std::string("guid'") + (Pick(2) ? kGuid : kGuid2) + "'";
      case 8: return Pick(2) ? "X'0102'" : "X'01'";
      default: return std::to_string(Pick(3)) + ".0";
    }
  }
  RowGenerator* rng_;
};

}  // namespace tablestone::storage::filter_test
