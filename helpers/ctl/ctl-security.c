/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ctl-security.h"
#include "ctl-unit.h"
#include "log.h"
#include "profile-sidecar.h"

static int write_part(const char *dir, const char *name, const UnitPart *p) {
        _cleanup_free_ char *path = strprintf("%s/%s", dir, name);
        FILE *f;
        int r;

        if (!path)
                return log_oom();
        f = fopen(path, "we");
        if (!f)
                return log_error_errno(errno, "Failed to create %s: %m", path);
        r = unit_part_write(p, f);
        if (fclose(f) != 0 && r >= 0)
                r = log_error_errno(errno, "Failed to write %s: %m", path);
        return r;
}

static int mkdir_p(const char *path) {
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return log_oom();
        for (char *slash = strchr(p + 1, '/'); ; slash = strchr(slash + 1, '/')) {
                if (slash)
                        *slash = 0;
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        return log_error_errno(errno, "Failed to create %s: %m", p);
                if (!slash)
                        return 0;
                *slash = '/';
        }
}

/* <tmp>/etc/systemd/system/{agent@.service, agent@<role>.service.d/NAME.conf} */
static int stage_unit(const CtlModel *m, const CtlRole *role, const char *tmp) {
        _cleanup_free_ char *sys = strprintf("%s/etc/systemd/system", tmp), *dropins = NULL;
        UnitPart *parts = NULL;
        size_t n = 0;
        const char *base;
        int r;

        if (!sys || !(dropins = strprintf("%s/agent@%s.service.d", sys, role->name)))
                return log_oom();
        r = ctl_unit_text(m, role, &parts, &n);
        if (r < 0)
                return r;
        if (r >= 0)
                r = mkdir_p(dropins);
        base = strrchr(parts[0].path, '/');
        if (r >= 0)
                r = write_part(sys, base ? base + 1 : parts[0].path, &parts[0]);
        for (size_t i = 1; r >= 0 && i < n; i++)
                r = write_part(dropins, parts[i].name, &parts[i]);
        unit_parts_free(parts, n);
        return r;
}

/* "→ Overall exposure level for agent@x.service: 0.4 SAFE 😀" → "0.4 SAFE" */
static char *parse_exposure(FILE *f) {
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        char *found = NULL;

        while (getline(&line, &size, f) >= 0) {
                char *p = strstr(line, "Overall exposure level for "), *colon;
                double level;
                char word[32];

                if (!p || !(colon = strstr(p, ": ")))
                        continue;
                if (sscanf(colon + 2, "%lf %31[A-Z]", &level, word) == 2) {
                        free(found);
                        found = strprintf("%.1f %s", level, word);
                }
        }
        return found;
}

static int run_analyze(const char *tmp, const char *unit, char **ret) {
        const char *tool = getenv("CLOISTER_SYSTEMD_ANALYZE") ?: "systemd-analyze";
        _cleanup_free_ char *root = strprintf("--root=%s", tmp);
        int fds[2], status;
        pid_t pid;
        FILE *f;

        *ret = NULL;
        if (!root || pipe2(fds, O_CLOEXEC) < 0)
                return log_oom();
        pid = fork();
        if (pid < 0) {
                close(fds[0]);
                close(fds[1]);
                return log_error_errno(errno, "Failed to fork: %m");
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (dup2(fds[1], STDOUT_FILENO) < 0 || null < 0 || dup2(null, STDERR_FILENO) < 0 ||
                    dup2(null, STDIN_FILENO) < 0)
                        _exit(127);
                setenv("SYSTEMD_COLORS", "0", 1);
                unsetenv("SYSTEMD_UNIT_PATH");  /* --root= of the copy decides */
                execlp(tool, tool, "security", "--offline=yes", root, "--no-pager", unit, (char *) NULL);
                _exit(127);
        }
        close(fds[1]);
        f = fdopen(fds[0], "re");
        if (f) {
                *ret = parse_exposure(f);
                fclose(f);
        } else
                close(fds[0]);
        (void) waitpid(pid, &status, 0);
        return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) remove(path);
        return 0;
}

int ctl_security_exposure(const CtlModel *m, const CtlRole *role, char **ret) {
        _cleanup_free_ char *unit = strprintf("agent@%s.service", role->name);
        char tmp[] = "/tmp/cloisterctl-security-XXXXXX";
        int r;

        *ret = NULL;
        if (!unit)
                return log_oom();
        if (!mkdtemp(tmp))
                return log_error_errno(errno, "Failed to create a temporary directory: %m");
        r = stage_unit(m, role, tmp);
        if (r >= 0)
                r = run_analyze(tmp, unit, ret);
        (void) nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        return r;
}

/* <tmp>/etc/systemd/system/{sidecar@NAME.socket, sidecar@NAME.service, sidecar-runtime@NAME.service}:
 * full unit files, as the generator writes them (the proxy's JoinsNamespaceOf= and the
 * socket's Service= resolve within the copy). */
static int stage_sidecar(const Sidecar *sc, const char *tmp) {
        _cleanup_free_ char *sys = strprintf("%s/etc/systemd/system", tmp);
        int r;

        if (!sys)
                return log_oom();
        r = mkdir_p(sys);
        for (SidecarUnitKind k = 0; r >= 0 && k < _SIDECAR_UNIT_MAX; k++) {
                _cleanup_free_ char *name = profile_sidecar_unit_name(k, sc->name),
                        *path = name ? strprintf("%s/%s", sys, name) : NULL;
                UnitSettings s = {};
                FILE *f;

                if (!path || profile_sidecar_units[k].render(sc, &s) < 0) {
                        unit_settings_done(&s);
                        return log_oom();
                }
                f = fopen(path, "we");
                if (!f)
                        r = log_error_errno(errno, "Failed to create %s: %m", path);
                else {
                        r = unit_settings_write(f, &s);
                        if (fclose(f) != 0 && r >= 0)
                                r = log_error_errno(errno, "Failed to write %s: %m", path);
                }
                unit_settings_done(&s);
        }
        return r;
}

int ctl_security_exposure_sidecar(const Sidecar *sc, char **ret_runtime, char **ret_proxy) {
        _cleanup_free_ char *runtime = profile_sidecar_unit_name(SIDECAR_UNIT_RUNTIME, sc->name),
                *proxy = profile_sidecar_unit_name(SIDECAR_UNIT_PROXY, sc->name);
        char tmp[] = "/tmp/cloisterctl-security-XXXXXX";
        int r;

        *ret_runtime = *ret_proxy = NULL;
        if (!runtime || !proxy)
                return log_oom();
        if (!mkdtemp(tmp))
                return log_error_errno(errno, "Failed to create a temporary directory: %m");
        r = stage_sidecar(sc, tmp);
        if (r >= 0)
                r = run_analyze(tmp, runtime, ret_runtime);
        if (r >= 0)
                r = run_analyze(tmp, proxy, ret_proxy);
        (void) nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        return r;
}
