/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the generator end to end (cloister-generator(8)). The input is a role file, optionally
 * followed by "\n%%project\n" and the project file it may name (projects/webapp.project),
 * and by "\n%%conf\n" and a cloister.conf replacing the fixed one below. generator_run()
 * writes into a scratch directory, twice; the invariants:
 *  - a refused role (or cloister.conf) produces nothing for it and exit status 1;
 *  - an accepted role gets its drop-in and both tmpfs mounts, exit status 0 (1 if the
 *    project file beside it is refused);
 *  - the drop-in never drops a locked directive: every line of it is a "[Section]" or a
 *    "Key=Value" whose key is one the role's own keys may set (the grant table below), with
 *    a value that grant allows; everything else in the template stays as rendered. A value
 *    that smuggles a newline, a continuation or a closed key shows up here as a line;
 *  - lib/profile/closed-surface.c's checker finds nothing in the output directory;
 *  - the output is byte-for-byte deterministic. */
#include <ctype.h>
#include <ftw.h>

#include "closed-surface.h"
#include "cmdline.h"
#include "parse-util.h"
#include "cloister-conf.h"
#include "conf-files.h"
#include "fuzz-util.h"
#include "generator.h"
#include "profile.h"
#include "project.h"
#include "role.h"

static const char default_conf[] =
        "[Sandbox]\nDefaultNetwork=daemon-only\nAllowHostNetwork=yes\nMemory=512M\nTmpSize=32M\n"
        "[Broker]\nSocket=/run/cloister/broker.sock\nLoopbackPort=7800\n"
        "[LLM]\nModel=m\nAPIKeyCredential=llm-key\n"
        "[Upstream github]\nKind=http\nURL=https://api.github.com\nAuthCredential=gh\n"
        "[Upstream issues]\nKind=mcp\nURL=http://127.0.0.1:9/mcp\n";

#define ROLE_REL "cfg/roles/fuzz.role"
#define PROJECT_REL "cfg/projects/webapp.project"
#define CONF_REL "cfg/cloister.conf"

/* ---- the output tree as one string: "relpath\n" then content or "-> target", sorted ---- */

static char **tree_names;
static size_t tree_n;
static size_t tree_prefix;

static int tree_collect(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
        char **t;

        if (flag == FTW_D || flag == FTW_DP)
                return 0;
        t = realloc(tree_names, sizeof(char *) * (tree_n + 1));
        if (!t)
                abort();
        tree_names = t;
        tree_names[tree_n] = strdup(p + tree_prefix);
        if (!tree_names[tree_n])
                abort();
        tree_n++;
        return 0;
}

static int str_cmp(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

static char *read_all(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t n = 0;

        if (!f)
                return NULL;
        if (getdelim(&buf, &n, 0, f) < 0) {
                free(buf);
                return strdup("");
        }
        return buf;
}

/* Every generated file (drop-ins, mounts, sidecar and project units): each line reads back
 * as one comment, "[Section]" or "Key=Value", never continues onto the next, and is UTF-8,
 * so no value the generator writes can smuggle a second assignment or make systemd refuse
 * the unit without a file:line. */
static void check_unit_syntax(const char *path, const char *text) {
        _cleanup_free_ char *copy = strdup(text);
        unsigned line = 0;

        if (!copy)
                abort();
        fuzz_assert(utf8_is_valid(text), "%s: not UTF-8", path);
        for (char *l = copy, *next; l; l = next) {
                next = strchr(l, '\n');
                if (next)
                        *next++ = 0;
                line++;
                fuzz_assert(!unit_value_continues(l), "%s:%u: a continuation line: \"%s\"", path, line, l);
                fuzz_assert(!strchr(l, '\r'), "%s:%u: a carriage return", path, line);
                if (*l == 0 || *l == '#')
                        continue;
                fuzz_assert(*l == '[' ? l[strlen(l) - 1] == ']' && !strchr(l + 1, '[') :
                            isalpha((unsigned char) *l) && strchr(l, '=') && !isspace((unsigned char) strchr(l, '=')[-1]),
                            "%s:%u: neither \"[Section]\" nor \"Key=Value\": \"%s\"", path, line, l);
        }
}

/* Returns the tree and sets *names / *n to the sorted relative paths (caller frees). */
static char *tree_dump(const char *dir, char ***names, size_t *n) {
        char *s = NULL;
        size_t len = 0;
        FILE *f;

        tree_names = NULL;
        tree_n = 0;
        tree_prefix = strlen(dir) + 1;
        if (nftw(dir, tree_collect, 16, FTW_PHYS) < 0)
                abort();
        if (tree_n > 0) /* qsort(NULL, 0, …) is undefined */
                qsort(tree_names, tree_n, sizeof(char *), str_cmp);
        f = open_memstream(&s, &len);
        if (!f)
                abort();
        for (size_t i = 0; i < tree_n; i++) {
                _cleanup_free_ char *p = strprintf("%s/%s", dir, tree_names[i]), *c = NULL;
                char target[4096];
                ssize_t l;

                if (!p)
                        abort();
                l = readlink(p, target, sizeof target - 1);
                if (l >= 0) {
                        target[l] = 0;
                        fprintf(f, "%s\n-> %s\n", tree_names[i], target);
                        continue;
                }
                c = read_all(p);
                fuzz_assert(c, "%s is readable", p);
                check_unit_syntax(p, c);
                fprintf(f, "%s\n%s\n", tree_names[i], c);
        }
        if (fclose(f) != 0)
                abort();
        *names = tree_names;
        *n = tree_n;
        return s;
}

static void names_free(char **names, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/* ---- what a role's keys may set in its drop-in ---- */

static bool ends_with(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && streq(s + a - b, suffix);
}

static bool value_in(const char *v, const char *const *set) {
        for (; *set; set++)
                if (streq(v, *set))
                        return true;
        return false;
}

/* Service=NAME: the agent wants and orders after the sidecar's socket unit. */
static bool granted_sidecar_socket(const Role *role, const char *v) {
        STRV_FOREACH(svc, role->services) {
                _cleanup_free_ char *unit = strprintf("sidecar@%s.socket", *svc);
                if (unit && streq(v, unit))
                        return true;
        }
        return false;
}

/* Service=NAME: the sidecar's socket directory, read-only, at the same place. */
static bool granted_sidecar_dir(const Role *role, const char *v) {
        STRV_FOREACH(svc, role->services) {
                _cleanup_free_ char *bind = strprintf("-/run/cloister/services/%s", *svc);
                if (bind && streq(v, bind))
                        return true;
        }
        return false;
}

/* GPUs=: only NVIDIA nodes and render nodes, read-write for the device cgroup. */
static bool is_gpu_node(const char *v) {
        return startswith(v, "/dev/nvidia") || startswith(v, "/dev/dri/renderD");
}

/* "-<stage dir>/<role>/<entry>:" up to `colon`: a source cloister-stage opened without
 * following symlinks, never a path systemd resolves itself. */
static bool is_staged(const Role *role, const char *v, const char *colon) {
        _cleanup_free_ char *prefix = strprintf("-" CLOISTER_STAGE_DIR "/%s/", role->name);
        const char *entry = prefix ? startswith(v, prefix) : NULL;

        return entry && entry < colon && !memchr(entry, '/', (size_t) (colon - entry));
}

/* "--tmp=/run/cloister/tmp/ROLE:SIZE" or its var-tmp: the role's own /tmp mounts, which
 * cloister-stage empties; never another path. */
static bool is_own_tmp_word(const Role *role, const char *w) {
        for (size_t i = 0; i < ELEMENTSOF(profile_tmp_dirs); i++) {
                _cleanup_free_ char *p = strprintf("--tmp=" CLOISTER_TMP_PREFIX "%s/%s:", profile_tmp_dirs[i], role->name);
                const char *size = p ? startswith(w, p) : NULL;
                if (size && *size && strspn(size, "0123456789") == strlen(size))
                        return true;
        }
        return false;
}

/* Every word after `prefix` is one of the role's own --tmp= mounts. */
static bool only_own_tmp(const Role *role, const char *v, const char *prefix) {
        _cleanup_free_ char *copy = NULL;
        const char *rest = startswith(v, prefix);

        if (!rest || (*rest && *rest != ' ') || !(copy = strdup(rest)))
                return false;
        for (char *w = strtok(copy, " "); w; w = strtok(NULL, " "))
                if (!is_own_tmp_word(role, w))
                        return false;
        return true;
}

/* The role's own mount sources and /tmp mounts, and nothing else, reach cloister-stage. */
static bool staged_sources_granted(const Role *role, const char *v) {
        _cleanup_free_ char *prefix = strprintf("+" CLOISTER_STAGE_PATH " start %s ", role->name), *copy = NULL;
        const char *rest = prefix ? startswith(v, prefix) : NULL;

        if (!rest || !(copy = strdup(rest)))
                return false;
        for (char *w = strtok(copy, " "); w; w = strtok(NULL, " ")) {
                const char *src = strchr(w, ':') ? strchr(strchr(w, ':') + 1, ':') : NULL;
                bool known = false;
                if (is_own_tmp_word(role, w))
                        continue;
                if (!src)
                        return false;
                src++;
                known = streq_ptr(src, role->input) || streq_ptr(src, role->output) ||
                        streq_ptr(src, role->workspace) || (src[0] == '@' && role->project);
                if (role->workspace && startswith(src, role->workspace) && streq(src + strlen(role->workspace), "/.git"))
                        known = true;
                for (size_t i = 0; i < role->n_read_only_mounts; i++)
                        if (streq(src, role->read_only_mounts[i].source))
                                known = true;
                if (!known)
                        return false;
        }
        return true;
}

static bool granted(const Role *role, const char *section, const char *key, const char *v) {
        NetworkMode m = role->network;

        if (streq(section, "Unit")) {
                _cleanup_free_ char *deps = role->project ? strprintf("cloister-deps@%s.service", role->project) : NULL;

                return value_in(key, (const char *const[]) { "Description", "SourcePath", "RequiresMountsFor", NULL }) ||
                       (value_in(key, (const char *const[]) { "Wants", "After", NULL }) && streq(v, "cloister-broker.socket") &&
                        m == NETWORK_DAEMON_ONLY) ||
                       (value_in(key, (const char *const[]) { "Wants", "After", NULL }) && granted_sidecar_socket(role, v)) ||
                       (value_in(key, (const char *const[]) { "Requires", "After", NULL }) && deps && streq(v, deps));
        }
        if (!streq(section, "Service"))
                return false;
        if (streq(key, "ExecStart")) {
                _cleanup_free_ char *prefix = strprintf("%s --role=%s --network=%s ", CLOISTER_SHIM_PATH, role->name,
                                                        network_mode_to_string(m));
                return isempty(v) || (prefix && startswith(v, prefix));
        }
        if (value_in(key, (const char *const[]) { "MemoryMax", "CPUQuota", "TasksMax", "RuntimeMaxSec", "TimeoutStopSec", NULL }))
                return !isempty(v) && !streq(v, "infinity");
        if (streq(key, "PrivateNetwork"))
                return streq(v, "no") && !network_mode_is_sealed(m);
        if (streq(key, "RestrictAddressFamilies"))
                return m == NETWORK_DAEMON_ONLY ? streq(v, "AF_INET AF_INET6") :
                       m == NETWORK_EGRESS || m == NETWORK_HOST ? streq(v, "AF_INET AF_INET6 AF_NETLINK") : false;
        if (streq(key, "IPAddressAllow"))
                return m == NETWORK_DAEMON_ONLY && streq(v, "localhost");
        if (streq(key, "IPAddressDeny"))
                return (m == NETWORK_EGRESS && (isempty(v) || streq(v, "localhost link-local multicast"))) ||
                       (m == NETWORK_HOST && isempty(v));
        if (streq(key, "BindPaths")) { /* writable: only the sandbox's own writable places */
                const char *colon = strrchr(v, ':');
                if (!role->output && colon && streq(colon, ":/output")) { /* the managed directory, systemd's own */
                        _cleanup_free_ char *dir = profile_managed_output(role);
                        return dir && strlen(dir) == (size_t) (colon - v) && strncmp(v, dir, strlen(dir)) == 0;
                }
                return colon && (value_in(colon + 1, (const char *const[]) { "/tmp", "/var/tmp", NULL }) ?
                                 startswith(v, "/run/cloister/") && !startswith(v, CLOISTER_STAGE_DIR) :
                                 value_in(colon + 1, (const char *const[]) { "/output", "/workspace", NULL }) &&
                                 is_staged(role, v, colon));
        }
        if (streq(key, "BindReadOnlyPaths")) { /* a role source only ever from the staging directory */
                const char *colon = strrchr(v, ':');
                return (colon && !strstr(v, ":rw") &&
                        (is_staged(role, v, colon) || startswith(v, "-" SANDBOX_BROKER_SOCKET ":"))) ||
                       granted_sidecar_dir(role, v) ||
                       (role->gpus && v[0] == '-' && is_gpu_node(v + 1) && !strchr(v, ':'));
        }
        if (streq(key, "ExecStartPre") && v[0] == '+')
                return staged_sources_granted(role, v);
        if (streq(key, "ExecStopPost")) {
                _cleanup_free_ char *want = strprintf("+" CLOISTER_STAGE_PATH " stop %s", role->name);
                return want && only_own_tmp(role, v, want);
        }
        if (streq(key, "DeviceAllow")) {
                const char *sp = strchr(v, ' ');
                _cleanup_free_ char *node = sp ? strndup(v, (size_t) (sp - v)) : NULL;
                return role->gpus && node && is_gpu_node(node) && streq(sp, " rw");
        }
        if (streq(key, "ExecStartPre")) /* GPUs=: the start check that names a missing node */
                return role->gpus && startswith(v, "/bin/sh -c \"test -c ");
        if (streq(key, "TemporaryFileSystem"))
                return startswith(v, "/dev/shm:") && strstr(v, ",nosuid,nodev,noexec") && !strchr(v, ' ');
        if (streq(key, "DynamicUser"))
                return streq(v, "no") && role->user;
        if (streq(key, "User"))
                return role->user && streq(v, role->user) && !streq(v, "root") && !streq(v, "0");
        if (streq(key, "MemoryDenyWriteExecute"))
                return streq(v, "no") && role->jit > 0;
        if (streq(key, "Restart"))
                return streq(v, "on-failure") && role->durability == DURABILITY_DURABLE;
        if (streq(key, "RestartPreventExitStatus"))
                return !isempty(v);
        /* a durable role's crash loop is slowed, never sped up (no start limit ends it) */
        if (streq(key, "RestartSec"))
                return streq(v, "2s") && role->durability == DURABILITY_DURABLE;
        if (streq(key, "RestartSteps"))
                return streq(v, "5") && role->durability == DURABILITY_DURABLE;
        if (streq(key, "RestartMaxDelaySec"))
                return streq(v, "1min") && role->durability == DURABILITY_DURABLE;
        if (streq(key, "MemoryPressureWatch")) /* 254+: no writable memory.pressure */
                return streq(v, "no");
        if (streq(key, "StateDirectoryMode")) /* 257+: the managed directory bound at /output */
                return streq(v, "1777") && !role->output && !role->user;
        if (streq(key, "StateDirectory"))
                return (role->durability == DURABILITY_DURABLE && startswith(v, "cloister/") && streq(v + 9, role->name)) ||
                       (!role->output && startswith(v, "cloister-output/") && streq(v + strlen("cloister-output/"), role->name));
        return false;
}

/* Reads `text` as systemd would (no continuation lines allowed) and checks every line. */
static void check_dropin(const Role *role, const char *path, const char *text) {
        _cleanup_free_ char *copy = strdup(text), *section = NULL;
        unsigned line = 0;
        bool exec_reset = false, exec_set = false;

        if (!copy)
                abort();
        for (char *l = copy, *next; l; l = next) {
                next = strchr(l, '\n');
                if (next)
                        *next++ = 0;
                line++;
                fuzz_assert(!unit_value_continues(l), "%s:%u: a continuation line: \"%s\"", path, line, l);
                if (*l == 0 || *l == '#')
                        continue;
                if (*l == '[') {
                        fuzz_assert(ends_with(l, "]"), "%s:%u: \"%s\"", path, line, l);
                        free(section);
                        section = strndup(l + 1, strlen(l) - 2);
                        continue;
                }
                char *eq = strchr(l, '=');
                fuzz_assert(eq && section, "%s:%u: not a Key=Value line: \"%s\"", path, line, l);
                *eq = 0;
                fuzz_assert(granted(role, section, l, eq + 1),
                            "%s:%u: [%s] %s=%s is not something the role's keys grant: a locked directive dropped",
                            path, line, section, l, eq + 1);
                if (streq(l, "ExecStart")) {
                        if (isempty(eq + 1))
                                exec_reset = true;
                        else
                                exec_set = exec_reset;
                }
        }
        fuzz_assert(exec_set, "%s: the ExecStart= of the template is replaced by exactly the shim's", path);
}

static void check_mount(const Role *role, const char *which, const char *text) {
        _cleanup_free_ char *where = strprintf("\nWhere=/run/cloister/%s/%s\n", which, role->name);

        fuzz_assert(where && strstr(text, where), "the %s mount is where it belongs", which);
        fuzz_assert(strstr(text, "\nOptions=size=") && strstr(text, ",nosuid,nodev\n"), "the %s mount is capped, nosuid, nodev", which);
}

/* ---- the target ---- */

static const char *out_dir(unsigned i) {
        static char *d[2];

        if (!d[i]) {
                d[i] = strprintf("%s/out%u", fuzz_scratch(), i);
                if (!d[i])
                        abort();
        }
        return d[i];
}

static int run_generator(unsigned i) {
        const char *dirs[3] = { out_dir(i), NULL, NULL };

        fuzz_rm_rf(out_dir(i));
        if (mkdir(out_dir(i), 0755) < 0)
                abort();
        return generator_run(dirs);
}

static void write_input(const char *rel, const char *data, size_t size) {
        _cleanup_free_ char *p = strprintf("%s/%s", fuzz_scratch(), rel), *q = NULL;

        if (!p)
                abort();
        if (!data) {
                (void) unlink(p);
                return;
        }
        /* cfg/ and cfg/<sub>/ */
        q = strprintf("%s/cfg", fuzz_scratch());
        (void) mkdir(q, 0755);
        *strrchr(p, '/') = 0;
        (void) mkdir(p, 0755);
        free(p);
        p = fuzz_write(rel, data, size);
        if (!p)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static bool init;
        const char *role_text = (const char *) data, *end = role_text + size, *project = NULL, *conf_text = default_conf;
        size_t role_n = size, project_n = 0, conf_n = sizeof default_conf - 1;
        _cleanup_free_ char *cfg = NULL, *role_path = NULL, *out0 = NULL, *out1 = NULL;
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_(cloister_conf_freep) CloisterConf *conf = NULL;
        _cleanup_(role_freep) Role *role = NULL;
        char **names = NULL, **names1 = NULL;
        size_t n = 0, n1 = 0;
        const char *m;
        bool project_refused = false;
        int r0, r1;

        if (!init) {
                _cleanup_free_ char *units = strprintf("%s/units", fuzz_scratch());
                if (!units || mkdir(units, 0755) < 0)
                        abort();
                cfg = strprintf("%s/cfg", fuzz_scratch());
                /* the newest systemd: every versioned row is rendered, and checked below */
                if (!cfg || setenv("CLOISTER_CONFIG_PATH", cfg, 1) < 0 || setenv("SYSTEMD_UNIT_PATH", units, 1) < 0 ||
                    setenv("CLOISTER_SYSTEMD_VERSION", "999", 1) < 0)
                        abort();
                cfg = mfree(cfg);
                init = true;
        }
        if ((m = memmem(role_text, size, "\n%%conf\n", 8))) {
                conf_text = m + 8;
                conf_n = (size_t) (end - conf_text);
                end = m;
                role_n = (size_t) (m - role_text);
        }
        if ((m = memmem(role_text, role_n, "\n%%project\n", 11))) {
                project = m + 11;
                project_n = (size_t) (end - project);
                role_n = (size_t) (m - role_text);
        }
        write_input(ROLE_REL, role_text, role_n);
        write_input(PROJECT_REL, project, project_n);
        write_input(CONF_REL, conf_text, conf_n);

        /* What the library says of the input, read independently of the generator. */
        cfg = strprintf("%s/cfg", fuzz_scratch());
        role_path = strprintf("%s/%s", fuzz_scratch(), ROLE_REL);
        if (!cfg || !role_path || conf_dirs(&dirs) < 0)
                abort();
        if (cloister_conf_load(dirs, &conf) >= 0 && role_load(role_path, conf, dirs, &role) < 0)
                role = NULL;
        /* A refused project file makes the exit status 1 even when no role names it (a role
         * that names it is refused by role_load() already). */
        if (project) {
                _cleanup_free_ char *project_path = strprintf("%s/%s", fuzz_scratch(), PROJECT_REL);
                _cleanup_(project_freep) Project *p = NULL;
                if (!project_path)
                        abort();
                project_refused = project_load(project_path, &p) < 0;
        }

        if (getenv("FUZZ_VERBOSE")) /* what the replay saw: fuzz-generator-replay with FUZZ_VERBOSE=1 */
                fprintf(stderr, "fuzz-generator: %s\n", !conf ? "cloister.conf refused" : !role ? "role refused" :
                        network_mode_to_string(role->network));
        r0 = run_generator(0);
        out0 = tree_dump(out_dir(0), &names, &n);
        fuzz_assert(r0 == 0 || r0 == 1, "exit status %d", r0);

        if (!conf) {
                fuzz_assert(r0 == 1 && n == 0, "a refused cloister.conf produces nothing (%zu files)", n);
        } else if (!role) {
                fuzz_assert(r0 == 1, "a refused role makes the exit status 1");
                for (size_t i = 0; i < n; i++)
                        fuzz_assert(!strstr(names[i], "fuzz"), "a refused role produces nothing, but %s was written", names[i]);
        } else {
                _cleanup_free_ char *dropin = strprintf("%s/agent@fuzz.service.d/50-cloister.conf", out_dir(0));
                _cleanup_free_ char *tmp = strprintf("%s/run-cloister-tmp-fuzz.mount", out_dir(0));
                _cleanup_free_ char *vtmp = strprintf("%s/run-cloister-var\\x2dtmp-fuzz.mount", out_dir(0));
                _cleanup_free_ char *dt = NULL, *tt = NULL, *vt = NULL;
                ClosedSurfaceIndex idx = {};
                char *unit_dirs[] = { (char *) out_dir(0), NULL };

                fuzz_assert(r0 == (project_refused ? 1 : 0), "an accepted role exits %d (a refused project file beside it: %s), not %d",
                            project_refused ? 1 : 0, project_refused ? "yes" : "no", r0);
                fuzz_assert(network_mode_is_sealed(role->network) || role->network == NETWORK_EGRESS || conf->allow_host_network > 0,
                            "Network=host only with AllowHostNetwork=yes");
                dt = dropin ? read_all(dropin) : NULL;
                tt = tmp ? read_all(tmp) : NULL;
                vt = vtmp ? read_all(vtmp) : NULL;
                fuzz_assert(dt && tt && vt, "an accepted role gets its drop-in and both mounts");
                check_dropin(role, dropin, dt);
                check_mount(role, "tmp", tt);
                check_mount(role, "var-tmp", vt);
                if (closed_surface_index_build(unit_dirs, out_dir(0), &idx) < 0)
                        abort();
                fuzz_assert(idx.n == 0, "the output re-opens a closed surface: %s", idx.findings[0].reason);
                closed_surface_index_done(&idx);
        }

        r1 = run_generator(1);
        out1 = tree_dump(out_dir(1), &names1, &n1);
        fuzz_assert(r0 == r1 && streq(out0, out1), "the output is byte-for-byte deterministic");
        names_free(names, n);
        names_free(names1, n1);
        return 0;
}
