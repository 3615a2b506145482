// The export file format (docs/export-format.md): JSON Lines, one section per
// table, each a header line, one line per entity and an end line.
//
//   {"@format":"tablestone-export","@version":1,"@table":"T","@source":"acct"}
//   {"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Int64","N":"9223372036854775807",...}
//   {"@end":"T","@entities":1}
//
// Every non-String property carries its Edm type, so a value reads back exactly
// (Int64 and DateTime as strings, doubles that are whole numbers as "6.0",
// non-finite doubles as "NaN"/"Infinity"/"-Infinity", Binary as base64). An
// entity line is also a valid Insert Entity body. Timestamp and ETag are not
// kept: a target assigns its own.
//
// Pure functions and a small state machine; no I/O. Thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/model/entity.h"

namespace tablestone::tools {

// The version this build writes and the newest it reads.
inline constexpr int kExportFormatVersion = 1;
inline constexpr std::string_view kExportFormatName = "tablestone-export";

struct SectionHeader {
  std::string table;
  std::string source;  // account name of the source (no endpoint, no secret)
  int version = kExportFormatVersion;
};

struct SectionEnd {
  std::string table;
  uint64_t entities = 0;
};

// Each appends one line without its '\n'.
void AppendHeaderLine(const SectionHeader& header, std::string* out);
void AppendEntityLine(const model::Entity& entity, std::string* out);
void AppendEndLine(const SectionEnd& end, std::string* out);

struct DecodedLine {
  enum class Kind { kHeader, kEntity, kEnd };
  Kind kind = Kind::kEntity;
  SectionHeader header;
  model::Entity entity;  // timestamp 0
  SectionEnd end;
};

// Decodes one line (without '\n'). False with a reason (no line number) when
// the line is not JSON, is neither kind of line, names an unknown Edm type,
// holds a value that does not fit its type, or is a header of a format
// version newer than kExportFormatVersion.
bool DecodeLine(std::string_view line, DecodedLine* out, std::string* error);

// Checks the order of a file's lines: header, entities, end, repeated; an end
// line names its section's table and count. Feed every line, then Finish().
class SectionChecker {
 public:
  // Decodes `line` into `out` and checks it against the sections seen so far.
  // The error names the line number.
  bool Feed(std::string_view line, DecodedLine* out, std::string* error);
  // False when the input ended inside a section (a truncated file) or held
  // no section at all.
  bool Finish(std::string* error) const;
  uint64_t line_number() const { return line_; }

 private:
  uint64_t line_ = 0;
  bool in_section_ = false;
  uint64_t sections_ = 0;
  std::string table_;
  uint64_t count_ = 0;
};

}  // namespace tablestone::tools
