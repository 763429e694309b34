/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cmdline.h"
#include "conf-files.h"
#include "deps.h"
#include "generator-output.h"
#include "generator-project.h"
#include "log.h"
#include "profile-deps.h"
#include "project.h"

int generate_projects(const GeneratorOutput *o, char * const *config_dirs) {
        ConfFileList projects = {};
        bool rejected = false;
        int r;

        r = conf_files_list(config_dirs, "projects", ".project", &projects);
        if (r < 0)
                return log_error_errno(r, "Failed to list project files: %m");

        for (size_t i = 0; i < projects.n; i++) {
                _cleanup_(project_freep) Project *p = NULL;
                _cleanup_free_ char *unit = NULL;
                UnitSettings s = {};

                if (project_load(projects.files[i].path, &p) < 0) {
                        rejected = true;
                        continue;
                }
                if (!project_has_deps(p))
                        continue;
                unit = project_deps_unit(p->name);
                if (!unit || profile_deps_unit(p, &s) < 0) {
                        log_oom();
                        rejected = true;
                        continue;
                }
                if (generator_write_unit(o, unit, p->path, &s) < 0)
                        rejected = true;
                unit_settings_done(&s);
        }
        conf_file_list_done(&projects);
        return rejected ? 1 : 0;
}
