/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "curl-glue.h"
#include "event-timer.h"
#include "log.h"
#include "macro.h"

/* Idle easy handles kept: as many as requests usually run at once on one core. */
#define EASY_IDLE_MAX 64

struct CurlGlue {
        sd_event *event;
        CURLM *multi;
        sd_event_source *timer, *at_once;
        curl_glue_done_t done;
        CURL *idle[EASY_IDLE_MAX];
        size_t n_idle;
};

static void check_done(CurlGlue *g) {
        CURLMsg *msg;
        int left;

        while ((msg = curl_multi_info_read(g->multi, &left)))
                if (msg->msg == CURLMSG_DONE) {
                        CURL *easy = msg->easy_handle;
                        CURLcode result = msg->data.result;

                        curl_multi_remove_handle(g->multi, easy);
                        g->done(g, easy, result);
                }
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        CurlGlue *g = userdata;
        int action = 0, running;

        if (revents & (EPOLLIN | EPOLLHUP))
                action |= CURL_CSELECT_IN;
        if (revents & EPOLLOUT)
                action |= CURL_CSELECT_OUT;
        if (revents & EPOLLERR)
                action |= CURL_CSELECT_ERR;
        curl_multi_socket_action(g->multi, fd, action, &running);
        check_done(g);
        return 0;
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userdata, void *socketp) {
        CurlGlue *g = userdata;
        sd_event_source *io = socketp;
        uint32_t events = 0;

        if (what == CURL_POLL_REMOVE) {
                sd_event_source_disable_unref(io);
                curl_multi_assign(g->multi, fd, NULL);
                return 0;
        }
        if (what & CURL_POLL_IN)
                events |= EPOLLIN;
        if (what & CURL_POLL_OUT)
                events |= EPOLLOUT;
        if (io) {
                if (sd_event_source_set_io_events(io, events) < 0 ||
                    sd_event_source_set_enabled(io, SD_EVENT_ON) < 0)
                        return -1;
                return 0;
        }
        if (sd_event_add_io(g->event, &io, fd, events, on_io, g) < 0)
                return -1;
        (void) sd_event_source_set_description(io, "curl-io");
        curl_multi_assign(g->multi, fd, io);
        return 0;
}

/* Runs every transfer that is due, and hands over those that finished. */
static void run_due(CurlGlue *g) {
        int running;

        curl_multi_socket_action(g->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        check_done(g);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        run_due(userdata);
        return 0;
}

static int on_at_once(sd_event_source *s, void *userdata) {
        return on_timer(s, 0, userdata);
}

/* sd-event's accuracy 0 means its default, 250 ms: far too coarse for a proxy. */
#define TIMER_ACCURACY_USEC 1000

static int on_timer_request(CURLM *multi, long timeout_ms, void *userdata) {
        CurlGlue *g = userdata;
        uint64_t now;

        if (timeout_ms == 0) { /* at once: a defer source, not a timer */
                if (!g->at_once && sd_event_add_defer(g->event, &g->at_once, on_at_once, g) < 0)
                        return -1;
                return sd_event_source_set_enabled(g->at_once, SD_EVENT_ONESHOT) < 0 ? -1 : 0;
        }
        if (timeout_ms < 0)
                return g->timer ? sd_event_source_set_enabled(g->timer, SD_EVENT_OFF) < 0 ? -1 : 0 : 0;
        if (sd_event_now(g->event, CLOCK_MONOTONIC, &now) < 0)
                return -1;
        if (!g->timer)
                return sd_event_add_time(g->event, &g->timer, CLOCK_MONOTONIC,
                                         now + (uint64_t) timeout_ms * 1000, TIMER_ACCURACY_USEC, on_timer, g) < 0 ? -1 : 0;
        return event_timer_arm_no_later(g->timer, now + (uint64_t) timeout_ms * 1000) < 0 ? -1 : 0;
}

int curl_glue_new(sd_event *e, curl_glue_done_t done, CurlGlue **ret) {
        CurlGlue *g = calloc(1, sizeof(CurlGlue));

        if (!g)
                return -ENOMEM;
        g->event = sd_event_ref(e);
        g->done = done;
        g->multi = curl_multi_init();
        if (!g->multi) {
                curl_glue_free(g);
                return -ENOMEM;
        }
        curl_multi_setopt(g->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
        curl_multi_setopt(g->multi, CURLMOPT_SOCKETDATA, g);
        curl_multi_setopt(g->multi, CURLMOPT_TIMERFUNCTION, on_timer_request);
        curl_multi_setopt(g->multi, CURLMOPT_TIMERDATA, g);
        *ret = g;
        return 0;
}

CurlGlue *curl_glue_free(CurlGlue *g) {
        if (!g)
                return NULL;
        if (g->multi)
                curl_multi_cleanup(g->multi);
        while (g->n_idle > 0)
                curl_easy_cleanup(g->idle[--g->n_idle]);
        sd_event_source_disable_unref(g->timer);
        sd_event_source_disable_unref(g->at_once);
        sd_event_unref(g->event);
        return mfree(g);
}

int curl_glue_add(CurlGlue *g, CURL *easy) {
        if (curl_multi_add_handle(g->multi, easy) != CURLM_OK)
                return -EIO;
        /* curl asks to be run at once (a 0 timeout): now, not on the next turn of the loop.
         * This runs every transfer that is due, so the deferred run is not needed. */
        if (g->at_once)
                (void) sd_event_source_set_enabled(g->at_once, SD_EVENT_OFF);
        run_due(g);
        return 0;
}

void curl_glue_remove(CurlGlue *g, CURL *easy) {
        curl_multi_remove_handle(g->multi, easy);
}

void curl_glue_unpause(CurlGlue *g, CURL *easy) {
        curl_easy_pause(easy, CURLPAUSE_CONT);
        /* curl_easy_pause() may have delivered data synchronously; let curl re-evaluate. */
        run_due(g);
}

CURL *curl_glue_easy_get(CurlGlue *g) {
        if (g->n_idle > 0)
                return g->idle[--g->n_idle];
        return curl_easy_init();
}

void curl_glue_easy_put(CurlGlue *g, CURL *easy) {
        if (!easy)
                return;
        if (g->n_idle == EASY_IDLE_MAX) {
                curl_easy_cleanup(easy);
                return;
        }
        curl_easy_reset(easy);
        g->idle[g->n_idle++] = easy;
}
