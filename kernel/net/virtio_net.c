// A virtio-net driver (virtio 1.x, PCI, modern interface only: QEMU's
// virtio-net-pci-non-transitional, 1af4:1041) as an lwIP network interface,
// with the static address of QEMU's user network: 10.0.2.15/24, gateway
// 10.0.2.2.
//
// One receive queue and one transmit queue (split rings of QSIZE entries),
// each descriptor with a buffer of its own, so no descriptor chains. Only
// VIRTIO_F_VERSION_1 and VIRTIO_NET_F_MAC are negotiated: no offloads, no
// merged receive buffers, so every frame fits one BUF_SIZE buffer after the
// 12-byte virtio-net header.
//
// Receiving: the device raises one MSI-X vector (T_NET, on the CPU that
// started the driver) per used receive buffer; the handler copies each frame
// into a pbuf, hands it to lwIP's tcpip thread (tcpip_input only queues it)
// and gives the buffer back to the device. Nothing else runs there.
// Sending: lwIP calls vnet_linkoutput with its core lock held, which
// serialises senders; completed transmit buffers are taken back on the next
// send, so the transmit queue needs no interrupt.
#include "kernel.h"
#include "mm/mm.h"
#include "net/net.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "x86/pci.h"
#include "x86/smp.h"
#include "x86/trap.h"

#include "lwip/etharp.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/tcpip.h"

#define VIRTIO_VENDOR 0x1af4
#define VIRTIO_NET_MODERN 0x1041

// Virtio PCI capability types (struct virtio_pci_cap.cfg_type).
#define VIRTIO_CAP_COMMON 1
#define VIRTIO_CAP_NOTIFY 2
#define VIRTIO_CAP_DEVICE 4

// Device status bits.
#define STATUS_ACKNOWLEDGE 1
#define STATUS_DRIVER 2
#define STATUS_DRIVER_OK 4
#define STATUS_FEATURES_OK 8

#define F_NET_MAC 5           // the device config holds the MAC address
#define F_VERSION_1 32        // modern interface
#define NO_VECTOR 0xffff
#define DESC_F_WRITE 2        // the device writes this buffer
#define AVAIL_F_NO_INTERRUPT 1

#define QSIZE 128
#define BUF_SIZE 2048
#define BUFS_PER_PAGE ((int)(PGSIZE / BUF_SIZE))
#define NET_HDR 12            // struct virtio_net_hdr with num_buffers (version 1)
#define RXQ 0
#define TXQ 1

// The common configuration structure (virtio 1.x, 4.1.4.3), in BAR memory.
struct common_cfg {
    uint32_t device_feature_select;
    uint32_t device_feature;
    uint32_t driver_feature_select;
    uint32_t driver_feature;
    uint16_t msix_config;
    uint16_t num_queues;
    uint8_t device_status;
    uint8_t config_generation;
    uint16_t queue_select;
    uint16_t queue_size;
    uint16_t queue_msix_vector;
    uint16_t queue_enable;
    uint16_t queue_notify_off;
    uint32_t queue_desc_lo, queue_desc_hi; // 64-bit fields as two 32-bit halves:
    uint32_t queue_driver_lo, queue_driver_hi; // the widest access every device
    uint32_t queue_device_lo, queue_device_hi; // must accept
};
_Static_assert(sizeof(struct common_cfg) == 56, "virtio_pci_common_cfg is 56 bytes");

struct vq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct vq_avail {
    uint16_t flags;
    uint16_t idx;
    uint16_t ring[QSIZE];
};

struct vq_used {
    uint16_t flags;
    uint16_t idx;
    struct {
        uint32_t id;
        uint32_t len;
    } ring[QSIZE];
};

// One split virtqueue and its buffers. Receive queue: [i] fields set up once,
// the rest touched only by the interrupt handler. Transmit queue: under
// lwIP's core lock.
struct vq {
    struct vq_desc *desc;      // [i] one page each
    struct vq_avail *avail;    // [i]
    struct vq_used *used;      // [i]
    uint8_t *buf[QSIZE];       // [i] descriptor i's buffer
    volatile uint16_t *notify; // [i] this queue's notification register
    uint16_t avail_idx;        // next avail->idx to publish
    uint16_t used_idx;         // used entries consumed so far
    uint16_t free[QSIZE];      // transmit: descriptors not in flight
    int nfree;
};

static struct {
    struct pci_dev pci;
    volatile struct common_cfg *common;
    struct vq rx, tx;
    uint8_t mac[6];
    struct netif netif;
} vnet;

static void *map_cap(const struct pci_dev *d, int cap, uint32_t *len)
{
    uint64_t bar = pci_bar(d, pci_read8(d, cap + 4));
    uint32_t off = pci_read32(d, cap + 8);
    *len = pci_read32(d, cap + 12);
    return bar ? mmio_map(bar + off, *len) : NULL;
}

// Allocates queue q's ring and buffers and tells the device where they are.
static int vq_setup(struct vq *q, int index, uint16_t vector, volatile uint8_t *notify_base,
                    uint32_t notify_mult)
{
    volatile struct common_cfg *c = vnet.common;
    c->queue_select = (uint16_t)index;
    if (c->queue_size < QSIZE)
        return -1;
    q->desc = page_alloc_zeroed();
    q->avail = page_alloc_zeroed();
    q->used = page_alloc_zeroed();
    if (!q->desc || !q->avail || !q->used)
        return -1;
    for (int i = 0; i < QSIZE; i += BUFS_PER_PAGE) {
        uint8_t *page = page_alloc_zeroed();
        if (!page)
            return -1;
        for (int j = 0; j < BUFS_PER_PAGE; j++)
            q->buf[i + j] = page + j * BUF_SIZE;
    }
    c->queue_size = QSIZE;
    c->queue_desc_lo = (uint32_t)V2P(q->desc);
    c->queue_desc_hi = (uint32_t)(V2P(q->desc) >> 32);
    c->queue_driver_lo = (uint32_t)V2P(q->avail);
    c->queue_driver_hi = (uint32_t)(V2P(q->avail) >> 32);
    c->queue_device_lo = (uint32_t)V2P(q->used);
    c->queue_device_hi = (uint32_t)(V2P(q->used) >> 32);
    c->queue_msix_vector = vector;
    if (c->queue_msix_vector != vector)
        return -1; // the device could not take the vector
    q->notify = (volatile uint16_t *)(notify_base + c->queue_notify_off * notify_mult);
    c->queue_enable = 1;
    return 0;
}

// Publishes descriptor id on q's available ring (made visible by vq_kick).
static void vq_push(struct vq *q, uint16_t id)
{
    q->avail->ring[q->avail_idx % QSIZE] = id;
    q->avail_idx++;
}

static void vq_kick(struct vq *q, int index)
{
    store_release(&q->avail->idx, q->avail_idx);
    fence(); // the index is visible before the device hears of it
    *q->notify = (uint16_t)index;
}

// ---- receiving (interrupt handler) -----------------------------------------

static void vnet_intr(struct trapframe *tf)
{
    (void)tf;
    struct vq *q = &vnet.rx;
    uint16_t end = load_acquire(&q->used->idx);
    bool gave_back = false;
    while (q->used_idx != end) {
        uint32_t id = q->used->ring[q->used_idx % QSIZE].id % QSIZE;
        uint32_t len = q->used->ring[q->used_idx % QSIZE].len;
        q->used_idx++;
        if (len > NET_HDR && len <= BUF_SIZE) {
            u16_t n = (u16_t)(len - NET_HDR);
            struct pbuf *p = pbuf_alloc(PBUF_RAW, n, PBUF_POOL);
            // No pbuf: the frame is dropped, as a full NIC would drop it.
            if (p) {
                pbuf_take(p, q->buf[id] + NET_HDR, n);
                if (vnet.netif.input(p, &vnet.netif) != ERR_OK)
                    pbuf_free(p);
            }
        }
        vq_push(q, (uint16_t)id);
        gave_back = true;
    }
    if (gave_back)
        vq_kick(q, RXQ);
    lapic_eoi();
}

// Before the first frame: from then on only the interrupt handler touches the
// receive queue (the device uses a buffer only after this publishes it).
static void rx_fill(void)
{
    struct vq *q = &vnet.rx;
    for (uint16_t i = 0; i < QSIZE; i++) {
        q->desc[i] = (struct vq_desc){.addr = V2P(q->buf[i]), .len = BUF_SIZE, .flags = DESC_F_WRITE};
        vq_push(q, i);
    }
    vq_kick(q, RXQ);
}

// ---- sending (lwIP's core lock held) ------------------------------------------

static void tx_reclaim(struct vq *q)
{
    uint16_t end = load_acquire(&q->used->idx);
    while (q->used_idx != end) {
        q->free[q->nfree++] = (uint16_t)(q->used->ring[q->used_idx % QSIZE].id % QSIZE);
        q->used_idx++;
    }
}

static err_t vnet_linkoutput(struct netif *netif, struct pbuf *p)
{
    (void)netif;
    struct vq *q = &vnet.tx;
    tx_reclaim(q);
    if (p->tot_len > BUF_SIZE - NET_HDR)
        return ERR_BUF;
    if (q->nfree == 0)
        return ERR_MEM; // the device is behind: drop, as a full NIC would
    uint16_t id = q->free[--q->nfree];
    memset(q->buf[id], 0, NET_HDR);
    pbuf_copy_partial(p, q->buf[id] + NET_HDR, p->tot_len, 0);
    q->desc[id] = (struct vq_desc){.addr = V2P(q->buf[id]), .len = NET_HDR + p->tot_len};
    vq_push(q, id);
    vq_kick(q, TXQ);
    return ERR_OK;
}

static err_t vnet_netif_init(struct netif *netif)
{
    netif->name[0] = 'e';
    netif->name[1] = 'n';
    netif->output = etharp_output;
    netif->linkoutput = vnet_linkoutput;
    netif->mtu = 1500;
    netif->hwaddr_len = 6;
    memcpy(netif->hwaddr, vnet.mac, 6);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET |
                   NETIF_FLAG_LINK_UP;
    return ERR_OK;
}

// ---- start-up ------------------------------------------------------------------

// Points MSI-X table entry 0 at vector T_NET on this CPU and enables MSI-X.
static int msix_setup(const struct pci_dev *d)
{
    int cap = pci_find_cap(d, PCI_CAP_MSIX, 0);
    if (!cap)
        return -1;
    uint32_t table = pci_read32(d, cap + 4);
    uint64_t bar = pci_bar(d, table & 7);
    if (!bar)
        return -1;
    volatile uint32_t *entry = mmio_map(bar + (table & ~7u), 16);
    push_off();
    uint32_t apic = lapic_id();
    pop_off();
    entry[0] = 0xfee00000u | apic << 12; // fixed delivery, physical destination
    entry[1] = 0;
    entry[2] = T_NET; // edge-triggered
    entry[3] = 0;     // unmasked
    irq_register(T_NET, vnet_intr);
    uint16_t ctl = pci_read16(d, cap + 2);
    pci_write16(d, cap + 2, (uint16_t)((ctl | 0x8000) & ~0x4000)); // enable, unmask all
    return 0;
}

// Finds the capabilities, negotiates features and sets up both queues.
static int vnet_device_init(const struct pci_dev *d)
{
    uint32_t len, notify_mult = 0;
    volatile uint8_t *notify = NULL, *devcfg = NULL;
    for (int cap = pci_find_cap(d, PCI_CAP_VENDOR, 0); cap; cap = pci_find_cap(d, PCI_CAP_VENDOR, cap)) {
        switch (pci_read8(d, cap + 3)) {
        case VIRTIO_CAP_COMMON:
            if (!vnet.common)
                vnet.common = map_cap(d, cap, &len);
            break;
        case VIRTIO_CAP_NOTIFY:
            if (!notify) {
                notify = map_cap(d, cap, &len);
                notify_mult = pci_read32(d, cap + 16);
            }
            break;
        case VIRTIO_CAP_DEVICE:
            if (!devcfg)
                devcfg = map_cap(d, cap, &len);
            break;
        }
    }
    volatile struct common_cfg *c = vnet.common;
    if (!c || !notify || !devcfg)
        return -1;
    pci_write16(d, PCI_COMMAND, pci_read16(d, PCI_COMMAND) | PCI_COMMAND_MEMORY |
                                    PCI_COMMAND_MASTER | PCI_COMMAND_INTX_OFF);
    c->device_status = 0; // reset
    while (c->device_status != 0)
        ;
    c->device_status = STATUS_ACKNOWLEDGE | STATUS_DRIVER;
    c->device_feature_select = 1;
    if (!(c->device_feature & 1u << (F_VERSION_1 - 32)))
        return -1;
    c->device_feature_select = 0;
    uint32_t lo = c->device_feature & 1u << F_NET_MAC;
    c->driver_feature_select = 0;
    c->driver_feature = lo;
    c->driver_feature_select = 1;
    c->driver_feature = 1u << (F_VERSION_1 - 32);
    c->device_status = STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK;
    if (!(c->device_status & STATUS_FEATURES_OK))
        return -1;
    if (msix_setup(d) < 0)
        return -1;
    c->msix_config = NO_VECTOR;
    if (vq_setup(&vnet.rx, RXQ, 0, notify, notify_mult) < 0 ||
        vq_setup(&vnet.tx, TXQ, NO_VECTOR, notify, notify_mult) < 0)
        return -1;
    vnet.tx.avail->flags = AVAIL_F_NO_INTERRUPT;
    for (int i = 0; i < QSIZE; i++)
        vnet.tx.free[vnet.tx.nfree++] = (uint16_t)i;
    if (lo)
        for (int i = 0; i < 6; i++)
            vnet.mac[i] = devcfg[i];
    else
        memcpy(vnet.mac, (uint8_t[]){0x52, 0x54, 0x00, 0x12, 0x34, 0x56}, 6);
    c->device_status = STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK | STATUS_DRIVER_OK;
    return 0;
}

static bool present; // [i] once net_start has returned

bool virtio_net_present(void) { return present; }

int virtio_net_start(void)
{
    if (!pci_find(VIRTIO_VENDOR, VIRTIO_NET_MODERN, &vnet.pci))
        return 0;
    if (vnet_device_init(&vnet.pci) < 0) {
        kprintf("virtio-net: %02x:%02x.%x: device set-up failed\n", vnet.pci.bus,
                vnet.pci.dev, vnet.pci.fn);
        return -1;
    }
    ip4_addr_t addr, mask, gw;
    IP4_ADDR(&addr, 10, 0, 2, 15);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 10, 0, 2, 2);
    LOCK_TCPIP_CORE();
    netif_add(&vnet.netif, &addr, &mask, &gw, NULL, vnet_netif_init, tcpip_input);
    netif_set_default(&vnet.netif);
    netif_set_up(&vnet.netif);
    UNLOCK_TCPIP_CORE();
    rx_fill(); // only now: a frame may arrive as soon as the device has buffers
    present = true;
    kprintf("virtio-net: %02x:%02x:%02x:%02x:%02x:%02x, 10.0.2.15/24 via 10.0.2.2\n",
            vnet.mac[0], vnet.mac[1], vnet.mac[2], vnet.mac[3], vnet.mac[4], vnet.mac[5]);
    return 1;
}
