/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* ExecStopPost= runs as soon as the main process is gone: with KillMode=mixed, what the agent
 * forked is killed only after it (systemd's final SIGKILL). Before /tmp is emptied and a run
 * slot handed on, cloister-stage kills every other process of its own cgroup (the unit's) and
 * waits until none is left; only in the cgroup of agent@INSTANCE.service or
 * agent-run@INSTANCE.service (run by hand, it kills nothing). 0 when none is left, -EBUSY if some remain after the wait, another
 * negative errno when the cgroup cannot be read (logged). */
int stage_kill_leftovers(const char *instance);
