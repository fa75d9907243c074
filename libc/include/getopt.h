// getopt (declared in unistd.h as well).
#pragma once
#include <unistd.h>
