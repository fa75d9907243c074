// Unix-domain socket addresses (kernel/uapi/socket.h).
#pragma once
#include <sys/socket.h>
