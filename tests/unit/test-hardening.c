/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One hardening base for every unit cloister ships or generates (lib/profile/hardening.c):
 * each unit is rendered, its effective value of every base directive is compared with the
 * base's, and every difference must be a row of docs/profile.md's table "One hardening base",
 * with the same value; a row there that no unit has any more fails too.
 *
 * The effective value of a directive is its assignments in order after the last empty one
 * (the reset), joined with "; "; "(left out)" when it has none. */

#include "cloister-conf.h"
#include "hardening.h"
#include "profile-broker.h"
#include "profile-deps.h"
#include "profile-sidecar.h"
#include "profile.h"
#include "tap.h"
#include "test-util.h"

static char *effective(const UnitSettings *s, const char *section, const char *key) {
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 1;
        char *v;

        for (size_t i = 0; i < s->n; i++) {
                if (!streq(s->items[i].section, section) || !streq(s->items[i].key, key))
                        continue;
                if (isempty(s->items[i].value))
                        l = strv_free(l);
                else if (strv_extend(&l, s->items[i].value) < 0)
                        tap_bail_out("OOM");
        }
        if (!l)
                return strdup("(left out)");
        STRV_FOREACH(x, l)
                n += strlen(*x) + 2;
        v = calloc(1, n);
        STRV_FOREACH(x, l) {
                if (x != l)
                        strcat(v, "; ");
                strcat(v, *x);
        }
        return v;
}

/* docs/profile.md: "| `unit` | `Key=` | `value` | why |" rows of the table after the heading. */
typedef struct DocRow {
        char unit[128], key[64], value[1024];
        bool used;
} DocRow;

static size_t read_docs(const char *path, DocRow *rows, size_t max) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char line[4096];
        bool in = false;
        size_t n = 0;

        if (!f)
                tap_bail_out("cannot open the docs file");
        while (fgets(line, sizeof line, f)) {
                if (startswith(line, "## "))
                        in = startswith(line, "## One hardening base");
                if (!in || !startswith(line, "| `") || n == max)
                        continue;
                if (sscanf(line, "| `%127[^`]` | `%63[^=`]=` | `%1023[^`]` |", rows[n].unit, rows[n].key, rows[n].value) == 3 ||
                    (sscanf(line, "| `%127[^`]` | `%63[^=`]=` | %1023[^|]|", rows[n].unit, rows[n].key, rows[n].value) == 3 &&
                     (rows[n].value[strlen(rows[n].value) - 1] = 0, streq(rows[n].value, "(left out)"))))
                        n++;
        }
        return n;
}

static void check_unit(const char *unit, const UnitSettings *s, const UnitSettings *base, DocRow *docs, size_t n_docs) {
        const char *section, *name, *key;
        unsigned differences = 0;

        for (size_t i = 0; hardening_row(i, &section, &name, &key); i++) {
                _cleanup_free_ char *want = NULL, *got = NULL;
                bool documented = false;

                if (streq(name, "SystemCallFilter~"))
                        continue;       /* one value with SystemCallFilter= */
                want = effective(base, section, key);
                got = effective(s, section, key);
                if (streq(want, got))
                        continue;
                differences++;
                for (size_t d = 0; d < n_docs; d++)
                        if (streq(docs[d].unit, unit) && streq(docs[d].key, key)) {
                                documented = streq(docs[d].value, got);
                                docs[d].used = true;
                        }
                if (!ok(documented, "%s: %s=%s differs from the base and is listed in docs/profile.md", unit, key, got))
                        diag("add the row: | `%s` | `%s=` | `%s` | why |", unit, key, got);
        }
        diag("%s: %u differences from the hardening base", unit, differences);
}

int main(int argc, char *argv[]) {
        char *tmpdir = test_tmpdir_new();
        _cleanup_free_ char *dir = test_path(tmpdir, "conf"), *sc_path = NULL;
        char **dirs = test_dirs(dir, NULL);
        UnitSettings base = {}, agent = {}, broker = {}, deps = {}, sc[_SIDECAR_UNIT_MAX] = {};
        CloisterConf *conf = NULL;
        Sidecar *sidecar = NULL;
        DocRow docs[128] = {};
        size_t n_docs;

        if (argc != 2)
                tap_bail_out("usage: test-hardening DOCS/PROFILE.MD");
        n_docs = read_docs(argv[1], docs, ELEMENTSOF(docs));
        ok(n_docs > 0, "docs/profile.md lists the units' differences (%zu rows)", n_docs);

        free(test_write_file(dir, "cloister.conf", "[Sandbox]\nMemory=1G\n"));
        sc_path = test_write_file(dir, "sidecars/inference.sidecar", "[Sidecar]\nExec=/usr/bin/server\nPort=8080\n");
        if (cloister_conf_load(dirs, &conf) < 0 || sidecar_load(sc_path, conf, &sidecar) < 0)
                tap_bail_out("cannot load the test sidecar");

        Project project = { .name = (char *) "webapp", .path = (char *) "/etc/cloister/projects/webapp.project",
                            .workspace = (char *) "/srv/webapp",
                            .lockfiles = { [DEPS_PIP] = (char *) "requirements.txt", [DEPS_NPM] = (char *) "package-lock.json" } };

        if (hardening_add(&base, NULL) < 0 || profile_static(&agent) < 0 || profile_broker(&broker) < 0 ||
            profile_deps_unit(&project, &deps) < 0)
                tap_bail_out("rendering failed");
        for (SidecarUnitKind k = SIDECAR_UNIT_PROXY; k < _SIDECAR_UNIT_MAX; k++)
                if (profile_sidecar_units[k].render(sidecar, &sc[k]) < 0)
                        tap_bail_out("rendering the sidecar failed");

        check_unit("agent@.service", &agent, &base, docs, n_docs);
        check_unit("sidecar@.service", &sc[SIDECAR_UNIT_PROXY], &base, docs, n_docs);
        check_unit("sidecar-runtime@.service", &sc[SIDECAR_UNIT_RUNTIME], &base, docs, n_docs);
        check_unit("cloister-deps@.service", &deps, &base, docs, n_docs);
        check_unit("cloister-broker.service", &broker, &base, docs, n_docs);
        for (size_t d = 0; d < n_docs; d++)
                if (!ok(docs[d].used, "docs/profile.md: %s %s= is a difference the unit still has", docs[d].unit, docs[d].key))
                        diag("remove the row, or the unit lost a difference it should have");

        /* a change of a directive the base does not have would change nothing, silently */
        UnitSettings bad = {};
        static const HardeningChange typo[] = { { "ProtectHomes", "tmpfs", "typo" }, {} };
        is_int(hardening_add(&bad, typo), -EINVAL, "a change of a row the base does not have is refused");
        unit_settings_done(&bad);

        unit_settings_done(&base);
        unit_settings_done(&agent);
        unit_settings_done(&broker);
        unit_settings_done(&deps);
        for (SidecarUnitKind k = 0; k < _SIDECAR_UNIT_MAX; k++)
                unit_settings_done(&sc[k]);
        sidecar_free(sidecar);
        cloister_conf_free(conf);
        strv_free(dirs);
        test_tmpdir_remove(tmpdir);
        return tap_done();
}
