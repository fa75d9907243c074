// Intrusive circular doubly-linked lists (run queues, wait queues, regions).
#pragma once
#include "kernel.h"

struct list {
    struct list *next, *prev;
};

#define LIST_INIT(l) { &(l), &(l) }

static inline void list_init(struct list *l) { l->next = l->prev = l; }
static inline bool list_empty(const struct list *l) { return l->next == l; }

static inline void list_insert_between(struct list *n, struct list *prev, struct list *next)
{
    n->prev = prev;
    n->next = next;
    prev->next = n;
    next->prev = n;
}
static inline void list_push_back(struct list *head, struct list *n) { list_insert_between(n, head->prev, head); }
static inline void list_insert_before(struct list *pos, struct list *n) { list_insert_between(n, pos->prev, pos); }

static inline void list_remove(struct list *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->next = n->prev = n;
}

// Move every element of from to the end of to (from is left empty).
static inline void list_splice_tail(struct list *to, struct list *from)
{
    if (list_empty(from))
        return;
    from->next->prev = to->prev;
    to->prev->next = from->next;
    from->prev->next = to;
    to->prev = from->prev;
    list_init(from);
}

#define list_entry(p, type, member) container_of(p, type, member)
#define list_for_each(it, head) for (struct list *it = (head)->next; it != (head); it = it->next)
#define list_for_each_safe(it, tmp, head)                                                \
    for (struct list *it = (head)->next, *tmp = it->next; it != (head); it = tmp, tmp = it->next)
