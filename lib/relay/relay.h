/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/resource.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>

/* A byte relay from a listening socket to a Unix socket path (after systemd-socket-proxyd):
 * each accepted connection gets a connection to `target`, and bytes are splice()d both ways
 * through a pipe per direction, with half-close passed on. One connection's error never
 * stops the relay. Used by cloister-shim (127.0.0.1:LoopbackPort → the broker socket) and
 * by the sidecar proxy. */
typedef struct Relay Relay;

int relay_new(sd_event *e, int listen_fd, const char *target, Relay **ret);

/* Called after each connection ended. `connect_error` > 0: the target refused the
 * connection and `client_fd` (otherwise -1) is handed back, unsent bytes still unread in it,
 * for the caller to keep or close. */
typedef void (*relay_ended_t)(Relay *r, int client_fd, int connect_error, void *userdata);

/* A relay with no listener of its own, for a caller that accepts connections itself and
 * decides when to pass them on with relay_add() (cloister-sidecar holds them until its
 * runtime is ready). `target` is a Unix or TCP address; `name` is for messages. */
int relay_new_to_address(sd_event *e, const struct sockaddr *target, socklen_t len, const char *name,
                         relay_ended_t ended, void *userdata, Relay **ret);
/* Takes `client_fd` (non-blocking) in every case. */
int relay_add(Relay *r, int client_fd);
Relay *relay_free(Relay *r);

/* Connections currently open. */
unsigned relay_connections(const Relay *r);

/* Six descriptors per relayed connection (two sockets, two pipes): a relaying process takes
 * the hard RLIMIT_NOFILE for itself. Stores the limit it started with in `ret_saved` (may be
 * NULL), for a child that should get the soft limit back. Best effort: a failure leaves the
 * limit as it was. */
void relay_raise_nofile(struct rlimit *ret_saved);
