// BSD string functions.
#pragma once
#include <stddef.h>
int strcasecmp(const char *a, const char *b);
int strncasecmp(const char *a, const char *b, size_t n);
int ffs(int x);
void bzero(void *d, size_t n);
