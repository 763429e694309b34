/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/profile/systemd-version.c: which systemd the profile is rendered for, and the rows only
 * newer versions get. */

#include <stdlib.h>

#include "systemd-version.h"
#include "tap.h"

static void test_parse(void) {
        static const struct { const char *in; unsigned out; } good[] = {
                { "252", 252 }, { "252.39-1~deb12u2", 252 }, { "257.9-1~deb13u1", 257 },
                { "257~rc3", 257 }, { "258 (258.1-1)", 258 },
        };
        static const char *const bad[] = { "", "v257", "systemd 257", "25", "257x", "-257", "9999999" };
        unsigned v;

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                if (is_int(systemd_version_parse(good[i].in, &v), 0, "version \"%s\" parses", good[i].in))
                        is_int((int) v, (int) good[i].out, "version \"%s\" is %u", good[i].in, good[i].out);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ok(systemd_version_parse(bad[i], &v) < 0, "version \"%s\" is refused", bad[i]);
}

static void test_maps(void) {
        is_int((int) systemd_version_from_maps(
                       "7f12-7f13 r-xp 00000000 fe:01 1234 /usr/lib/x86_64-linux-gnu/systemd/libsystemd-core-257.so\n"),
               257, "PID 1 mapping libsystemd-core-257.so runs 257");
        is_int((int) systemd_version_from_maps(
                       "7f12-7f13 r-xp 00000000 fe:01 1234 /usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-252.so\n"),
               0, "libsystemd-shared alone (any systemd tool) does not say PID 1 is the manager");
        is_int((int) systemd_version_from_maps("55d0-55d1 r-xp 00000000 fe:01 99 /sbin/init\n"), 0,
               "a PID 1 that is not systemd says nothing");
}

static void test_override(void) {
        setenv("CLOISTER_SYSTEMD_VERSION", "257", 1);
        is_int((int) systemd_version(), 257, "$CLOISTER_SYSTEMD_VERSION wins");
        unsetenv("CLOISTER_SYSTEMD_VERSION");
        systemd_version_set(254);
        is_int((int) systemd_version(), 254, "a version set by the caller (the manager's, over the bus) wins over the guess");
        setenv("CLOISTER_SYSTEMD_VERSION", "252", 1);
        is_int((int) systemd_version(), 254,
               "the manager's version wins over $CLOISTER_SYSTEMD_VERSION (cloisterctl's caller owns its environment)");
        unsetenv("CLOISTER_SYSTEMD_VERSION");
        systemd_version_set(0);
        ok(systemd_version() >= 252, "without either, the running or the build-time version (%u)", systemd_version());
}

static void test_rows(void) {
        UnitSettings s = {};

        is_int(profile_add_versioned(&s, 252), 0, "rendering for 252 succeeds");
        ok(!unit_settings_get(&s, "Service", "MemoryPressureWatch"), "252: no MemoryPressureWatch= (an unknown key there)");
        unit_settings_done(&s);
        s = (UnitSettings) {};
        is_int(profile_add_versioned(&s, 253), 0, "rendering for 253 succeeds");
        ok(!unit_settings_get(&s, "Service", "MemoryPressureWatch"), "253: no MemoryPressureWatch= (added in 254)");
        unit_settings_done(&s);
        s = (UnitSettings) {};
        is_int(profile_add_versioned(&s, 254), 0, "rendering for 254 succeeds");
        is_str(unit_settings_get(&s, "Service", "MemoryPressureWatch"), "no", "254: MemoryPressureWatch=no (the first version that has it)");
        unit_settings_done(&s);
        s = (UnitSettings) {};
        is_int(profile_add_versioned(&s, 257), 0, "rendering for 257 succeeds");
        is_str(unit_settings_get(&s, "Service", "MemoryPressureWatch"), "no",
               "257: MemoryPressureWatch=no (the agent gets no writable memory.pressure)");
        unit_settings_done(&s);
}

int main(void) {
        test_parse();
        test_maps();
        test_override();
        test_rows();
        return tap_done();
}
