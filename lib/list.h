/* Intrusive doubly linked lists: an item has `next` and `pprev` (the address of whatever
 * points to it), so removal needs no list head. Used for the daemons' clients, runs and
 * relays. */
#pragma once

#define LIST_PREPEND(head, item)                          \
        do {                                              \
                (item)->next = (head);                    \
                if (head)                                 \
                        (head)->pprev = &(item)->next;    \
                (item)->pprev = &(head);                  \
                (head) = (item);                          \
        } while (0)

/* Safe to call twice: a removed item has pprev NULL. */
#define LIST_REMOVE(item)                                         \
        do {                                                      \
                if ((item)->pprev) {                              \
                        *(item)->pprev = (item)->next;            \
                        if ((item)->next)                         \
                                (item)->next->pprev = (item)->pprev; \
                        (item)->next = NULL;                      \
                        (item)->pprev = NULL;                     \
                }                                                 \
        } while (0)
