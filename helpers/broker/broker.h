/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <microhttpd.h>
#include <systemd/sd-event.h>

#include "broker-config.h"
#include "caller.h"
#include "request.h"

/* The daemon: libmicrohttpd and libcurl on one sd-event loop (server.c). */
typedef struct Broker {
        sd_event *event;
        RequestContext requests;        /* what requests get of the server; holds the config */
        struct MHD_Daemon *httpd;
        sd_event_source *httpd_io, *httpd_timer, *httpd_defer;
        CurlGlue *curl;
        CallerTable callers;
} Broker;

/* Starts serving on listen_fd; b->event and the config (broker_set_config()) are set. */
int broker_start(Broker *b, int listen_fd);
void broker_stop(Broker *b);

/* Takes config as the one new requests use (requests in flight keep theirs); the rate-limit
 * state of roles that keep their name carries over. */
void broker_set_config(Broker *b, BrokerConfig *config);
/* Reads the config again (SIGHUP): swapped in only if all of it is valid. */
int broker_reload(Broker *b);
