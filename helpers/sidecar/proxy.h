/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "macro.h"
#include "parse-util.h"

typedef struct ProxyOptions {
        const char *name;               /* the sidecar's name, for messages */
        uint16_t port;                  /* the runtime's port on 127.0.0.1 */
        const char *health;             /* HTTP path, or NULL: ready when the port accepts */
        usec_t start_timeout;           /* how long held connections wait for readiness */
        unsigned max_connections;       /* held + relayed; past it, the kernel's backlog */
} ProxyOptions;

/* The sidecar proxy: accepts on the listening sockets systemd passed, holds connections
 * until the runtime is ready, then hands them to the splice relay. */
typedef struct Proxy Proxy;

int proxy_new(sd_event *e, const ProxyOptions *o, const int *listen_fds, size_t n_listen_fds, Proxy **ret);
Proxy *proxy_free(Proxy *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Proxy *, proxy_free);
