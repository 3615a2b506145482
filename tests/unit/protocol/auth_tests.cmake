# target_sources(unit_protocol PRIVATE <explicit list of auth *_test.cc>)
