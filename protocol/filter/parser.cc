#include "protocol/filter/parser.h"

#include <optional>
#include <string>
#include <utility>

#include "protocol/filter/lexer.h"
#include "storage/model/limits.h"

namespace tablestone::protocol::filter {
namespace {

using model::CompareOp;
using model::FilterExpr;
using model::FilterNode;
using model::FilterNodeKind;
using model::Mirror;
using model::PropertyRef;
using model::SystemProperty;

bool IsKeyword(std::string_view w) {
  static constexpr std::string_view kKeywords[] = {"and", "or",  "not", "eq",  "ne",  "gt",   "ge",    "lt",  "le",
                                                   "add", "sub", "mul", "div", "mod", "true", "false", "null"};
  for (std::string_view k : kKeywords) {
    if (w == k) return true;
  }
  return false;
}

std::optional<CompareOp> CompareOpFromWord(std::string_view w) {
  if (w == "eq") return CompareOp::kEq;
  if (w == "ne") return CompareOp::kNe;
  if (w == "gt") return CompareOp::kGt;
  if (w == "ge") return CompareOp::kGe;
  if (w == "lt") return CompareOp::kLt;
  if (w == "le") return CompareOp::kLe;
  return std::nullopt;
}

// The service names the operator the way .NET's ExpressionType does.
std::string_view NullOperatorName(CompareOp op) {
  switch (op) {
    case CompareOp::kLt: return "LessThan";
    case CompareOp::kLe: return "LessThanOrEqual";
    case CompareOp::kGt: return "GreaterThan";
    case CompareOp::kGe: return "GreaterThanOrEqual";
    default: return "Equal";
  }
}

PropertyRef MakePropertyRef(std::string_view name) {
  PropertyRef ref;
  ref.name = std::string(name);
  if (name == "PartitionKey") {
    ref.system = SystemProperty::kPartitionKey;
  } else if (name == "RowKey") {
    ref.system = SystemProperty::kRowKey;
  } else if (name == "Timestamp") {
    ref.system = SystemProperty::kTimestamp;
  }
  ref.is_table_name = name == "TableName";
  return ref;
}

// What a sub-expression turned out to be, before it is known whether it is
// used as a boolean or as a comparison operand.
struct Operand {
  enum class Kind { kBool, kProperty, kLiteral, kNull, kOther };
  Kind kind = Kind::kOther;  // kOther: unsupported construct (error recorded) or parse failure
  int node = -1;             // kBool
  std::string_view name;     // kProperty
  model::EdmValue literal;   // kLiteral
  size_t end = 0;            // byte offset just past the operand
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), lexer_(text) {}

  ApiResult<std::unique_ptr<FilterExpr>> Run() {
    ast_ = std::make_unique<FilterExpr>();
    Advance();
    if (tok_.kind == TokenKind::kEnd) {  // empty or all whitespace: no filter
      ast_->root = Constant(true);
      return std::move(ast_);
    }
    Operand top = ParseOr();
    if (!failed() && tok_.kind != TokenKind::kEnd) Fail(tok_.end);
    if (!failed()) ast_->root = ToBool(std::move(top));
    if (fatal_) return *fatal_;
    if (semantic_) return *semantic_;
    if (ast_->comparison_count > model::kMaxFilterComparisons) return ApiError::InvalidInput();
    return std::move(ast_);
  }

 private:
  // ---- error bookkeeping ----
  bool failed() const { return fatal_.has_value(); }
  void Fail(size_t byte_pos) {
    if (!fatal_) fatal_ = SyntaxError(text_, byte_pos);
  }
  void Unsupported(ApiError error) {
    if (!semantic_) semantic_ = std::move(error);
  }
  // Bounds recursion; every successful Enter() is paired with a Leave().
  bool Enter() {
    if (++depth_ > kMaxNestingDepth) {
      if (!fatal_) fatal_ = ApiError::InvalidInput();
      return false;
    }
    return true;
  }
  void Leave() { --depth_; }

  void Advance() {
    tok_ = lexer_.Next();
    if (tok_.kind == TokenKind::kError) Fail(tok_.end);
  }
  bool AtWord(std::string_view w) const { return tok_.kind == TokenKind::kWord && tok_.text == w; }

  // ---- AST construction ----
  int AddNode(FilterNode node) {
    ast_->nodes.push_back(std::move(node));
    return static_cast<int>(ast_->nodes.size() - 1);
  }
  int Constant(bool value) {
    FilterNode n;
    n.kind = FilterNodeKind::kConstant;
    n.constant = value;
    return AddNode(std::move(n));
  }
  Operand BoolOperand(int node) {
    Operand o;
    o.kind = Operand::Kind::kBool;
    o.node = node;
    o.end = tok_.begin;
    return o;
  }

  // Uses an operand as a boolean expression.
  int ToBool(Operand&& o) {
    switch (o.kind) {
      case Operand::Kind::kBool: return o.node;
      case Operand::Kind::kProperty: {
        FilterNode n;
        n.kind = FilterNodeKind::kBoolProperty;
        n.property = MakePropertyRef(o.name);
        ++ast_->comparison_count;
        return AddNode(std::move(n));
      }
      case Operand::Kind::kLiteral:
        if (o.literal.type == model::EdmType::kBoolean) return Constant(o.literal.bool_value());
        Fail(o.end);  // `5` or `'x'` where a boolean is due
        return Constant(false);
      case Operand::Kind::kNull: Fail(o.end); return Constant(false);
      case Operand::Kind::kOther: return Constant(false);  // error already recorded
    }
    return Constant(false);
  }

  int MakeComparison(Operand&& left, CompareOp op, Operand&& right) {
    using K = Operand::Kind;
    if (left.kind == K::kNull || right.kind == K::kNull) {
      // Learn: querying-tables-and-entities: eq/ne null is a plain InvalidInput; ordering against null names the
      // operator.
      if (op == CompareOp::kEq || op == CompareOp::kNe) {
        Unsupported(ApiError::InvalidInput());
      } else {
        Unsupported(ApiError::InvalidInput("The operator '" + std::string(NullOperatorName(op)) +
                                           "' is not supported for the 'null' literal; only equality "
                                           "checks are supported."));
      }
      return Constant(false);
    }
    if (left.kind == K::kOther || right.kind == K::kOther) return Constant(false);
    // Property vs property, constant vs constant, and boolean sub-expressions
    // as operands: the service answers 501 (Learn: querying-tables-and-entities).
    bool left_prop = left.kind == K::kProperty;
    bool right_prop = right.kind == K::kProperty;
    bool left_lit = left.kind == K::kLiteral;
    bool right_lit = right.kind == K::kLiteral;
    if (!((left_prop && right_lit) || (left_lit && right_prop))) {
      Unsupported(ApiError::NotImplemented());
      return Constant(false);
    }
    FilterNode n;
    n.kind = FilterNodeKind::kCompare;
    if (left_prop) {
      n.property = MakePropertyRef(left.name);
      n.op = op;
      n.literal = std::move(right.literal);
    } else {
      n.property = MakePropertyRef(right.name);
      n.op = Mirror(op);
      n.literal = std::move(left.literal);
    }
    ++ast_->comparison_count;
    return AddNode(std::move(n));
  }

  // ---- grammar ----
  Operand ParseOr() { return ParseChain("or", FilterNodeKind::kOr, &Parser::ParseAnd); }
  Operand ParseAnd() { return ParseChain("and", FilterNodeKind::kAnd, &Parser::ParseNot); }

  Operand ParseChain(std::string_view keyword, FilterNodeKind kind, Operand (Parser::*sub)()) {
    Operand first = (this->*sub)();
    if (failed() || !AtWord(keyword)) return first;
    FilterNode n;
    n.kind = kind;
    n.children.push_back(ToBool(std::move(first)));
    while (!failed() && AtWord(keyword)) {
      Advance();
      if (failed()) break;
      Operand next = (this->*sub)();
      if (failed()) break;
      n.children.push_back(ToBool(std::move(next)));
    }
    if (failed()) return {};
    return BoolOperand(AddNode(std::move(n)));
  }

  Operand ParseNot() {
    if (!AtWord("not")) return ParseComparison();
    if (!Enter()) return {};
    Advance();
    Operand inner = failed() ? Operand{} : ParseNot();
    Leave();
    if (failed()) return {};
    FilterNode n;
    n.kind = FilterNodeKind::kNot;
    n.children.push_back(ToBool(std::move(inner)));
    return BoolOperand(AddNode(std::move(n)));
  }

  Operand ParseComparison() {
    Operand left = ParseAdditive();
    if (failed() || tok_.kind != TokenKind::kWord) return left;
    std::optional<CompareOp> op = CompareOpFromWord(tok_.text);
    if (!op) return left;
    Advance();
    if (failed()) return {};
    Operand right = ParseAdditive();
    if (failed()) return {};
    int node = MakeComparison(std::move(left), *op, std::move(right));
    // `a eq 1 eq 2`: comparisons do not chain.
    if (tok_.kind == TokenKind::kWord && CompareOpFromWord(tok_.text)) {
      Fail(tok_.end);
      return {};
    }
    return BoolOperand(node);
  }

  Operand ParseAdditive() {
    Operand left = ParseMultiplicative();
    while (!failed() && (AtWord("add") || AtWord("sub"))) {
      Unsupported(ApiError::NotImplemented());  // arithmetic (Learn: querying-tables-and-entities)
      Advance();
      if (failed()) break;
      ParseMultiplicative();
      left = Operand{};
    }
    return left;
  }

  Operand ParseMultiplicative() {
    Operand left = ParseUnary();
    while (!failed() && (AtWord("mul") || AtWord("div") || AtWord("mod"))) {
      Unsupported(ApiError::NotImplemented());
      Advance();
      if (failed()) break;
      ParseUnary();
      left = Operand{};
    }
    return left;
  }

  Operand ParseUnary() {
    if (tok_.kind != TokenKind::kMinus) return ParsePrimary();
    Unsupported(ApiError::NotImplemented());  // negation of an expression is arithmetic
    if (!Enter()) return {};
    Advance();
    if (!failed()) ParseUnary();
    Leave();
    return {};
  }

  Operand ParsePrimary() {
    Operand o;
    switch (tok_.kind) {
      case TokenKind::kLParen: {
        if (!Enter()) return {};
        Advance();
        Operand inner = failed() ? Operand{} : ParseOr();
        Leave();
        if (failed()) return {};
        if (tok_.kind != TokenKind::kRParen) {
          Fail(tok_.end);
          return {};
        }
        inner.end = tok_.end;
        Advance();
        return inner;
      }
      case TokenKind::kLiteral:
        o.kind = Operand::Kind::kLiteral;
        o.literal = std::move(tok_.value);
        o.end = tok_.end;
        Advance();
        return o;
      case TokenKind::kWord: break;
      default: Fail(tok_.end); return {};
    }
    const std::string_view word = tok_.text;
    o.end = tok_.end;
    if (word == "true" || word == "false") {
      o.kind = Operand::Kind::kLiteral;
      o.literal = model::EdmValue::Boolean(word == "true");
      Advance();
      return o;
    }
    if (word == "null") {
      o.kind = Operand::Kind::kNull;
      Advance();
      return o;
    }
    if (IsKeyword(word)) {  // an operator where an operand is due
      Fail(tok_.end);
      return {};
    }
    if (lexer_.CharAt(tok_.end) == '(') return ParseFunctionCall();
    o.kind = Operand::Kind::kProperty;
    o.name = word;
    Advance();
    return o;
  }

  // startswith(...), substringof(...), tolower(...), any unknown name(...):
  // the service implements no functions (501). The arguments are still
  // parsed so that a later syntax error is reported as such.
  Operand ParseFunctionCall() {
    Unsupported(ApiError::NotImplemented());
    Advance();  // the name
    if (failed()) return {};
    if (!Enter()) return {};
    Advance();  // '('
    if (!failed() && tok_.kind != TokenKind::kRParen) {
      ParseOr();
      while (!failed() && tok_.kind == TokenKind::kComma) {
        Advance();
        if (!failed()) ParseOr();
      }
    }
    Leave();
    if (failed()) return {};
    if (tok_.kind != TokenKind::kRParen) {
      Fail(tok_.end);
      return {};
    }
    Advance();
    return {};
  }

  std::string_view text_;
  Lexer lexer_;
  Token tok_;
  std::unique_ptr<FilterExpr> ast_;
  std::optional<ApiError> fatal_;     // syntax error or limit: reported first
  std::optional<ApiError> semantic_;  // first unsupported construct / null comparison
  int depth_ = 0;
};

}  // namespace

ApiError SyntaxError(std::string_view text, size_t byte_pos) {
  if (byte_pos > text.size()) byte_pos = text.size();
  size_t position = model::Utf16Length(text.substr(0, byte_pos));
  return ApiError::InvalidInput("Syntax error at position " + std::to_string(position) + " in '" +
                                std::string(text) + "'.");
}

ApiResult<std::unique_ptr<FilterExpr>> ParseFilter(std::string_view text) {
  if (text.size() > kMaxFilterBytes) return ApiError::InvalidInput();
  Parser parser(text);
  return parser.Run();
}

}  // namespace tablestone::protocol::filter
