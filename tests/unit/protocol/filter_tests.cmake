# target_sources(unit_protocol PRIVATE <explicit list of filter *_test.cc>)
