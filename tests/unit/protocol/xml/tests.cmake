# XML bodies (protocol/xml): the reader, table ACLs, service properties.
target_sources(unit_protocol PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/xml_acl_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/xml_reader_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/xml_service_test.cc
)
