/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <curl/curl.h>
#include <systemd/sd-event.h>

/* libcurl's multi interface driven by sd-event (as systemd's curl-util does): curl tells us
 * which sockets to watch and when to time out; sd-event tells curl when they are ready. */
typedef struct CurlGlue CurlGlue;

/* Called once per finished transfer (success or error), after it left the multi handle. */
typedef void (*curl_glue_done_t)(CurlGlue *g, CURL *easy, CURLcode result);

int curl_glue_new(sd_event *e, curl_glue_done_t done, CurlGlue **ret);
CurlGlue *curl_glue_free(CurlGlue *g);

/* Adds a transfer and starts it at once: it may even finish, and the done callback run,
 * before this returns. */
int curl_glue_add(CurlGlue *g, CURL *easy);
/* Removes a transfer that has not finished (the caller went away): curl closes the upstream
 * connection, which cancels the request there. */
void curl_glue_remove(CurlGlue *g, CURL *easy);
/* After a write callback returned CURL_WRITEFUNC_PAUSE, resume it. */
void curl_glue_unpause(CurlGlue *g, CURL *easy);

/* Easy handles are kept for the next transfer (curl_easy_reset(): no option, header list or
 * private pointer of one request survives into the next), up to a bound: a new one costs
 * curl's defaults and buffers, allocated and zeroed, on every request. NULL on OOM. */
CURL *curl_glue_easy_get(CurlGlue *g);
/* Takes back a handle no longer in the multi handle (finished or removed). */
void curl_glue_easy_put(CurlGlue *g, CURL *easy);
