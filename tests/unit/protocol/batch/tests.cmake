# $batch multipart tests (protocol/batch). Fixtures: fixtures/README.md.
target_sources(unit_protocol PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/batch_response_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/multipart_test.cc
)
target_compile_definitions(unit_protocol PRIVATE
  TABLESTONE_BATCH_FIXTURES="${CMAKE_CURRENT_LIST_DIR}/fixtures")
