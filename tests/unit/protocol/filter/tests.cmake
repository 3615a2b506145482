# Owner of protocol/filter: its unit tests in unit_protocol, plus a micro
# benchmark executable (not registered with CTest).
target_sources(unit_protocol PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/filter_evaluator_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/filter_lexer_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/filter_parser_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/filter_planner_test.cc
)

add_executable(filter_eval_bench ${CMAKE_CURRENT_LIST_DIR}/filter_eval_bench.cc)
target_link_libraries(filter_eval_bench PRIVATE tablestone_protocol)
