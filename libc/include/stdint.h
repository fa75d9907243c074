// Fixed-width integer types: gcc's freestanding definitions.
#pragma once
#include <stdint-gcc.h>
