#include "tools/line_io.h"

#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace tablestone::tools {

bool ParseCompression(std::string_view text, Compression* out) {
  if (text == "none") *out = Compression::kNone;
  else if (text == "gzip") *out = Compression::kGzip;
  else if (text == "zstd") *out = Compression::kZstd;
  else return false;
  return true;
}

Compression CompressionForPath(std::string_view path) {
  if (path.ends_with(".gz")) return Compression::kGzip;
  if (path.ends_with(".zst") || path.ends_with(".zstd")) return Compression::kZstd;
  return Compression::kNone;
}

namespace {

constexpr size_t kChunk = 1 << 18;

FILE* OpenFile(const std::string& path, bool write, std::string* error) {
  if (path == "-") return write ? stdout : stdin;
  FILE* f = std::fopen(path.c_str(), write ? "wb" : "rb");
  if (f == nullptr) *error = "cannot open '" + path + "': " + std::strerror(errno);
  return f;
}

}  // namespace

// ---- writer ----
// Lines collect in `pending` and go out (compressed) in chunks of kChunk.
struct LineWriter::Impl {
  FILE* file = nullptr;
  bool owns = false;
  Compression compression = Compression::kNone;
  z_stream gz{};
  bool gz_ready = false;
  ZSTD_CCtx* zstd = nullptr;
  std::string pending;
  std::vector<char> out = std::vector<char>(kChunk);
  std::string error;

  void Fail(std::string why) {
    if (error.empty()) error = std::move(why);
  }
  void Put(const char* data, size_t n) {
    if (n > 0 && std::fwrite(data, 1, n, file) != n) Fail(std::string("write failed: ") + std::strerror(errno));
  }
  // Compresses (or copies) `pending`; `finish` ends the stream.
  void Drain(bool finish) {
    if (!error.empty()) return;
    switch (compression) {
      case Compression::kNone:
        Put(pending.data(), pending.size());
        break;
      case Compression::kGzip: {
        gz.next_in = reinterpret_cast<Bytef*>(pending.data());
        gz.avail_in = static_cast<uInt>(pending.size());
        int rc;
        do {
          gz.next_out = reinterpret_cast<Bytef*>(out.data());
          gz.avail_out = static_cast<uInt>(out.size());
          rc = deflate(&gz, finish ? Z_FINISH : Z_NO_FLUSH);
          if (rc == Z_STREAM_ERROR) return Fail("gzip compression failed");
          Put(out.data(), out.size() - gz.avail_out);
        } while (gz.avail_out == 0 || (finish && rc != Z_STREAM_END));
        break;
      }
      case Compression::kZstd: {
        ZSTD_inBuffer in{pending.data(), pending.size(), 0};
        for (;;) {
          ZSTD_outBuffer o{out.data(), out.size(), 0};
          size_t left = ZSTD_compressStream2(zstd, &o, &in, finish ? ZSTD_e_end : ZSTD_e_continue);
          if (ZSTD_isError(left)) return Fail(std::string("zstd compression failed: ") + ZSTD_getErrorName(left));
          Put(out.data(), o.pos);
          if (finish ? left == 0 : in.pos == in.size) break;
        }
        break;
      }
    }
    pending.clear();
  }
};

LineWriter::LineWriter() : impl_(std::make_unique<Impl>()) {}
LineWriter::~LineWriter() {
  std::string ignored;
  if (impl_->file != nullptr) Close(&ignored);
}

bool LineWriter::Open(const std::string& path, Compression compression, std::string* error) {
  impl_->file = OpenFile(path, true, error);
  if (impl_->file == nullptr) return false;
  impl_->owns = path != "-";
  impl_->compression = compression;
  if (compression == Compression::kGzip) {
    // windowBits 15 + 16: a gzip wrapper (gunzip reads it), not raw zlib.
    if (deflateInit2(&impl_->gz, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      *error = "gzip initialisation failed";
      return false;
    }
    impl_->gz_ready = true;
  } else if (compression == Compression::kZstd) {
    impl_->zstd = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(impl_->zstd, ZSTD_c_compressionLevel, 3);
  }
  return true;
}

void LineWriter::WriteLine(std::string_view line) {
  impl_->pending.append(line);
  impl_->pending.push_back('\n');
  if (impl_->pending.size() >= kChunk) impl_->Drain(false);
}

bool LineWriter::Close(std::string* error) {
  Impl& d = *impl_;
  if (d.file == nullptr) {
    *error = d.error.empty() ? "not open" : d.error;
    return false;
  }
  d.Drain(true);
  if (std::fflush(d.file) != 0) d.Fail(std::string("write failed: ") + std::strerror(errno));
  if (d.owns && std::fclose(d.file) != 0) d.Fail(std::string("close failed: ") + std::strerror(errno));
  d.file = nullptr;
  if (d.gz_ready) deflateEnd(&d.gz);
  d.gz_ready = false;
  if (d.zstd != nullptr) ZSTD_freeCCtx(d.zstd);
  d.zstd = nullptr;
  if (!d.error.empty()) {
    *error = d.error;
    return false;
  }
  return true;
}

// ---- reader ----
struct LineReader::Impl {
  FILE* file = nullptr;
  bool owns = false;
  Compression compression = Compression::kNone;
  z_stream gz{};
  bool gz_ready = false;
  bool gz_done = false;
  ZSTD_DCtx* zstd = nullptr;
  size_t zstd_last = 0;  // last ZSTD_decompressStream hint: 0 = at a frame end
  std::vector<char> raw = std::vector<char>(kChunk);
  size_t raw_pos = 0, raw_len = 0;
  std::string text;   // decompressed bytes not yet returned
  size_t text_pos = 0;
  size_t scanned = 0;  // bytes from text_pos on known to hold no '\n'
  size_t max_line = LineReader::kDefaultMaxLineBytes;
  bool eof = false;   // no more decompressed bytes will come
  std::string error;

  ~Impl() {
    if (owns && file != nullptr) std::fclose(file);
    if (gz_ready) inflateEnd(&gz);
    if (zstd != nullptr) ZSTD_freeDCtx(zstd);
  }

  bool FillRaw() {
    if (raw_pos < raw_len) return true;
    raw_len = std::fread(raw.data(), 1, raw.size(), file);
    raw_pos = 0;
    if (raw_len == 0 && std::ferror(file)) error = std::string("read failed: ") + std::strerror(errno);
    return raw_len > 0;
  }

  // Appends more decompressed bytes to `text`; sets eof at the end.
  void More() {
    std::vector<char> out(kChunk);
    if (!FillRaw()) {
      // Input is exhausted, but the decoder may still hold output that did
      // not fit the last call's buffer.
      if (error.empty() && compression == Compression::kGzip && !gz_done) {
        gz.next_in = nullptr;
        gz.avail_in = 0;
        gz.next_out = reinterpret_cast<Bytef*>(out.data());
        gz.avail_out = static_cast<uInt>(out.size());
        int rc = inflate(&gz, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) gz_done = true;
        if (out.size() - gz.avail_out > 0) {
          text.append(out.data(), out.size() - gz.avail_out);
          return;
        }
      }
      if (error.empty() && compression == Compression::kZstd && zstd_last != 0) {
        ZSTD_inBuffer in{nullptr, 0, 0};
        ZSTD_outBuffer o{out.data(), out.size(), 0};
        size_t rc = ZSTD_decompressStream(zstd, &o, &in);
        if (!ZSTD_isError(rc)) zstd_last = rc;
        if (!ZSTD_isError(rc) && o.pos > 0) {
          text.append(out.data(), o.pos);
          return;
        }
      }
      if (compression == Compression::kGzip && !gz_done && error.empty()) {
        error = "gzip stream ends early (truncated file)";
      } else if (compression == Compression::kZstd && zstd_last != 0 && error.empty()) {
        error = "zstd stream ends early (truncated file)";
      }
      eof = true;
      return;
    }
    switch (compression) {
      case Compression::kNone:
        text.append(raw.data() + raw_pos, raw_len - raw_pos);
        raw_pos = raw_len;
        return;
      case Compression::kGzip: {
        if (gz_done) {  // a second gzip member (concatenated files)
          inflateReset(&gz);
          gz_done = false;
        }
        gz.next_in = reinterpret_cast<Bytef*>(raw.data() + raw_pos);
        gz.avail_in = static_cast<uInt>(raw_len - raw_pos);
        gz.next_out = reinterpret_cast<Bytef*>(out.data());
        gz.avail_out = static_cast<uInt>(out.size());
        int rc = inflate(&gz, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
          error = std::string("corrupt gzip data: ") + (gz.msg != nullptr ? gz.msg : "inflate failed");
          eof = true;
          return;
        }
        if (rc == Z_STREAM_END) gz_done = true;
        raw_pos = raw_len - gz.avail_in;
        text.append(out.data(), out.size() - gz.avail_out);
        return;
      }
      case Compression::kZstd: {
        ZSTD_inBuffer in{raw.data() + raw_pos, raw_len - raw_pos, 0};
        ZSTD_outBuffer o{out.data(), out.size(), 0};
        size_t rc = ZSTD_decompressStream(zstd, &o, &in);
        if (ZSTD_isError(rc)) {
          error = std::string("corrupt zstd data: ") + ZSTD_getErrorName(rc);
          eof = true;
          return;
        }
        zstd_last = rc;
        raw_pos += in.pos;
        text.append(out.data(), o.pos);
        return;
      }
    }
  }
};

LineReader::LineReader() : impl_(std::make_unique<Impl>()) {}
LineReader::~LineReader() = default;

bool LineReader::Open(const std::string& path, std::string* error) {
  Impl& d = *impl_;
  d.file = OpenFile(path, false, error);
  if (d.file == nullptr) return false;
  d.owns = path != "-";
  d.FillRaw();
  if (!d.error.empty()) {
    *error = "'" + path + "': " + d.error;  // "read failed: Is a directory" alone named no file
    return false;
  }
  const auto* b = reinterpret_cast<const unsigned char*>(d.raw.data());
  if (d.raw_len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
    d.compression = Compression::kGzip;
    if (inflateInit2(&d.gz, 15 + 16) != Z_OK) {
      *error = "gzip initialisation failed";
      return false;
    }
    d.gz_ready = true;
  } else if (d.raw_len >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) {
    d.compression = Compression::kZstd;
    d.zstd = ZSTD_createDCtx();
  }
  return true;
}

bool LineReader::Next(std::string* line) {
  Impl& d = *impl_;
  for (;;) {
    size_t nl = d.text.find('\n', d.text_pos + d.scanned);
    if (nl != std::string::npos && nl - d.text_pos > d.max_line) nl = std::string::npos;
    if (nl != std::string::npos) {
      line->assign(d.text, d.text_pos, nl - d.text_pos);
      d.text_pos = nl + 1;
      d.scanned = 0;
      return true;
    }
    d.scanned = d.text.size() - d.text_pos;
    if (d.scanned > d.max_line) {
      if (d.error.empty()) {
        d.error = "a line is longer than " + std::to_string(d.max_line) +
                  " bytes (no entity's line is; not an export file?)";
      }
      d.eof = true;
      return false;
    }
    if (d.eof) {
      if (!d.error.empty()) return false;
      if (d.text_pos < d.text.size()) {
        line->assign(d.text, d.text_pos, std::string::npos);
        d.text_pos = d.text.size();
        return true;
      }
      return false;
    }
    if (d.text_pos > 0) {
      d.text.erase(0, d.text_pos);
      d.text_pos = 0;
    }
    d.More();
  }
}

const std::string& LineReader::error() const { return impl_->error; }

void LineReader::set_max_line_bytes(size_t bytes) { impl_->max_line = bytes; }

}  // namespace tablestone::tools
