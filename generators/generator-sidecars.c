/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "conf-files.h"
#include "generator-sidecars.h"
#include "log.h"
#include "profile-sidecar.h"

void sidecar_set_done(SidecarSet *set) {
        for (size_t i = 0; i < set->n; i++) {
                sidecar_free(set->items[i]);
                strv_free(set->reached_by[i]);
        }
        set->items = mfree(set->items);
        set->reached_by = mfree(set->reached_by);
        set->n = 0;
}

int sidecar_set_load(char * const *config_dirs, const CloisterConf *conf, SidecarSet *ret, bool *rejected) {
        ConfFileList files = {};
        SidecarSet set = {};
        int r;

        r = conf_files_list(config_dirs, "sidecars", ".sidecar", &files);
        if (r < 0)
                return log_error_errno(r, "Failed to list sidecar files: %m");
        set.items = calloc(files.n + 1, sizeof(Sidecar *));
        set.reached_by = calloc(files.n + 1, sizeof(char **));
        if (!set.items || !set.reached_by) {
                conf_file_list_done(&files);
                sidecar_set_done(&set);
                return log_oom();
        }
        for (size_t i = 0; i < files.n; i++) {
                Sidecar *sc = NULL;

                if (sidecar_load(files.files[i].path, conf, &sc) < 0) {
                        *rejected = true;
                        continue;
                }
                set.items[set.n++] = sc;
        }
        conf_file_list_done(&files);
        *ret = set;
        return 0;
}

const Sidecar *sidecar_set_find(const SidecarSet *set, const char *name) {
        for (size_t i = 0; i < set->n; i++)
                if (streq(set->items[i]->name, name))
                        return set->items[i];
        return NULL;
}

int sidecar_set_note_grant(SidecarSet *set, const char *sidecar, const char *role) {
        for (size_t i = 0; i < set->n; i++)
                if (streq(set->items[i]->name, sidecar))
                        return strv_extend(&set->reached_by[i], role) < 0 ? log_oom() : 0;
        return 0;
}

/* The socket directory is 0555 (docs/overview.md, Files and search paths). systemd creates it so with the socket (DirectoryMode=);
 * one that exists already keeps its mode, so it is checked here where it can be seen. */
static bool dir_contract_holds(const Sidecar *sc) {
        _cleanup_free_ char *dir = strprintf(SIDECAR_SERVICES_DIR "/%s", sc->name);
        const char *reason;
        bool fatal;

        if (!dir) {
                log_oom();
                return false;
        }
        reason = sidecar_dir_check(dir, 0, &fatal);
        if (reason && fatal) {
                log_error("%s: %s %s: anyone who can write there could put their own socket in the sidecar's place; "
                          "not generating sidecar %s (make it root-owned, mode 0555, or remove it).",
                          sc->path, dir, reason, sc->name);
                return false;
        }
        if (reason)
                log_warning("%s: %s %s; systemd creates it 0555 only when it does not exist yet.", sc->path, dir, reason);
        return true;
}

static int write_sidecar(const GeneratorOutput *o, const Sidecar *sc, char * const *reached_by) {
        _cleanup_strv_free_ char **comments = NULL;
        _cleanup_free_ char *link = strprintf("sockets.target.wants/sidecar@%s.socket", sc->name),
                *target = strprintf("../sidecar@%s.socket", sc->name);
        int r = 0;

        if (!link || !target)
                return log_oom();
        if (strv_extend(&comments, "reached by roles:") < 0)
                return log_oom();
        STRV_FOREACH(role, reached_by) {
                _cleanup_free_ char *c = strprintf("  %s (agent@%s.service)", *role, *role);
                if (!c || strv_extend(&comments, c) < 0)
                        return log_oom();
        }
        if (!reached_by) {
                _cleanup_free_ char *c = strprintf("  none (no generated role has Service=%s)", sc->name);
                if (!c || strv_extend(&comments, c) < 0)
                        return log_oom();
        }

        for (SidecarUnitKind k = 0; k < _SIDECAR_UNIT_MAX && r >= 0; k++) {
                _cleanup_free_ char *name = profile_sidecar_unit_name(k, sc->name);
                UnitSettings s = {};

                if (!name)
                        return log_oom();
                if (profile_sidecar_units[k].render(sc, &s) < 0)
                        return log_oom();
                r = generator_write_unit_commented(o, name, sc->path, k == SIDECAR_UNIT_SOCKET ? comments : NULL, &s);
                unit_settings_done(&s);
        }
        return r >= 0 ? generator_add_symlink(o, link, target) : r;
}

int sidecar_set_write(const GeneratorOutput *o, const SidecarSet *set) {
        bool rejected = false;

        for (size_t i = 0; i < set->n; i++) {
                if (!dir_contract_holds(set->items[i]) || write_sidecar(o, set->items[i], set->reached_by[i]) < 0)
                        rejected = true;
        }
        return rejected ? 1 : 0;
}
