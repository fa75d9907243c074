// The user programs built into the kernel image (user/user.mk generates the
// table), until there is a file system to load them from.
#include "proc/proc.h"

const struct user_program *user_program_find(const char *name)
{
    for (const struct user_program *p = user_programs; p->name; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}
