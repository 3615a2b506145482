#include "storage/encoded_filter.h"

#include <algorithm>

namespace tablestone::storage {

EncodedFilter::EncodedFilter(const model::FilterExpr& expr) : expr_(expr) {
  for (const model::FilterNode& node : expr.nodes) {
    if (node.kind != model::FilterNodeKind::kCompare && node.kind != model::FilterNodeKind::kBoolProperty) continue;
    if (node.property.system == model::SystemProperty::kRowKey) reads_row_key_ = true;
    if (node.property.system != model::SystemProperty::kNone) continue;
    const std::string_view name = node.property.name;
    auto found = std::find(names_.begin(), names_.end(), name);
    if (found == names_.end()) found = names_.insert(names_.end(), name);
    refs_.push_back(&node.property);
    slot_of_ref_.push_back(static_cast<size_t>(found - names_.begin()));
  }
  props_ = std::make_unique<EncodedProperty[]>(names_.size());
}

EncodedFilter::Verdict EncodedFilter::Evaluate(std::string_view partition_key, std::string_view row_key,
                                               std::string_view value) {
  if (!ReadEncodedProperties(value, names_.data(), names_.size(), props_.get(), &timestamp_)) return Verdict::kUnknown;
  partition_key_ = partition_key;
  row_key_ = row_key;
  return model::EvaluateWith(expr_, *this) ? Verdict::kTrue : Verdict::kFalse;
}

bool EncodedFilter::Get(const model::PropertyRef& ref, model::ValueView* out) const {
  switch (ref.system) {
    case model::SystemProperty::kPartitionKey: *out = model::ValueView::String(partition_key_); return true;
    case model::SystemProperty::kRowKey: *out = model::ValueView::String(row_key_); return true;
    case model::SystemProperty::kTimestamp: *out = model::ValueView::DateTime(timestamp_); return true;
    case model::SystemProperty::kNone: break;
  }
  for (size_t i = 0; i < refs_.size(); ++i) {
    if (refs_[i] != &ref) continue;
    const EncodedProperty& p = props_[slot_of_ref_[i]];
    if (!p.found) return false;
    *out = p.view;
    return true;
  }
  return false;  // not a reference of expr_ (not reached)
}

}  // namespace tablestone::storage
