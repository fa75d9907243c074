// The auxiliary vector the kernel passes at start-up.
#pragma once
#include <elf.h>
unsigned long getauxval(unsigned long type);
