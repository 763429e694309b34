/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-event.h>

/* A byte relay from a listening socket to a Unix socket path (after systemd-socket-proxyd):
 * each accepted connection gets a connection to `target`, and bytes are splice()d both ways
 * through a pipe per direction, with half-close passed on. One connection's error never
 * stops the relay. Used by cloister-shim (127.0.0.1:LoopbackPort → the broker socket) and
 * by the sidecar proxy. */
typedef struct Relay Relay;

int relay_new(sd_event *e, int listen_fd, const char *target, Relay **ret);
Relay *relay_free(Relay *r);

/* Connections currently open. */
unsigned relay_connections(const Relay *r);
