/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: arbitrary bytes as a role file, through the strict INI reader, the
 * table-driven parser and the profile renderer. Also a cloister.conf target (FUZZ_CONF). */
#include <stdint.h>
#include <sys/stat.h>

#include "cloister-conf.h"
#include "log.h"
#include "profile.h"
#include "role.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/cloister-fuzz-XXXXXX";
static char *dirs[2];

static int write_file(const char *path, const uint8_t *data, size_t size) {
        FILE *f = fopen(path, "we");
        if (!f)
                return -errno;
        fwrite(data, 1, size, f);
        return fclose(f) == 0 ? 0 : -EIO;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static bool init;
        _cleanup_free_ char *path = NULL;
        CloisterConf *conf = NULL;

        if (!init) {
                if (!mkdtemp(dir))
                        abort();
                dirs[0] = dir;
                log_set_max_level(LOG_EMERG - 1); /* quiet */
                init = true;
        }
#ifdef FUZZ_CONF
        path = strprintf("%s/cloister.conf", dir);
        if (!path || write_file(path, data, size) < 0)
                return 0;
        if (cloister_conf_load(dirs, &conf) >= 0)
                cloister_conf_free(conf);
        unlink(path);
#else
        Role *role = NULL;
        UnitSettings s = {};
        FILE *null;
        static const char conf_text[] = "[Sandbox]\nMemory=1G\nAllowHostNetwork=yes\n[Broker]\nSocket=/run/cloister/broker.sock\n[Upstream github]\nKind=http\nURL=https://api.github.com\n";
        _cleanup_free_ char *conf_path = strprintf("%s/cloister.conf", dir);
        path = strprintf("%s/fuzz.role", dir);
        if (!path || !conf_path || write_file(conf_path, (const uint8_t *) conf_text, sizeof conf_text - 1) < 0 ||
            write_file(path, data, size) < 0)
                return 0;
        if (cloister_conf_load(dirs, &conf) < 0)
                abort(); /* the fixed configuration must always load */
        if (role_load(path, conf, dirs, &role) >= 0) {
                if (profile_role(role, conf, &s) >= 0) {
                        null = fopen("/dev/null", "we");
                        if (null) {
                                unit_settings_write(null, &s);
                                fclose(null);
                        }
                        unit_settings_done(&s);
                }
                role_free(role);
        }
        cloister_conf_free(conf);
        unlink(path);
#endif
        return 0;
}
