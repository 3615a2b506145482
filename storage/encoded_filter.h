// EncodedFilter: decides a $filter (storage/model/filter_expr.h) for a row
// read from RocksDB from its key and its encoded value (entity_codec.h),
// reading only the properties the filter names, in place, without decoding
// the row. An uncached scan decodes only the rows the filter keeps.
//
// Exactness: the answers are those of model::EvaluateEntity on the decoded
// row, by construction: the same evaluator (model::EvaluateWith) and the same
// comparison table (model/comparison.h) run on the values
// ReadEncodedProperties finds, which are the values DecodeEntityValue would
// give (pinned by tests/unit/storage/encoded_filter_test.cc on every Edm type).
//
// Thread safety: one instance per scan (Evaluate reuses its buffers).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "storage/entity_codec.h"
#include "storage/model/filter_eval.h"
#include "storage/model/filter_expr.h"

namespace tablestone::storage {

class EncodedFilter final : private model::PropertySource {
 public:
  enum class Verdict : uint8_t {
    kFalse,
    kTrue,
    kUnknown,  // the value is malformed: decode it (DecodeEntityValue says why)
  };

  // `expr` must outlive this object.
  explicit EncodedFilter(const model::FilterExpr& expr);
  EncodedFilter(const EncodedFilter&) = delete;
  EncodedFilter& operator=(const EncodedFilter&) = delete;

  // The filter for the row with these keys and this encoded value. When
  // reads_row_key() is false, `row_key` is never read (a scan need not
  // decode it).
  Verdict Evaluate(std::string_view partition_key, std::string_view row_key, std::string_view value);
  // Whether the filter names RowKey.
  bool reads_row_key() const { return reads_row_key_; }

 private:
  bool Get(const model::PropertyRef& ref, model::ValueView* out) const override;

  const model::FilterExpr& expr_;
  std::vector<std::string_view> names_;            // distinct custom properties the filter reads
  std::vector<const model::PropertyRef*> refs_;    // every custom reference in the tree...
  std::vector<size_t> slot_of_ref_;                // ...and its index in names_
  std::unique_ptr<EncodedProperty[]> props_;       // per name: the current row's value
  std::string_view partition_key_, row_key_;
  int64_t timestamp_ = 0;
  bool reads_row_key_ = false;
};

}  // namespace tablestone::storage
