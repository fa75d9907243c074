// System-call numbers: the kernel's (Linux x86-64) plus our extensions, as
// __NR_name and SYS_name. The SYS_ names are generated from the kernel's
// header at build time (libc/libc.mk), so they never fall behind it.
#pragma once
#include "../../../kernel/uapi/unistd.h"
#include "../../../kernel/uapi/ext.h"
#include <bits/syscall_names.h>
#define SYS_posix_spawn __NR_posix_spawn
