// Tests for the kernel command line: words, quotes, and init's environment.
#include "ktest/ktest.h"

static bool value_is(const char *line, const char *key, const char *want)
{
    size_t len;
    const char *v = cmdline_find(line, key, &len);
    if (!want)
        return v == NULL;
    return v && len == strlen(want) && strncmp(v, want, len) == 0;
}

KTEST(cmdline_words_and_values)
{
    KCHECK(value_is("test=a,b  init=hello", "test", "a,b"));
    KCHECK(value_is("test=a,b  init=hello", "init", "hello"));
    KCHECK(value_is("  panic=halt ", "panic", "halt"));
    KCHECK(value_is("quiet test=x", "quiet", ""));
    KCHECK(value_is("testing=1", "test", NULL));
    KCHECK(value_is("", "test", NULL));
}

KTEST(cmdline_quotes_keep_spaces)
{
    // The words inside the quotes are not keys of their own.
    const char *line = "RUN=\"echo init=x test=y\" init=real";
    KCHECK(value_is(line, "RUN", "\"echo init=x test=y\""));
    KCHECK(value_is(line, "init", "real"));
    KCHECK(value_is(line, "test", NULL));
    KCHECK(value_is("a=\"unterminated b=c", "b", NULL));
}

KTEST(cmdline_env_for_init)
{
    char buf[128];
    char *envp[8];
    int n = cmdline_env("quiet test=x RUN=\"ls -l /\" =bad A=\"\" B=1", buf, sizeof buf, envp, 8);
    KCHECK_EQ(n, 4);
    KCHECK(strcmp(envp[0], "test=x") == 0);
    KCHECK(strcmp(envp[1], "RUN=ls -l /") == 0);
    KCHECK(strcmp(envp[2], "A=") == 0);
    KCHECK(strcmp(envp[3], "B=1") == 0);
    KCHECK(envp[4] == NULL);
    KCHECK_EQ(cmdline_env("a=1 b=2 c=3", buf, sizeof buf, envp, 3), -1);  // room for 2 + NULL
    KCHECK_EQ(cmdline_env("a=123456789", buf, 8, envp, 8), -1);
    KCHECK_EQ(cmdline_env("", buf, sizeof buf, envp, 8), 0);
    KCHECK(envp[0] == NULL);
}

KTEST(cmdline_numbers)
{
    uint32_t n = 7;
    KCHECK(!cmdline_find_uint("hangcheck=30", "epochticks", &n));
    KCHECK_EQ(n, 7);
    KCHECK(cmdline_find_uint("a=1 epochticks=20 b=2", "epochticks", &n));
    KCHECK_EQ(n, 20);
    KCHECK(cmdline_find_uint("hangcheck=0", "hangcheck", &n));
    KCHECK_EQ(n, 0);
    KCHECK(cmdline_find_uint("hangcheck=12s", "hangcheck", &n)); // digits up to the first other
    KCHECK_EQ(n, 12);
    KCHECK(cmdline_find_uint("hangcheck=99999999999", "hangcheck", &n));
    KCHECK_EQ(n, UINT32_MAX);
}
