#include "storage/last_level_filter.h"

namespace tablestone::storage {
namespace {

class LastLevelUnfilteredPolicy final : public rocksdb::FilterPolicy {
 public:
  explicit LastLevelUnfilteredPolicy(double bits_per_key) : bloom_(rocksdb::NewBloomFilterPolicy(bits_per_key)) {}

  const char* Name() const override { return "tablestone.LastLevelUnfilteredPolicy"; }
  // The built-in family's name: the filter blocks are found by it (see the header).
  const char* CompatibilityName() const override { return bloom_->CompatibilityName(); }

  rocksdb::FilterBitsBuilder* GetBuilderWithContext(const rocksdb::FilterBuildingContext& context) const override {
    if (context.reason == rocksdb::TableFileCreationReason::kCompaction && context.is_bottommost &&
        context.level_at_creation > 0) {
      return nullptr;
    }
    return bloom_->GetBuilderWithContext(context);
  }

  rocksdb::FilterBitsReader* GetFilterBitsReader(const rocksdb::Slice& contents) const override {
    return bloom_->GetFilterBitsReader(contents);
  }

 private:
  std::unique_ptr<const rocksdb::FilterPolicy> bloom_;
};

}  // namespace

std::shared_ptr<const rocksdb::FilterPolicy> NewLastLevelUnfilteredPolicy(double bits_per_key) {
  return std::make_shared<LastLevelUnfilteredPolicy>(bits_per_key);
}

}  // namespace tablestone::storage
