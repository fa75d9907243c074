// lwIP's configuration for the kernel (lwIP reads it through lwip/opt.h; every
// option not set here keeps opt.h's default).
//
// The stack runs with threads (NO_SYS=0): a tcpip thread owns the protocol
// state, and callers of the netconn API take the core lock themselves
// (LWIP_TCPIP_CORE_LOCKING) instead of sending each call to that thread as a
// message. IPv4 only, TCP, UDP, ICMP, raw and ARP over Ethernet; no DHCP, no
// DNS, no lwIP sockets (the kernel's own system calls will use netconns).
//
// Memory: lwIP's fixed-size objects (PCBs, segments, netbufs, messages, timers,
// pool pbufs) come from its own static pools, whose exhaustion every caller
// handles as ERR_MEM; variable-size buffers (PBUF_RAM) from kmalloc. Pools
// rather than kmalloc for the fixed objects because lwIP allocates a timer
// object each time a cyclic timer fires, and asserts that this never fails:
// its pool is sized exactly, so kernel memory running out cannot stop (or
// panic) the stack, and an idle stack allocates no kernel memory.
#pragma once

#define NO_SYS 0
#define SYS_LIGHTWEIGHT_PROT 1
#define LWIP_TCPIP_CORE_LOCKING 1
#define LWIP_TCPIP_CORE_LOCKING_INPUT 0

// Memory: the heap is the kernel's (port/arch/cc.h maps mem_clib_* to
// kmalloc/kfree); the pools' sizes bound what the stack can hold at once.
#define MEM_LIBC_MALLOC 1
#define MEMP_MEM_MALLOC 0
#define MEM_ALIGNMENT 16
#define MEMP_NUM_PBUF 256
#define MEMP_NUM_RAW_PCB 16
#define MEMP_NUM_UDP_PCB 64
#define MEMP_NUM_TCP_PCB 128
#define MEMP_NUM_TCP_PCB_LISTEN 32
#define MEMP_NUM_TCP_SEG 1024
#define MEMP_NUM_REASSDATA 8
#define IP_REASS_MAX_PBUFS 64
#define MEMP_NUM_FRAG_PBUF 32
#define MEMP_NUM_ARP_QUEUE 64
#define MEMP_NUM_NETBUF 256
#define MEMP_NUM_NETCONN (MEMP_NUM_RAW_PCB + MEMP_NUM_UDP_PCB + MEMP_NUM_TCP_PCB + \
                          MEMP_NUM_TCP_PCB_LISTEN)
#define MEMP_NUM_TCPIP_MSG_API 64
#define MEMP_NUM_TCPIP_MSG_INPKT 256
#define PBUF_POOL_SIZE 256

// Protocols.
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_ICMP 1
#define LWIP_RAW 1
#define LWIP_UDP 1
#define LWIP_TCP 1
#define LWIP_DHCP 0
#define LWIP_AUTOIP 0
#define LWIP_IGMP 0
#define LWIP_DNS 0
#define IP_REASSEMBLY 1
#define IP_FRAG 1

// The loopback interface (127.0.0.1, "lo0"), and loopback of packets a netif
// sends to its own address; delivered through the tcpip thread.
#define LWIP_NETIF_LOOPBACK 1
#define LWIP_HAVE_LOOPIF 1
#define LWIP_LOOPBACK_MAX_PBUFS 0

// TCP: windows and buffers for a fast local link, sized like a small Linux
// socket (the loopback interface has no MTU limit: segments are TCP_MSS).
#define TCP_MSS 1460
#define TCP_WND (32 * TCP_MSS)
#define TCP_SND_BUF (32 * TCP_MSS)
#define TCP_SND_QUEUELEN (4 * TCP_SND_BUF / TCP_MSS)
#define TCP_QUEUE_OOSEQ 1
#define LWIP_TCP_KEEPALIVE 1
#define SO_REUSE 1 // SO_REUSEADDR (the socket layer sets SOF_REUSEADDR)
#define IP_DEFAULT_TTL 64 // Linux's (net.ipv4.ip_default_ttl), which IP_TTL reports
#define TCP_LISTEN_BACKLOG 1

// The netconn API and its receive queues.
#define LWIP_NETCONN 1
#define LWIP_SOCKET 0
#define LWIP_SO_RCVTIMEO 1
#define LWIP_SO_SNDTIMEO 1
#define LWIP_SO_RCVBUF 1
#define LWIP_NETCONN_FULLDUPLEX 0
#define TCPIP_MBOX_SIZE 256
#define DEFAULT_RAW_RECVMBOX_SIZE 64
#define DEFAULT_UDP_RECVMBOX_SIZE 64
#define DEFAULT_TCP_RECVMBOX_SIZE 64
#define DEFAULT_ACCEPTMBOX_SIZE 64
#define TCPIP_THREAD_NAME "tcpip"

// No statistics, no debug output (LWIP_DEBUG undefined); assertions stay on.
#define LWIP_STATS 0

// err_to_errno gives Linux's error numbers.
#define LWIP_ERRNO_INCLUDE "uapi/errno.h"
