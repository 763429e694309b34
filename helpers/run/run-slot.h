/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* cloisterctl run's /tmp slots: size-capped tmpfs pairs that stay mounted
 * (/run/cloister/tmp/ROLE.slot-N and /run/cloister/var-tmp/ROLE.slot-N), so that a run makes
 * no mount event; each run claims a free one, cloister-stage checks the claim at its start
 * and releases it after emptying the slot at its end (cloisterctl(1), RUNS AND /tmp). */

/* A role has at most this many slots (each two mounts that stay); a run that finds none free
 * mounts its own. */
#define RUN_TMP_SLOTS_MAX 16U

/* Whether `unit` has ended or is no longer known to systemd: its processes are gone, and a
 * claim it left is stale. */
typedef bool (*run_unit_gone_t)(const char *unit, void *userdata);

/* Claims the first slot of `role` that is free or whose claimer is gone (its unit unknown
 * or ended, and its claiming process dead), for `unit`, under `claim_dir` (made root's,
 * 0700): the claim file CLAIM_DIR/ROLE.slot-N holds "UNIT PID". Returns the slot's name
 * "ROLE.slot-N"; -EBUSY when all are taken. */
int run_slot_claim(const char *claim_dir, const char *role, const char *unit,
                   run_unit_gone_t gone, void *userdata, char **ret_slot);

/* Removes the claim if it is still `unit`'s (the run never started). */
void run_slot_release(const char *claim_dir, const char *slot, const char *unit);
