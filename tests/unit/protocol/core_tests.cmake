# Core protocol tests (url, route, OData JSON, request options, continuation, error bodies, ACL blob).
target_sources(unit_protocol PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/acl_blob_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/cosmos_token_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/error_body_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/flat_json_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/flavor_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/guid_ascii_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/odata_json_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/odata_writer_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/operation_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/redact_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/request_options_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/route_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/url_test.cc
)
target_link_libraries(unit_protocol PRIVATE nlohmann_json::nlohmann_json)
