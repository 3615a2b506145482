// Line-oriented file I/O for export files, plain or compressed as a whole
// with gzip or zstd. "-" is stdin/stdout. Not thread-safe.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace tablestone::tools {

enum class Compression { kNone, kGzip, kZstd };

// "none"/"gzip"/"zstd"; false for anything else.
bool ParseCompression(std::string_view text, Compression* out);
// By file name: ".gz" -> gzip, ".zst"/".zstd" -> zstd, else none.
Compression CompressionForPath(std::string_view path);

class LineWriter {
 public:
  LineWriter();
  ~LineWriter();
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;

  // Creates (truncates) `path`. False with a reason.
  bool Open(const std::string& path, Compression compression, std::string* error);
  // Appends `line` and '\n'. Errors surface at Close() (and are sticky).
  void WriteLine(std::string_view line);
  // Flushes, ends the compressed stream and closes. False if any write failed:
  // then the file must not be taken as complete.
  bool Close(std::string* error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class LineReader {
 public:
  LineReader();
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // No line of an export file is near this: an entity is at most 1 MiB
  // stored, and its JSON line at most a few times that (every character
  // escaped as \u00XX). A longer line is an error, so a small compressed file
  // cannot make the reader hold an unbounded line in memory.
  static constexpr size_t kDefaultMaxLineBytes = 16u << 20;

  // Opens `path`, detecting gzip and zstd by their magic bytes.
  bool Open(const std::string& path, std::string* error);
  // The next line without its '\n' (a last line without '\n' is returned
  // too). False at the end of input or on an error (see error()), among them
  // a line longer than max_line_bytes. Linear in the input: each byte is
  // searched for '\n' once.
  bool Next(std::string* line);
  void set_max_line_bytes(size_t bytes);
  // Empty unless reading failed (a corrupt compressed stream, an I/O error).
  const std::string& error() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tablestone::tools
