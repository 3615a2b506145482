#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>

#include "protocol/batch/multipart.h"

namespace tablestone::protocol::batch {
namespace {

TEST(BatchResponseTest, SuccessShapeMatchesServiceBytes) {
  SubResponse insert;
  insert.status = 204;
  insert.headers = {{"X-Content-Type-Options", "nosniff"},
                    {"Cache-Control", "no-cache"},
                    {"DataServiceVersion", "1.0;"},
                    {"ETag", "W/\"datetime'2021-04-08T00%3A49%3A13.6349993Z'\""}};
  SubResponse del;
  del.status = 204;
  del.headers = {{"Cache-Control", "no-cache"}};
  std::string ct;
  std::string body = WriteBatchResponseWithBoundaries({insert, del}, false, "B", "C", &ct);
  EXPECT_EQ(ct, "multipart/mixed; boundary=batchresponse_B");
  EXPECT_EQ(body,
            "--batchresponse_B\r\n"
            "Content-Type: multipart/mixed; boundary=changesetresponse_C\r\n"
            "\r\n"
            "--changesetresponse_C\r\n"
            "Content-Type: application/http\r\n"
            "Content-Transfer-Encoding: binary\r\n"
            "\r\n"
            "HTTP/1.1 204 No Content\r\n"
            "X-Content-Type-Options: nosniff\r\n"
            "Cache-Control: no-cache\r\n"
            "DataServiceVersion: 1.0;\r\n"
            "ETag: W/\"datetime'2021-04-08T00%3A49%3A13.6349993Z'\"\r\n"
            "\r\n"
            "\r\n"
            "--changesetresponse_C\r\n"
            "Content-Type: application/http\r\n"
            "Content-Transfer-Encoding: binary\r\n"
            "\r\n"
            "HTTP/1.1 204 No Content\r\n"
            "Cache-Control: no-cache\r\n"
            "\r\n"
            "\r\n"
            "--changesetresponse_C--\r\n"
            "--batchresponse_B--\r\n");
}

TEST(BatchResponseTest, FailureCarriesBodyAndContentId) {
  SubResponse err;
  err.status = 409;
  err.content_id = "2";
  err.headers = {{"Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"}};
  err.body = R"({"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"1:x"}}})";
  std::string body = WriteBatchResponseWithBoundaries({err}, false, "B", "C", nullptr);
  EXPECT_NE(body.find("Content-ID: 2\r\n\r\nHTTP/1.1 409 Conflict\r\n"), std::string::npos);
  EXPECT_NE(body.find("\r\n\r\n" + err.body + "\r\n--changesetresponse_C--\r\n--batchresponse_B--\r\n"),
            std::string::npos);
}

TEST(BatchResponseTest, QueryPartSitsDirectlyUnderBatch) {
  SubResponse ok;
  ok.status = 200;
  ok.headers = {{"Content-Type", "application/json"}};
  ok.body = "{}";
  std::string body = WriteBatchResponseWithBoundaries({ok}, true, "B", "C", nullptr);
  EXPECT_EQ(body,
            "--batchresponse_B\r\n"
            "Content-Type: application/http\r\n"
            "Content-Transfer-Encoding: binary\r\n"
            "\r\n"
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: application/json\r\n"
            "\r\n"
            "{}\r\n"
            "--batchresponse_B--\r\n");
}

TEST(BatchResponseTest, RandomBoundariesAreGuidsAndFirstLineIsTheBatchDelimiter) {
  std::string ct1, ct2;
  std::string b1 = WriteBatchResponse({SubResponse{}}, false, &ct1);
  std::string b2 = WriteBatchResponse({SubResponse{}}, false, &ct2);
  EXPECT_NE(ct1, ct2);
  std::smatch m;
  ASSERT_TRUE(std::regex_match(ct1, m,
                               std::regex("multipart/mixed; boundary=batchresponse_([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-"
                                          "[89ab][0-9a-f]{3}-[0-9a-f]{12})")));
  // Go reads the boundary from the first line.
  EXPECT_EQ(b1.substr(0, b1.find("\r\n")), "--batchresponse_" + m[1].str());
  // JS splits on "--changesetresponse_" and expects first and last pieces to be framing only.
  size_t pieces = 0;
  for (size_t p = b1.find("--changesetresponse_"); p != std::string::npos; p = b1.find("--changesetresponse_", p + 1)) {
    ++pieces;
  }
  EXPECT_EQ(pieces, 2u);
}

TEST(BatchResponseTest, EveryLineEndsWithCrlf) {
  std::string ct;
  std::vector<SubResponse> parts(3);
  std::string body = WriteBatchResponse(parts, false, &ct);
  EXPECT_EQ(body.substr(body.size() - 2), "\r\n");
  EXPECT_EQ(std::count(body.begin(), body.end(), '\n'), std::count(body.begin(), body.end(), '\r'));
}

TEST(BatchResponseTest, ReasonPhrases) {
  EXPECT_EQ(ReasonPhrase(201), "Created");
  EXPECT_EQ(ReasonPhrase(204), "No Content");
  EXPECT_EQ(ReasonPhrase(404), "Not Found");
  EXPECT_EQ(ReasonPhrase(412), "Precondition Failed");
  EXPECT_EQ(ReasonPhrase(413), "Request Entity Too Large");
  EXPECT_EQ(ReasonPhrase(799), "Unknown");
}

}  // namespace
}  // namespace tablestone::protocol::batch
