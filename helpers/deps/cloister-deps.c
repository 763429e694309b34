/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <sys/stat.h>

#include "conf-files.h"
#include "deps-install.h"
#include "log.h"
#include "parse-util.h"
#include "project.h"

/* cloister-deps PROJECT: the ExecStart= of cloister-deps@PROJECT.service (cloister.project(5)). */
int main(int argc, char *argv[]) {
        enum { ARG_CACHE_DIR = 0x100, ARG_PYTHON, ARG_NPM, ARG_CHECK };
        static const struct option options[] = {
                { "cache-dir", required_argument, NULL, ARG_CACHE_DIR },
                { "python",    required_argument, NULL, ARG_PYTHON },
                { "npm",       required_argument, NULL, ARG_NPM },
                { "check",     no_argument,       NULL, ARG_CHECK },
                { "help",      no_argument,       NULL, 'h' },
                { "version",   no_argument,       NULL, 'V' },
                {}
        };
        InstallOptions o = { .cache_dir = DEPS_CACHE_DIR, .python = "python3", .npm = "npm" };
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_(project_freep) Project *p = NULL;
        int c, r, failed = 0;

        log_set_prefix("cloister-deps");
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case ARG_CACHE_DIR:
                        if (optarg[0] != '/')
                                return log_error_errno(EINVAL, "--cache-dir= must be an absolute path."), 2;
                        o.cache_dir = optarg;
                        break;
                case ARG_PYTHON:
                        o.python = optarg;
                        break;
                case ARG_NPM:
                        o.npm = optarg;
                        break;
                case ARG_CHECK:
                        o.check_only = true;
                        break;
                case 'h':
                        printf("%s [--cache-dir=DIR] [--python=PATH] [--npm=PATH] [--check] PROJECT\n\n"
                               "Materialises the dependency sets of projects/PROJECT.project once into\n"
                               DEPS_CACHE_DIR "/<ecosystem>-<sha256 of the lockfile>/.\n"
                               "Run by cloister-deps@PROJECT.service. See cloister.project(5).\n", argv[0]);
                        return 0;
                case 'V':
                        puts("cloister-deps " PACKAGE_VERSION);
                        return 0;
                default:
                        return 2;
                }
        if (optind != argc - 1) {
                log_error("Expected exactly one project name.");
                return 2;
        }
        if (!name_is_valid(argv[optind])) {
                log_error("Invalid project name \"%s\".", argv[optind]);
                return 2;
        }
        if (conf_dirs(&dirs) < 0)
                return log_oom(), 1;
        r = project_find_and_load(dirs, argv[optind], &p);
        if (r < 0)
                return 1;
        if (!project_has_deps(p)) {
                log_info("Project %s declares no dependency set.", p->name);
                return 0;
        }
        umask(0022);    /* agents read the sets as other users */
        if (!o.check_only)
                deps_clean_stale(o.cache_dir);
        for (DepsEcosystem e = 0; e < _DEPS_ECOSYSTEM_MAX; e++)
                if (p->lockfiles[e] && deps_install_set(&o, p, e) < 0)
                        failed++;
        fflush(stdout);
        return failed ? 1 : 0;
}
