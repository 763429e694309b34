/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <curl/curl.h>
#include <stdio.h>

#include "curl-glue.h"
#include "log.h"
#include "parse-util.h"
#include "readiness.h"

/* Quick enough for a runtime that is nearly up, cheap enough for one loading a model for
 * minutes. */
#define BACKOFF_FIRST_USEC (10 * USEC_PER_MSEC)
#define BACKOFF_MAX_USEC   (500 * USEC_PER_MSEC)
/* One probe: a loading runtime answers its health path at once (with 503), a busy one may
 * take a moment. */
#define PROBE_TIMEOUT_MS   5000L
#define TIMER_ACCURACY_USEC 1000

struct Readiness {
        sd_event *event;
        CurlGlue *curl;
        CURL *probe;            /* in flight, or NULL */
        sd_event_source *next;  /* the backoff timer */
        char *url;
        bool connect_only;
        bool polling;
        usec_t backoff;
        unsigned probes;
        char last_error[256];
        readiness_ready_t ready;
        void *userdata;
};

static size_t discard(char *data, size_t size, size_t n, void *userdata) {
        return size * n;
}

static void probe_stop(Readiness *r) {
        if (!r->probe)
                return;
        curl_glue_remove(r->curl, r->probe);
        curl_easy_cleanup(r->probe);
        r->probe = NULL;
}

static int probe_start(Readiness *r) {
        CURL *c = curl_easy_init();

        if (!c)
                return -ENOMEM;
        curl_easy_setopt(c, CURLOPT_URL, r->url);
        curl_easy_setopt(c, CURLOPT_PRIVATE, r);
        curl_easy_setopt(c, CURLOPT_NOPROXY, "*");         /* the runtime's own loopback, always */
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);    /* a crashed runtime's old connection is no answer */
        curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, PROBE_TIMEOUT_MS);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        if (r->connect_only)
                curl_easy_setopt(c, CURLOPT_CONNECT_ONLY, 1L);
        if (curl_glue_add(r->curl, c) < 0) {
                curl_easy_cleanup(c);
                return -EIO;
        }
        r->probe = c;
        r->probes++;
        return 0;
}

static int on_next(sd_event_source *s, uint64_t usec, void *userdata) {
        Readiness *r = userdata;
        int k = probe_start(r);

        if (k < 0) {
                snprintf(r->last_error, sizeof r->last_error, "cannot start a probe: %s", strerror(-k));
                /* try again later rather than never */
                return sd_event_source_set_time_relative(s, BACKOFF_MAX_USEC) < 0 ? 0 :
                       sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        return 0;
}

static void schedule_next(Readiness *r) {
        r->backoff = r->backoff ? r->backoff * 2 : BACKOFF_FIRST_USEC;
        if (r->backoff > BACKOFF_MAX_USEC)
                r->backoff = BACKOFF_MAX_USEC;
        if (sd_event_source_set_time_relative(r->next, r->backoff) < 0 ||
            sd_event_source_set_enabled(r->next, SD_EVENT_ONESHOT) < 0)
                log_warning("Cannot schedule the next readiness probe.");
}

static void on_probe_done(CurlGlue *g, CURL *easy, CURLcode result) {
        Readiness *r = NULL;
        long status = 0;
        bool ok;

        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **) &r);
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_cleanup(easy);
        r->probe = NULL;

        ok = result == CURLE_OK && (r->connect_only || status == 200);
        if (!ok) {
                if (result != CURLE_OK)
                        snprintf(r->last_error, sizeof r->last_error, "%s", curl_easy_strerror(result));
                else
                        snprintf(r->last_error, sizeof r->last_error, "GET %s answered %ld", r->url, status);
                if (r->polling)
                        schedule_next(r);
                return;
        }
        r->last_error[0] = 0;
        r->polling = false;
        r->ready(r, r->userdata);
}

int readiness_new(sd_event *e, uint16_t port, const char *health, readiness_ready_t ready, void *userdata,
                  Readiness **ret) {
        Readiness *r = calloc(1, sizeof(Readiness));
        int k;

        if (!r)
                return -ENOMEM;
        r->event = sd_event_ref(e);
        r->ready = ready;
        r->userdata = userdata;
        r->connect_only = isempty(health);
        r->url = strprintf("http://127.0.0.1:%u%s", (unsigned) port, strempty(health));
        if (!r->url) {
                readiness_free(r);
                return -ENOMEM;
        }
        k = curl_glue_new(e, on_probe_done, &r->curl);
        if (k >= 0)
                k = sd_event_add_time(e, &r->next, CLOCK_MONOTONIC, 0, TIMER_ACCURACY_USEC, on_next, r);
        if (k >= 0)
                k = sd_event_source_set_enabled(r->next, SD_EVENT_OFF);
        if (k < 0) {
                readiness_free(r);
                return k;
        }
        *ret = r;
        return 0;
}

Readiness *readiness_free(Readiness *r) {
        if (!r)
                return NULL;
        probe_stop(r);
        curl_glue_free(r->curl);
        sd_event_source_disable_unref(r->next);
        sd_event_unref(r->event);
        free(r->url);
        return mfree(r);
}

int readiness_start(Readiness *r) {
        if (r->polling)
                return 0;
        r->polling = true;
        r->backoff = 0;
        r->probes = 0;
        r->last_error[0] = 0;
        /* first probe on the next loop iteration, not from inside the caller */
        if (sd_event_source_set_time_relative(r->next, 0) < 0)
                return -EIO;
        return sd_event_source_set_enabled(r->next, SD_EVENT_ONESHOT);
}

void readiness_stop(Readiness *r) {
        r->polling = false;
        probe_stop(r);
        (void) sd_event_source_set_enabled(r->next, SD_EVENT_OFF);
}

const char *readiness_last_error(const Readiness *r) {
        return r->last_error[0] ? r->last_error : NULL;
}

unsigned readiness_probes(const Readiness *r) {
        return r->probes;
}
