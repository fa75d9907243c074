// Dotted-quad IPv4 addresses (src/socket.c).
#pragma once
#include <netinet/in.h>
in_addr_t inet_addr(const char *s);
int inet_aton(const char *s, struct in_addr *a);
