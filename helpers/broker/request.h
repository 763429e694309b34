/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <microhttpd.h>
#include <systemd/sd-event.h>

#include "broker-config.h"
#include "curl-glue.h"

typedef struct Peer Peer;

/* What a request needs of the server that runs it, set up by server.c: requests call down
 * into it through these, never up into the server. */
typedef struct RequestContext {
        sd_event *event;
        CurlGlue *curl;
        BrokerConfig *config;   /* the current one; each request keeps a reference to its own */
        unsigned active_requests;

        /* Runs MHD again soon: after a connection was resumed, or a response has new bytes. */
        void (*kick)(void *userdata);
        /* A request's headers are complete: the connection's header deadline is off until
         * its answer has ended (request_completed), when the next request's starts. */
        void (*headers_done)(void *userdata, Peer *p);
        void (*headers_wait)(void *userdata, Peer *p);
        void *userdata;
} RequestContext;

/* The MHD access handler and completion callback; cls is the RequestContext. */
enum MHD_Result request_handle(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls);
void request_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                       enum MHD_RequestTerminationCode toe);
void *request_uri_seen(void *cls, const char *uri, struct MHD_Connection *conn);
/* curl's completion callback (curl_glue_new()): the request's transfer ended. */
void request_curl_done(CurlGlue *g, CURL *easy, CURLcode result);
