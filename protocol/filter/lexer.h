// Lexer for OData v3 $filter text (Learn: querying-tables-and-entities).
//
// Tokens: parentheses, comma, a lone '-' (negation, unsupported), words
// (identifiers and lower-case keywords, told apart by the parser), and
// literals: 'string' (quotes doubled inside), Int32 (`42`), Int64 (`42L`,
// `42l`), Double (`2.5`, `1e3`, `3D`/`3d`, `2M`/`2m`, `2F`/`2f`),
// `datetime'...'`, `guid'...'`, `X'hex'`/`binary'hex'`. Whitespace (spaces,
// tabs) separates tokens and is skipped.
//
// Decisions (docs/compatibility-notes/filter.md): an unsuffixed integer that
// does not fit Int32 is an Int64 if it fits, otherwise a Double; `123L` out of
// Int64 range, a double overflowing to infinity, a datetime with more than 7
// fraction digits, a malformed guid, or an odd number of hex digits is a
// syntax error. A number directly followed by a letter, digit or '_' is a
// syntax error (`12abc`).
//
// Thread safety: a Lexer is a cursor over borrowed text; use one per thread.
#pragma once

#include <cstddef>
#include <string_view>

#include "storage/model/edm.h"

namespace tablestone::protocol::filter {

enum class TokenKind {
  kEnd,
  kError,  // lexical error; `end` is the error position
  kLParen,
  kRParen,
  kComma,
  kMinus,
  kWord,
  kLiteral,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  size_t begin = 0;  // byte offsets into the text
  size_t end = 0;    // one past the token (for kError: where lexing failed)
  std::string_view text;  // the raw token text
  model::EdmValue value;  // kLiteral only
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  // The next token; after kEnd or kError keeps returning the same kind.
  Token Next();

  // The byte at `pos`, or '\0' past the end (the parser uses it to spot
  // function calls: a word directly followed by '(').
  char CharAt(size_t pos) const { return pos < text_.size() ? text_[pos] : '\0'; }

 private:
  Token LexNumber(size_t begin);
  Token LexQuoted(size_t begin, std::string_view prefix);
  Token Error(size_t pos);

  std::string_view text_;
  size_t pos_ = 0;
  bool failed_ = false;
};

// Identifier characters: ASCII letters, digits, '_' and any non-ASCII byte
// (property names may be Unicode C# identifiers).
inline bool IsWordStart(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u >= 0x80;
}
inline bool IsWordChar(char c) { return IsWordStart(c) || (c >= '0' && c <= '9'); }

}  // namespace tablestone::protocol::filter
