/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <microhttpd.h>
#include <systemd/sd-event.h>

#include "broker-config.h"
#include "caller.h"
#include "curl-glue.h"
#include "rate-limit.h"

typedef struct Broker {
        sd_event *event;
        BrokerConfig *config;
        RateLimit **limits;             /* per role, parallel to config->roles */
        size_t n_limits;
        struct MHD_Daemon *httpd;
        sd_event_source *httpd_io, *httpd_timer, *httpd_defer;
        CurlGlue *curl;
        unsigned active_requests;
        CallerTable callers;
} Broker;

typedef struct Peer Peer;

/* A request's headers are complete: the connection's header deadline is off until its
 * answer has ended (request_completed), when the next request's starts. */
void broker_headers_done(Broker *b, Peer *p);
void broker_headers_wait(Broker *b, Peer *p);

/* Runs MHD again soon: after a connection was resumed, or a response has new bytes. */
void broker_kick(Broker *b);

RateLimit *broker_role_limit(Broker *b, const Role *role);

/* The MHD access handler and completion callback (request.c). */
enum MHD_Result request_handle(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls);
void request_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                       enum MHD_RequestTerminationCode toe);
void request_curl_done(CurlGlue *g, CURL *easy, CURLcode result);
void *request_uri_seen(void *cls, const char *uri, struct MHD_Connection *conn);
