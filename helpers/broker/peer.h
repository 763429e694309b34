/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* Who is on the other end of a broker connection, as PID 1 attests it: SO_PEERCRED gives
 * the PID, its cgroup gives the unit. Nothing the caller sends is consulted (cloister-broker(8)). */
struct Broker;
struct Caller;
struct sd_event_source;

typedef struct Peer {
        pid_t pid;
        char *unit;     /* "agent@reviewer.service", or NULL */
        char *role;     /* "reviewer" for agent@reviewer.service and agent-run@reviewer.ID.service */

        /* the connection's, kept by server.c */
        int fd;
        struct Broker *broker;                   /* the server holding the connection */
        struct Caller *caller;                   /* its unit's counts (caller.h) */
        struct sd_event_source *header_deadline; /* a request's headers are awaited until */
        uint64_t header_deadline_usec;           /* this time (CLOCK_MONOTONIC), 0: none awaited */
        struct sd_event_source *hangup_watch;    /* EPOLLRDHUP, once a request waited (request.c) */
        void *waiting;                           /* that request, while it lasts */
        bool closing;                            /* over its caller's cap: no request is served */
} Peer;

void peer_done(Peer *p);
int peer_identify(int fd, Peer *ret);

/* The role of a unit name, or NULL: agent@ROLE.service, and the transient sealed runs of
 * cloisterctl, agent-run@ROLE.ID.service (ID: letters and digits). */
char *peer_role_of_unit(const char *unit);
