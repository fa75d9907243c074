// System-call numbers: the kernel's (Linux x86-64) plus our extensions.
#pragma once
#include "../../../kernel/uapi/unistd.h"
#include "../../../kernel/uapi/ext.h"
#define SYS_posix_spawn __NR_posix_spawn
