/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "unit-settings.h"

/* The hardening base: the sandboxing directives that every unit cloister ships or generates
 * starts from (agent@ and agent-run@, the sidecar runtime and proxy, cloister-deps@, the
 * broker). A unit that needs something else says so as data, one HardeningChange per
 * directive with the reason, and docs/profile.md ("One hardening base") lists every unit's
 * differences; tests/unit/test-hardening.c fails on one that is not listed there. A
 * directive added to the base reaches every unit. */

typedef struct HardeningChange {
        /* a base row's name: its key, or "SystemCallFilter~" for the reviewed deny list */
        const char *name;
        /* the unit's value in the row's place; NULL: the row is left out */
        const char *value;
        /* why (docs/profile.md repeats it; the broker's unit file carries it as a comment) */
        const char *why;
} HardeningChange;

/* Adds the base, in order, with `changes` applied (until name == NULL; NULL: none). */
int hardening_add(UnitSettings *s, const HardeningChange *changes);

/* The base row's name and value at index i, false past the end (for the test and the docs). */
bool hardening_row(size_t i, const char **ret_section, const char **ret_name, const char **ret_key);
