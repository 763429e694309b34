/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "event-timer.h"

int event_timer_arm_no_later(sd_event_source *timer, uint64_t usec) {
        uint64_t armed;
        int enabled = SD_EVENT_OFF, r;

        if (sd_event_source_get_enabled(timer, &enabled) >= 0 && enabled != SD_EVENT_OFF &&
            sd_event_source_get_time(timer, &armed) >= 0 && armed <= usec)
                return 0;
        r = sd_event_source_set_time(timer, usec);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(timer, SD_EVENT_ONESHOT);
}
