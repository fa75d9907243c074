// TCP socket options (kernel/uapi/socket.h).
#pragma once
#include <sys/socket.h>
