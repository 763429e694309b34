/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stdio.h>

#include "log.h"
#include "parse-util.h"
#include "systemd-version.h"

static unsigned version_set;

int systemd_version_parse(const char *s, unsigned *ret) {
        unsigned v = 0;
        const char *p = s;

        if (!s || !isdigit((unsigned char) *p))
                return -EINVAL;
        for (; isdigit((unsigned char) *p) && v < 100000; p++)
                v = v * 10 + (unsigned) (*p - '0');
        if (v < 200 || v >= 100000 || (*p && *p != '.' && *p != '-' && *p != '~' && *p != ' ' && *p != '\n'))
                return -EINVAL;
        *ret = v;
        return 0;
}

unsigned systemd_version_from_maps(const char *maps) {
        static const char tag[] = "/libsystemd-core-";

        for (const char *p = maps; p && (p = strstr(p, tag)); p++) {
                unsigned v;

                if (systemd_version_parse(p + strlen(tag), &v) >= 0)
                        return v;
        }
        return 0;
}

static unsigned running_version(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/1/maps", "re");
        char line[4096];

        if (!f)
                return 0;
        while (fgets(line, sizeof line, f)) {
                unsigned v = systemd_version_from_maps(line);
                if (v > 0)
                        return v;
        }
        return 0;
}

void systemd_version_set(unsigned version) {
        version_set = version;
}

unsigned systemd_version(void) {
        const char *e = getenv("CLOISTER_SYSTEMD_VERSION");
        unsigned v;

        /* The manager's own answer first: the caller of cloisterctl run owns its environment, and
         * an older version there would drop the rows that close something on the real one. */
        if (version_set > 0)
                return version_set;
        if (e && systemd_version_parse(e, &v) >= 0)
                return v;
        v = running_version();
        return v > 0 ? v : SYSTEMD_BUILD_VERSION;
}

/* Each row: the first version that knows the directive, and why cloister sets it
 * (docs/profile.md has the table). Only what is understood is here. */
static const struct {
        unsigned since;
        const char *section, *key, *value;
} versioned_rows[] = {
        /* 254+: the default MemoryPressureWatch=auto hands the service its cgroup's
         * memory.pressure to write a trigger into, despite ProtectControlGroups=yes. */
        { 254, "Service", "MemoryPressureWatch", "no" },
};

int profile_add_versioned(UnitSettings *s, unsigned version) {
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(versioned_rows) && r >= 0; i++)
                if (version >= versioned_rows[i].since)
                        r = unit_settings_add(s, versioned_rows[i].section, versioned_rows[i].key,
                                              versioned_rows[i].value);
        return r;
}
