// Random bytes for user space (getrandom, AT_RANDOM): rdseed/rdrand when the CPU
// has them, else a mix of TSC readings. Not a vetted CSPRNG.
#pragma once
#include "kernel.h"

void random_bytes(void *buf, size_t n);
