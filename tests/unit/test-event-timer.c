/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/broker/event-timer.c: a timer is moved only to an earlier deadline (each move of
 * sd-event's earliest deadline is a timerfd_settime()). */

#include "event-timer.h"
#include "tap.h"

static int on_time(sd_event_source *s, uint64_t usec, void *userdata) {
        return 0;
}

int main(void) {
        sd_event *e = NULL;
        sd_event_source *t = NULL;
        uint64_t at = 0;
        int enabled = -1;

        if (sd_event_new(&e) < 0 || sd_event_add_time(e, &t, CLOCK_MONOTONIC, 1000000, 1000, on_time, NULL) < 0)
                tap_bail_out("cannot set up sd-event");
        (void) sd_event_source_set_enabled(t, SD_EVENT_OFF);

        is_int(event_timer_arm_no_later(t, 5000000), 0, "an idle timer is armed");
        ok(sd_event_source_get_time(t, &at) >= 0 && at == 5000000, "for the time asked");
        ok(sd_event_source_get_enabled(t, &enabled) >= 0 && enabled == SD_EVENT_ONESHOT, "once");

        is_int(event_timer_arm_no_later(t, 9000000), 0, "a later deadline");
        ok(sd_event_source_get_time(t, &at) >= 0 && at == 5000000, "keeps the earlier one armed");

        is_int(event_timer_arm_no_later(t, 2000000), 0, "an earlier deadline");
        ok(sd_event_source_get_time(t, &at) >= 0 && at == 2000000, "moves the timer");

        (void) sd_event_source_set_enabled(t, SD_EVENT_OFF);
        is_int(event_timer_arm_no_later(t, 7000000), 0, "a timer that fired (off)");
        ok(sd_event_source_get_time(t, &at) >= 0 && at == 7000000 &&
           sd_event_source_get_enabled(t, &enabled) >= 0 && enabled == SD_EVENT_ONESHOT,
           "is armed again for any deadline, later ones too");

        sd_event_source_unref(t);
        sd_event_unref(e);
        return tap_done();
}
