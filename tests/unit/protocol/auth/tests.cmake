# Auth maths (protocol/auth).
target_sources(unit_protocol PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/bearer_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/hmac_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/sas_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/shared_key_test.cc
)
