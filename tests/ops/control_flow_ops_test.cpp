#include <gtest/gtest.h>

#include "fake_context.h"
