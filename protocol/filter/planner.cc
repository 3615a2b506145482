#include "protocol/filter/planner.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/model/ordinal.h"

namespace tablestone::protocol::filter {
namespace {

using model::CompareOp;
using model::CompareUtf16Ordinal;
using model::FilterExpr;
using model::FilterNode;
using model::FilterNodeKind;
using model::SystemProperty;

// A cut: a position between keys in (PartitionKey, RowKey) order. Within one
// partition: PartitionStart < {KeyBefore(r), KeyAfter(r)} by r < PartitionEnd.
struct Cut {
  enum Kind : uint8_t { kNegInf, kPartitionStart, kKeyBefore, kKeyAfter, kPartitionEnd, kPosInf };
  Kind kind = kNegInf;
  std::string pk;
  std::string rk;

  static Cut NegInf() { return {kNegInf, {}, {}}; }
  static Cut PosInf() { return {kPosInf, {}, {}}; }
  static Cut Start(const std::string& pk) { return {kPartitionStart, pk, {}}; }
  static Cut End(const std::string& pk) { return {kPartitionEnd, pk, {}}; }
  static Cut Before(const std::string& pk, const std::string& rk) { return {kKeyBefore, pk, rk}; }
  static Cut After(const std::string& pk, const std::string& rk) { return {kKeyAfter, pk, rk}; }
};

int Compare(const Cut& a, const Cut& b) {
  auto outer = [](Cut::Kind k) { return k == Cut::kNegInf ? 0 : (k == Cut::kPosInf ? 2 : 1); };
  if (outer(a.kind) != outer(b.kind)) return outer(a.kind) - outer(b.kind);
  if (outer(a.kind) != 1) return 0;
  if (int c = CompareUtf16Ordinal(a.pk, b.pk); c != 0) return c;
  auto inner = [](Cut::Kind k) {
    return k == Cut::kPartitionStart ? 0 : (k == Cut::kPartitionEnd ? 2 : 1);
  };
  if (inner(a.kind) != inner(b.kind)) return inner(a.kind) - inner(b.kind);
  if (inner(a.kind) != 1) return 0;
  if (int c = CompareUtf16Ordinal(a.rk, b.rk); c != 0) return c;
  return static_cast<int>(a.kind) - static_cast<int>(b.kind);  // before < after
}

// [lo, hi) with lo < hi.
struct Interval {
  Cut lo;
  Cut hi;
};

// Sorted, disjoint, non-adjacent intervals.
using KeySet = std::vector<Interval>;

KeySet All() { return {Interval{Cut::NegInf(), Cut::PosInf()}}; }

void Push(KeySet* set, Cut lo, Cut hi) {
  if (Compare(lo, hi) < 0) set->push_back(Interval{std::move(lo), std::move(hi)});
}

KeySet Union(KeySet a, KeySet b) {
  for (Interval& i : b) a.push_back(std::move(i));
  std::sort(a.begin(), a.end(), [](const Interval& x, const Interval& y) { return Compare(x.lo, y.lo) < 0; });
  KeySet out;
  for (Interval& i : a) {
    if (!out.empty() && Compare(i.lo, out.back().hi) <= 0) {
      if (Compare(i.hi, out.back().hi) > 0) out.back().hi = std::move(i.hi);
    } else {
      out.push_back(std::move(i));
    }
  }
  return out;
}

KeySet Intersect(const KeySet& a, const KeySet& b) {
  KeySet out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const Cut& lo = Compare(a[i].lo, b[j].lo) >= 0 ? a[i].lo : b[j].lo;
    const bool a_ends_first = Compare(a[i].hi, b[j].hi) <= 0;
    const Cut& hi = a_ends_first ? a[i].hi : b[j].hi;
    Push(&out, lo, hi);
    if (a_ends_first) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

// PartitionKey op s.
KeySet PartitionKeySet(CompareOp op, const std::string& s) {
  KeySet out;
  switch (op) {
    case CompareOp::kEq: Push(&out, Cut::Start(s), Cut::End(s)); break;
    case CompareOp::kNe:
      Push(&out, Cut::NegInf(), Cut::Start(s));
      Push(&out, Cut::End(s), Cut::PosInf());
      break;
    case CompareOp::kGt: Push(&out, Cut::End(s), Cut::PosInf()); break;
    case CompareOp::kGe: Push(&out, Cut::Start(s), Cut::PosInf()); break;
    case CompareOp::kLt: Push(&out, Cut::NegInf(), Cut::Start(s)); break;
    case CompareOp::kLe: Push(&out, Cut::NegInf(), Cut::End(s)); break;
  }
  return out;
}

// PartitionKey eq p and RowKey op r.
KeySet RowKeySet(const std::string& p, CompareOp op, const std::string& r) {
  KeySet out;
  switch (op) {
    case CompareOp::kEq: Push(&out, Cut::Before(p, r), Cut::After(p, r)); break;
    case CompareOp::kNe:
      Push(&out, Cut::Start(p), Cut::Before(p, r));
      Push(&out, Cut::After(p, r), Cut::End(p));
      break;
    case CompareOp::kGt: Push(&out, Cut::After(p, r), Cut::End(p)); break;
    case CompareOp::kGe: Push(&out, Cut::Before(p, r), Cut::End(p)); break;
    case CompareOp::kLt: Push(&out, Cut::Start(p), Cut::Before(p, r)); break;
    case CompareOp::kLe: Push(&out, Cut::Start(p), Cut::After(p, r)); break;
  }
  return out;
}

// A key compared with a non-string literal is a type mismatch with a fixed
// answer for every row (storage/model/filter_eval.h).
KeySet MismatchSet(CompareOp op) {
  bool always = op == CompareOp::kNe || op == CompareOp::kLt || op == CompareOp::kLe;
  return always ? All() : KeySet{};
}

bool IsPartitionKeyEq(const FilterNode& n) {
  return n.kind == FilterNodeKind::kCompare && n.property.system == SystemProperty::kPartitionKey &&
         n.op == CompareOp::kEq && n.literal.type == model::EdmType::kString;
}

// More partitions than this in one `or` are not worth a range each for the
// RowKey conditions beside it: the partitions alone bound the scan.
constexpr size_t kMaxPinnedPartitions = 64;

// The partitions one of which holds whenever this node holds: a
// `PartitionKey eq 'p'`, one among the and-ed terms of a conjunction, or the
// union over an `or` whose every branch pins some. False if none is pinned.
bool FindPinnedPartitions(const FilterExpr& ast, int index, std::vector<std::string>* out) {
  const FilterNode& n = ast.nodes[static_cast<size_t>(index)];
  if (IsPartitionKeyEq(n)) {
    out->push_back(n.literal.text);
    return true;
  }
  if (n.kind == FilterNodeKind::kAnd) {
    for (int c : n.children) {
      std::vector<std::string> pinned;
      if (FindPinnedPartitions(ast, c, &pinned)) {
        out->insert(out->end(), pinned.begin(), pinned.end());
        return true;
      }
    }
  }
  if (n.kind == FilterNodeKind::kOr) {
    std::vector<std::string> all;
    for (int c : n.children) {
      if (!FindPinnedPartitions(ast, c, &all) || all.size() > kMaxPinnedPartitions) return false;
    }
    *out = std::move(all);
    return true;
  }
  return false;
}

// `not` over a key compared with a string: the opposite comparison, which
// holds exactly when the original does not (a key always exists and is a
// string). Null for anything else.
std::optional<CompareOp> NegatedKeyCompare(const FilterNode& n) {
  if (n.kind != FilterNodeKind::kCompare || n.literal.type != model::EdmType::kString) return std::nullopt;
  if (n.property.system != SystemProperty::kPartitionKey && n.property.system != SystemProperty::kRowKey) {
    return std::nullopt;
  }
  switch (n.op) {
    case CompareOp::kEq: return CompareOp::kNe;
    case CompareOp::kNe: return CompareOp::kEq;
    case CompareOp::kGt: return CompareOp::kLe;
    case CompareOp::kGe: return CompareOp::kLt;
    case CompareOp::kLt: return CompareOp::kGe;
    case CompareOp::kLe: return CompareOp::kGt;
  }
  return std::nullopt;
}

// The keys `key op s` can match, `partitions` the ones the enclosing
// conjunction pins (null: none).
KeySet KeyCompareSet(SystemProperty key, CompareOp op, const std::string& s,
                     const std::vector<std::string>* partitions) {
  if (key == SystemProperty::kPartitionKey) return PartitionKeySet(op, s);
  if (partitions == nullptr) return All();
  KeySet out;
  for (const std::string& p : *partitions) out = Union(std::move(out), RowKeySet(p, op, s));
  return out;
}

// `partitions`: the partitions the enclosing conjunction pins, or null.
KeySet Plan(const FilterExpr& ast, int index, const std::vector<std::string>* partitions) {
  const FilterNode& n = ast.nodes[static_cast<size_t>(index)];
  switch (n.kind) {
    case FilterNodeKind::kConstant: return n.constant ? All() : KeySet{};
    case FilterNodeKind::kNot: {
      // The complement of a superset is no superset, except for a key
      // comparison, whose plan is exact.
      const FilterNode& child = ast.nodes[static_cast<size_t>(n.children.at(0))];
      if (const std::optional<CompareOp> op = NegatedKeyCompare(child)) {
        return KeyCompareSet(child.property.system, *op, child.literal.text, partitions);
      }
      return All();
    }
    case FilterNodeKind::kBoolProperty:
      // Keys are strings, never Boolean true.
      return n.property.system == SystemProperty::kPartitionKey || n.property.system == SystemProperty::kRowKey
                 ? KeySet{}
                 : All();
    case FilterNodeKind::kCompare: {
      const SystemProperty sys = n.property.system;
      if (sys != SystemProperty::kPartitionKey && sys != SystemProperty::kRowKey) return All();
      if (n.literal.type != model::EdmType::kString) return MismatchSet(n.op);
      return KeyCompareSet(sys, n.op, n.literal.text, partitions);
    }
    case FilterNodeKind::kAnd: {
      std::vector<std::string> own;
      if (FindPinnedPartitions(ast, index, &own)) partitions = &own;
      KeySet result = All();
      for (int c : n.children) {
        result = Intersect(result, Plan(ast, c, partitions));
        if (result.empty()) break;
      }
      return result;
    }
    case FilterNodeKind::kOr: {
      KeySet result;
      for (int c : n.children) {
        result = Union(std::move(result), Plan(ast, c, partitions));
      }
      return result;
    }
  }
  return All();
}

Cut LowerCut(const std::optional<model::KeyBound>& b) {
  if (!b) return Cut::NegInf();
  if (!b->row_key) return b->inclusive ? Cut::Start(b->partition_key) : Cut::End(b->partition_key);
  return b->inclusive ? Cut::Before(b->partition_key, *b->row_key) : Cut::After(b->partition_key, *b->row_key);
}

Cut UpperCut(const std::optional<model::KeyBound>& b) {
  if (!b) return Cut::PosInf();
  if (!b->row_key) return b->inclusive ? Cut::End(b->partition_key) : Cut::Start(b->partition_key);
  return b->inclusive ? Cut::After(b->partition_key, *b->row_key) : Cut::Before(b->partition_key, *b->row_key);
}

std::optional<model::KeyBound> LowerBound(Cut c) {
  switch (c.kind) {
    case Cut::kPartitionStart: return model::KeyBound{std::move(c.pk), std::nullopt, true};
    case Cut::kPartitionEnd: return model::KeyBound{std::move(c.pk), std::nullopt, false};
    case Cut::kKeyBefore: return model::KeyBound{std::move(c.pk), std::move(c.rk), true};
    case Cut::kKeyAfter: return model::KeyBound{std::move(c.pk), std::move(c.rk), false};
    default: return std::nullopt;
  }
}

std::optional<model::KeyBound> UpperBound(Cut c) {
  switch (c.kind) {
    case Cut::kPartitionStart: return model::KeyBound{std::move(c.pk), std::nullopt, false};
    case Cut::kPartitionEnd: return model::KeyBound{std::move(c.pk), std::nullopt, true};
    case Cut::kKeyBefore: return model::KeyBound{std::move(c.pk), std::move(c.rk), false};
    case Cut::kKeyAfter: return model::KeyBound{std::move(c.pk), std::move(c.rk), true};
    default: return std::nullopt;
  }
}

}  // namespace

void PlanScanSpec(const FilterExpr& ast, model::ScanSpec* spec) {
  if (spec->match_nothing) return;
  KeySet plan = Plan(ast, ast.root, nullptr);
  if (!spec->ranges.empty()) {
    KeySet given;
    for (const model::KeyRange& r : spec->ranges) {
      KeySet one;
      Push(&one, LowerCut(r.lower), UpperCut(r.upper));
      given = Union(std::move(given), std::move(one));
    }
    plan = Intersect(plan, given);
  }
  spec->ranges.clear();
  if (plan.empty()) {
    spec->match_nothing = true;
    return;
  }
  if (plan.size() == 1 && plan[0].lo.kind == Cut::kNegInf && plan[0].hi.kind == Cut::kPosInf) return;
  for (Interval& i : plan) {
    spec->ranges.push_back(model::KeyRange{LowerBound(std::move(i.lo)), UpperBound(std::move(i.hi))});
  }
}

}  // namespace tablestone::protocol::filter
