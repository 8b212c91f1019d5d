/* Landlock in the supervisor (kaudit.c): what each jail reported in force, and the kernel's
 * audit records of Landlock's denials, read from outside the jail and turned into the run's
 * trace. A run's part of it lives in struct sup_run (run.h). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define KAUDIT_EVENTS_MAX 32 /* landlock events recorded per run; then they are counted */

struct sup_run_kaudit {
        /* what the jail's child reported (C10) */
        bool reported;
        int abi;       /* in force; 0: none */
        char text[200]; /* the child's word: the ABI's description, or why there is none */
        /* the run's Landlock domain, from the kernel's records */
        uint64_t start_ms;      /* CLOCK_REALTIME at verification: the domain is not older */
        bool audit_on;          /* the kernel's audit was on at verification */
        uint32_t lost_at_start; /* the kernel's count of lost audit records then */
        uint64_t overflows_at_start;
        uint64_t domain; /* 0 until its LANDLOCK_DOMAIN record (status=allocated) names it */
        bool probe_seen; /* the runner's own check (R6) seen refused by the kernel */
        unsigned events;
        uint64_t dropped;
        /* the drain before the result: a marker through the kernel's audit queue */
        enum { KAUDIT_IDLE, KAUDIT_DRAINING, KAUDIT_DRAINED } drain;
        uint64_t nonce;
        uint64_t deadline_ms;
};
