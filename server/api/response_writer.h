// The body of a success answer in the format the request negotiated: OData
// JSON at its metadata level, or AtomPub for a version before 2015-12-11 that
// asked for it (protocol::NegotiateMetadata). A handler picks its writer once
// from the negotiated level (WriterFor) and calls it without asking which
// format it is; the error bodies keep their own negotiation (response.h,
// WriteError).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/odata_writer.h"
#include "protocol/request_options.h"
#include "server/http/handler.h"
#include "storage/model/entity.h"

namespace tablestone::api {

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;

  // One entity (Get Entity) as the body, with its status and the format's
  // headers (response.h: WriteJson, WriteAtom).
  virtual void Entity(http::Response& response, unsigned status, const model::Entity& entity,
                      const protocol::EntityWriteContext& ctx) const = 0;
  // A page of entities. rendered[i], when present and not empty, is entity
  // i's JSON object kept by the scan cache (model::RowRenderer; a scan is
  // given a renderer only at the JSON levels that keep rows, so an Atom page
  // has none).
  virtual void EntityFeed(http::Response& response, const std::vector<model::Entity>& entities,
                          const std::vector<std::string_view>& rendered,
                          const protocol::EntityWriteContext& ctx) const = 0;
  // One table (Create Table's echo, Get Table).
  virtual void TableEntry(http::Response& response, unsigned status, std::string_view table,
                          std::string_view base_url, std::string_view account) const = 0;
  // A page of table names (Query Tables).
  virtual void TableFeed(http::Response& response, const std::vector<std::string>& tables,
                         std::string_view base_url, std::string_view account) const = 0;
  // A body this format already rendered (RenderWriteSuccess) as one entity.
  virtual void RenderedEntity(http::Response& response, unsigned status, std::string body) const = 0;
  // The Content-Type of one entity's body (a $batch part's header).
  virtual std::string EntityContentType() const = 0;
};

// The writer of a negotiated level; a static instance, valid forever.
const ResponseWriter& WriterFor(protocol::MetadataLevel level);

}  // namespace tablestone::api
