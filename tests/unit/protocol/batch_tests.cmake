# target_sources(unit_protocol PRIVATE <explicit list of batch *_test.cc>)
