// lwIP's operating-system types (lwip/sys.h) on the kernel's: semaphores,
// mutexes and mailboxes are pointers to objects sys_arch.c allocates, NULL when
// not valid; lwIP's threads are kernel threads.
#pragma once

struct sys_sem;
struct sys_mutex;
struct sys_mbox;
struct thread;

typedef struct sys_sem *sys_sem_t;
typedef struct sys_mutex *sys_mutex_t;
typedef struct sys_mbox *sys_mbox_t;
typedef struct thread *sys_thread_t;
typedef int sys_prot_t; // 1: the protection was already held (a nested call)

#define SYS_SEM_NULL NULL
#define SYS_MBOX_NULL NULL
#define sys_sem_valid(s) ((s) != NULL && *(s) != NULL)
#define sys_sem_set_invalid(s) (*(s) = NULL)
#define sys_mutex_valid(m) ((m) != NULL && *(m) != NULL)
#define sys_mutex_set_invalid(m) (*(m) = NULL)
#define sys_mbox_valid(b) ((b) != NULL && *(b) != NULL)
#define sys_mbox_set_invalid(b) (*(b) = NULL)
