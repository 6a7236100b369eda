/* tests/objects/fake_server.h — room tests/objects: the name the provider
 * suites include for the loopback fakes, compiled once in the test library
 * (tests/support/support_fake.h). */
#ifndef ADCP_TESTS_FAKE_SERVER_H
#define ADCP_TESTS_FAKE_SERVER_H

#include "support/support_fake.h"

#endif
