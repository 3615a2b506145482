// Recursive-descent parser for $filter (Learn: querying-tables-and-entities).
//
// Grammar actually parsed (wider than what the service evaluates, so that the
// unsupported OData constructs get the service's 501 rather than a syntax
// error, and so that a syntax error anywhere wins over them):
//
//   filter   := orExpr END
//   orExpr   := andExpr ('or' andExpr)*
//   andExpr  := notExpr ('and' notExpr)*
//   notExpr  := 'not' notExpr | relExpr
//   relExpr  := addExpr [compOp addExpr]           compOp: eq ne gt ge lt le
//   addExpr  := mulExpr (('add'|'sub') mulExpr)*   -> 501
//   mulExpr  := unary (('mul'|'div'|'mod') unary)* -> 501
//   unary    := '-' unary (-> 501) | primary
//   primary  := '(' orExpr ')' | literal | 'null' | word '(' [orExpr (',' orExpr)*] ')' (-> 501)
//             | propertyName
//
// Precedence is or < and < not < comparison, as OData v3 and Learn: querying-tables-and-entities
// fix it (so `not a eq 1` is `not (a eq 1)`). Keywords are lower case only;
// `AND` is a property name and thus a syntax error where an operator is due.
//
// Errors, in priority order: syntax errors and limits (400 InvalidInput);
// then the first of null comparisons (400) and unsupported constructs (501)
// in text order; then more than model::kMaxFilterComparisons comparisons.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "protocol/api_error.h"
#include "storage/model/filter_expr.h"

namespace tablestone::protocol::filter {

// Longer input is rejected before lexing. The URL itself limits a query
// string to about 32 KiB at the service; legitimate filters (at most 15
// comparisons with keys of at most 1 KiB) stay far below.
inline constexpr size_t kMaxFilterBytes = 32 * 1024;
// Parentheses, `not` and other nesting beyond this depth is rejected; it
// bounds the parser's and the evaluator's recursion.
inline constexpr int kMaxNestingDepth = 64;

// Parses `text` into the expression tree the scan evaluates
// (storage/model/filter_expr.h); never throws, never crashes. An empty or
// all-whitespace text yields the constant `true`.
ApiResult<std::unique_ptr<model::FilterExpr>> ParseFilter(std::string_view text);

// "Syntax error at position N in '<text>'." with N counted in UTF-16 code
// units up to `byte_pos`, as .NET reports positions.
ApiError SyntaxError(std::string_view text, size_t byte_pos);

}  // namespace tablestone::protocol::filter
