/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: arbitrary bytes as a role file, through the strict INI reader, the
 * table-driven parser and the profile renderer. Also a cloister.conf target (FUZZ_CONF).
 * The generator's invariants on the rendered units are fuzz-generator's. */
#include "cloister-conf.h"
#include "fuzz-util.h"
#include "profile.h"
#include "role.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *dirs[] = { (char *) fuzz_scratch(), NULL };
        _cleanup_free_ char *path = NULL;
        CloisterConf *conf = NULL;

#ifdef FUZZ_CONF
        path = fuzz_write("cloister.conf", data, size);
        if (!path)
                return 0;
        if (cloister_conf_load(dirs, &conf) >= 0)
                cloister_conf_free(conf);
        unlink(path);
#else
        static const char conf_text[] = "[Sandbox]\nMemory=1G\nAllowHostNetwork=yes\n[Broker]\nSocket=/run/cloister/broker.sock\n[Upstream github]\nKind=http\nURL=https://api.github.com\n";
        _cleanup_free_ char *conf_path = fuzz_write("cloister.conf", conf_text, sizeof conf_text - 1);
        Role *role = NULL;
        UnitSettings s = {};
        FILE *null;

        path = fuzz_write("roles/fuzz.role", data, size);
        if (!path || !conf_path)
                return 0;
        fuzz_assert(cloister_conf_load(dirs, &conf) >= 0, "the fixed configuration must always load");
        if (role_load(path, conf, dirs, &role) >= 0) {
                fuzz_assert(streq(role->name, "fuzz") && role->argv && role->argv[0] && role->argv[0][0] == '/',
                            "an accepted role has an absolute Exec=");
                fuzz_assert(role->limits.memory > 0 && role->limits.memory != UNSET_U64, "an accepted role has a finite Memory=");
                fuzz_assert(profile_role(role, conf, &s) >= 0, "an accepted role renders");
                null = fopen("/dev/null", "we");
                if (null) {
                        unit_settings_write(null, &s);
                        fclose(null);
                }
                unit_settings_done(&s);
                role_free(role);
        }
        cloister_conf_free(conf);
        unlink(path);
#endif
        return 0;
}
