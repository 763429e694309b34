/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <systemd/sd-event.h>

/* Arms a one-shot timer source for `usec` (CLOCK_MONOTONIC), unless it is already armed for
 * that time or earlier. libmicrohttpd and libcurl ask for a new deadline after nearly every
 * event (a connection's idle timeout moves with each byte), and each change of the earliest
 * deadline is a timerfd_settime(), a VM exit on a KVM guest. A timer that fires early costs one
 * wake-up: both libraries check their own clocks and ask again. */
int event_timer_arm_no_later(sd_event_source *timer, uint64_t usec);
