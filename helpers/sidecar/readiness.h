/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <systemd/sd-event.h>

/* Is the runtime ready? Polls 127.0.0.1:port with backoff until it is: an HTTP GET of
 * `health` answered 200, or, with no health path, the port accepting a connection. */
typedef struct Readiness Readiness;
typedef void (*readiness_ready_t)(Readiness *r, void *userdata);

int readiness_new(sd_event *e, uint16_t port, const char *health, readiness_ready_t ready, void *userdata,
                  Readiness **ret);
Readiness *readiness_free(Readiness *r);

/* Starts polling (first probe at once) unless it already is; `ready` is called once, when a
 * probe succeeds, and polling stops. */
int readiness_start(Readiness *r);
void readiness_stop(Readiness *r);

/* Why the last probe failed ("connection refused", "GET /health answered 503"), or NULL. */
const char *readiness_last_error(const Readiness *r);
/* Probes since readiness_start(). */
unsigned readiness_probes(const Readiness *r);
