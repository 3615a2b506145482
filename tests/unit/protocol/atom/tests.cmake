# AtomPub payloads (protocol/atom/): reader, writer and their negotiation.
target_sources(unit_protocol PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/atom_reader_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/atom_writer_test.cc
)
