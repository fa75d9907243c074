// assert's failure report.
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

_Noreturn void __assert_fail(const char *expr, const char *file, int line, const char *func)
{
    fprintf(stderr, "%s: %s:%d: %s: assertion '%s' failed\n",
            program_invocation_short_name ? program_invocation_short_name : "?",
            file, line, func, expr);
    abort();
}
