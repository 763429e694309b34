/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>
#include "macro.h"

/* An ordered list of unit-file assignments: the form in which the profile is handed to a
 * renderer. Values are already in unit-file syntax (quoted, specifiers escaped). */
typedef struct UnitSetting {
        const char *section;    /* static string */
        const char *key;        /* static string */
        char *value;
} UnitSetting;

typedef struct UnitSettings {
        UnitSetting *items;
        size_t n;
} UnitSettings;

void unit_settings_done(UnitSettings *s);
int unit_settings_add(UnitSettings *s, const char *section, const char *key, const char *value);
int unit_settings_addf(UnitSettings *s, const char *section, const char *key, const char *fmt, ...) _printf_(4, 5);

/* -EINVAL (logged, naming section and key) if a directive has no row in the directive table
 * (lib/profile/directives.h), or a value holds a line break, ends in a continuation backslash
 * or is not UTF-8. unit_settings_write() checks first. */
int unit_settings_check(const UnitSettings *s);

/* Writes "[Section]" groups in order of first appearance, each "Key=value" in list order. */
int unit_settings_write(FILE *f, const UnitSettings *s);

/* Finds the last value of section/key, or NULL. */
const char *unit_settings_get(const UnitSettings *s, const char *section, const char *key);
