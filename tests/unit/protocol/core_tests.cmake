# target_sources(unit_protocol PRIVATE <explicit list of core *_test.cc>)
