/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: arbitrary bytes as sidecars/<name>.sidecar (cloister.sidecar(5)), through the strict INI
 * reader, the table-driven parser and the three renderers (socket, proxy, runtime). An
 * accepted file has an absolute Exec=, a port, a finite Memory= and a Health= path, and each
 * of its units renders; the runtime keeps its own network namespace. */
#include "cloister-conf.h"
#include "fuzz-util.h"
#include "profile-sidecar.h"
#include "sidecar.h"

static void render(int (*fn)(const Sidecar *, UnitSettings *), const Sidecar *sc, const char *what) {
        UnitSettings s = {};
        const char *v;
        FILE *null;

        fuzz_assert(fn(sc, &s) >= 0, "an accepted sidecar renders its %s unit", what);
        if (!streq(what, "socket")) {
                /* both the runtime and the proxy (which joins it) live in the runtime's own,
                 * loopback-only network namespace, whatever the file says */
                v = unit_settings_get(&s, "Service", "PrivateNetwork");
                fuzz_assert(v && streq(v, "yes"), "the %s unit keeps PrivateNetwork=yes (got %s)", what, v ?: "nothing");
        }
        null = fopen("/dev/null", "we");
        if (null) {
                unit_settings_write(null, &s);
                fclose(null);
        }
        unit_settings_done(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *dirs[] = { (char *) fuzz_scratch(), NULL };
        static const char conf_text[] = "[Sandbox]\nMemory=1G\n";
        _cleanup_free_ char *conf_path = fuzz_write("cloister.conf", conf_text, sizeof conf_text - 1);
        _cleanup_free_ char *path = fuzz_write("sidecars/fuzz.sidecar", data, size);
        CloisterConf *conf = NULL;
        Sidecar *sc = NULL;

        if (!path || !conf_path)
                return 0;
        fuzz_assert(cloister_conf_load(dirs, &conf) >= 0, "the fixed configuration must always load");
        if (sidecar_load(path, conf, &sc) >= 0) {
                fuzz_assert(streq(sc->name, "fuzz") && sc->argv && sc->argv[0] && sc->argv[0][0] == '/',
                            "an accepted sidecar has an absolute Exec=");
                fuzz_assert(sc->port > 0, "an accepted sidecar has a Port=");
                fuzz_assert(sc->limits.memory > 0 && sc->limits.memory != UNSET_U64,
                            "an accepted sidecar has a finite Memory=");
                fuzz_assert(!sc->health || sc->health[0] == '/', "Health= is a path");
                render(profile_sidecar_socket, sc, "socket");
                render(profile_sidecar_proxy, sc, "proxy");
                render(profile_sidecar_runtime, sc, "runtime");
                sidecar_free(sc);
        } else
                fuzz_assert(!sc, "a refused sidecar returns nothing");
        cloister_conf_free(conf);
        unlink(path);
        return 0;
}
