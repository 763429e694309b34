/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <pwd.h>
#include <stddef.h>

#include "cmdline.h"
#include "ini-strict.h"
#include "log.h"
#include "project.h"
#include "role.h"
#include "writable-path.h"

Role *role_free(Role *r) {
        if (!r)
                return NULL;
        free(r->name);
        free(r->path);
        free(r->run_instance);
        free(r->description);
        free(r->exec);
        strv_free(r->argv);
        free(r->project);
        free(r->durability_str);
        free(r->user);
        strv_free(r->environment);
        free(r->network_str);
        free(r->input);
        free(r->output);
        strv_free(r->read_only_mount_specs);
        for (size_t i = 0; i < r->n_read_only_mounts; i++) {
                free(r->read_only_mounts[i].source);
                free(r->read_only_mounts[i].target);
        }
        free(r->read_only_mounts);
        free(r->gpus);
        strv_free(r->services);
        free(r->llm_model);
        free(r->llm_endpoint);
        strv_free(r->wanted_by);
        strv_free(r->broker_allow);
        strv_free(r->broker_allow_tools);
        free(r->workspace);
        return mfree(r);
}

bool environment_name_is_reserved(const char *name) {
        static const char *const reserved[] = { "OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY" };

        if (startswith(name, "CLOISTER_"))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(reserved); i++)
                if (streq(name, reserved[i]))
                        return true;
        return false;
}

static int parse_exec(const ConfAssignment *a, void *data) {
        Role *role = data;
        _cleanup_strv_free_ char **argv = NULL;
        const char *reason = NULL;

        if (cmdline_split(a->value, &argv, &reason) < 0)
                return reason ? conf_invalid(a, reason) : log_oom();
        if (!argv[0])
                return conf_invalid(a, "empty command line");
        if (argv[0][0] != '/')
                return conf_invalid(a, "the program must be an absolute path");
        strv_free(role->argv);
        role->argv = TAKE_PTR(argv);
        return conf_parse_string(a, &role->exec);
}

static int parse_durability(const ConfAssignment *a, void *data) {
        if (!isempty(a->value) && !streq(a->value, "transient") && !streq(a->value, "durable"))
                return conf_invalid(a, "must be \"transient\" or \"durable\"");
        return conf_parse_string(a, data);
}

static int parse_network(const ConfAssignment *a, void *data) {
        if (!isempty(a->value) && network_mode_from_string(a->value) < 0)
                return conf_invalid(a, "must be none, daemon-only, egress or host");
        return conf_parse_string(a, data);
}

static int parse_user(const ConfAssignment *a, void *data) {
        const char *v = a->value;
        struct passwd *pw;

        if (isempty(v))
                return conf_parse_string(a, data);
        if (strlen(v) > 31 || !(islower((unsigned char) v[0]) || v[0] == '_'))
                return conf_invalid(a, "not a user name");
        for (const char *p = v; *p; p++)
                if (!islower((unsigned char) *p) && !isdigit((unsigned char) *p) && *p != '_' && *p != '-')
                        return conf_invalid(a, "not a user name");
        if (streq(v, "root"))
                return conf_invalid(a, "the agent never runs as root");
        pw = getpwnam(v);
        if (pw && pw->pw_uid == 0)
                return conf_invalid(a, "this user has UID 0; the agent never runs as root");
        return conf_parse_string(a, data);
}

static int parse_environment(const ConfAssignment *a, void *data) {
        const char *eq = strchr(a->value, '=');
        _cleanup_free_ char *name = NULL;

        if (isempty(a->value))
                return conf_parse_strv(a, data);
        if (!eq || eq == a->value)
                return conf_invalid(a, "expected NAME=VALUE");
        name = strndup(a->value, (size_t) (eq - a->value));
        if (!name)
                return log_oom();
        if (!(isalpha((unsigned char) name[0]) || name[0] == '_'))
                return conf_invalid(a, "not a valid variable name");
        for (const char *p = name; *p; p++)
                if (!isalnum((unsigned char) *p) && *p != '_')
                        return conf_invalid(a, "not a valid variable name");
        if (environment_name_is_reserved(name))
                return conf_invalid(a, "CLOISTER_* and the OpenAI endpoint variables are set by cloister and cannot be overridden");
        return conf_parse_strv(a, data);
}

static int parse_input(const ConfAssignment *a, void *data) {
        const char *reason = isempty(a->value) ? NULL : mount_path_check(a->value);
        return reason ? conf_invalid(a, reason) : conf_parse_path(a, data);
}

static int parse_output(const ConfAssignment *a, void *data) {
        const char *reason = isempty(a->value) ? NULL : writable_path_check(a->value);
        return reason ? conf_invalid(a, reason) : conf_parse_path(a, data);
}

static int parse_read_only_mount(const ConfAssignment *a, void *data) {
        _cleanup_free_ char *copy = strdup(a->value);
        char *source, *target, *opt;
        const char *reason;

        if (!copy)
                return log_oom();
        if (isempty(a->value))
                return conf_parse_strv(a, data);
        source = copy;
        target = strchr(source, ':');
        if (!target)
                return conf_invalid(a, "expected HOSTPATH:SANDBOXPATH[:ro]");
        *target++ = 0;
        opt = strchr(target, ':');
        if (opt) {
                *opt++ = 0;
                if (!streq(opt, "ro"))
                        return conf_invalid(a, "the only option is \":ro\"; ReadOnlyMount= is always read-only");
        }
        if ((reason = mount_path_check(source)))
                return conf_invalid(a, reason);
        if ((reason = mount_target_check(target)))
                return conf_invalid(a, reason);
        STRV_FOREACH(spec, *(char ***) data) {
                const char *t = strchr(*spec, ':') + 1;
                size_t l = strcspn(t, ":");
                if (l == strlen(target) && strncmp(t, target, l) == 0)
                        return conf_invalid(a, "another ReadOnlyMount= already mounts on this target");
        }
        return conf_parse_strv(a, data);
}

static int parse_gpus(const ConfAssignment *a, void *data) {
        const char *p = a->value;

        if (isempty(p))
                return conf_parse_string(a, data);
        if (!streq(p, "all")) {
                for (; *p; p++)
                        if (!isdigit((unsigned char) *p) && *p != ',')
                                return conf_invalid(a, "must be empty, \"all\" or a comma-separated list of GPU indices");
        }
        /* Fail closed until device grants exist: a role must not believe it has a GPU. */
        return log_error_errno(EOPNOTSUPP, "%s:%u: GPUs= is not supported by this version of cloister; refusing the file.",
                               a->path, a->line);
}

static const char *check_unit_name(const char *w) {
        const char *dot = strrchr(w, '.');

        if (!dot || dot == w || (!streq(dot, ".target") && !streq(dot, ".service")) || strlen(w) >= 256)
                return "not a .target or .service unit name";
        for (const char *p = w; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr(":-_.\\@", *p))
                        return "not a .target or .service unit name";
        return NULL;
}

static int parse_wanted_by(const ConfAssignment *a, void *data) {
        return conf_parse_words(a, data, check_unit_name);
}

/* AllowTool=UPSTREAM:TOOL … (blank-separated); TOOL "*" allows every tool of that upstream. */
static const char *check_allow_tool_word(const char *w) {
        const char *colon = strchr(w, ':');
        static const char reason[] = "expected UPSTREAM:TOOL (TOOL may be \"*\")";
        _cleanup_free_ char *upstream = colon ? strndup(w, (size_t) (colon - w)) : NULL;

        if (!upstream || !name_is_valid(upstream) || !colon[1])
                return reason;
        if (streq(colon + 1, "*"))
                return NULL;
        for (const char *p = colon + 1; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr("_.-/", *p))
                        return reason;
        return NULL;
}

static int parse_allow_tool(const ConfAssignment *a, void *data) {
        return conf_parse_words(a, data, check_allow_tool_word);
}

char **role_allowed_tools(const Role *role, const char *upstream) {
        char **l = calloc(1, sizeof(char *));
        size_t n = strlen(upstream);

        STRV_FOREACH(t, role->broker_allow_tools)
                if (l && strncmp(*t, upstream, n) == 0 && (*t)[n] == ':' && strv_extend(&l, *t + n + 1) < 0)
                        l = strv_free(l);
        return l;
}

static const ConfKey role_table[] = {
        { "Role",    "Description",   conf_parse_string,     offsetof(Role, description), 0 },
        { "Role",    "Exec",          parse_exec,            0, 0 },
        { "Role",    "Project",       conf_parse_name,       offsetof(Role, project), 0 },
        { "Role",    "Durability",    parse_durability,      offsetof(Role, durability_str), 0 },
        { "Role",    "User",          parse_user,            offsetof(Role, user), 0 },
        { "Role",    "Environment",   parse_environment,     offsetof(Role, environment), CONF_REPEATABLE },
        { "Sandbox", "Network",       parse_network,         offsetof(Role, network_str), 0 },
        SANDBOX_LIMIT_KEYS(Role, limits),
        { "Sandbox", "Input",         parse_input,           offsetof(Role, input), 0 },
        { "Sandbox", "Output",        parse_output,          offsetof(Role, output), 0 },
        { "Sandbox", "ReadOnlyMount", parse_read_only_mount, offsetof(Role, read_only_mount_specs), CONF_REPEATABLE },
        { "Sandbox", "GPUs",          parse_gpus,            offsetof(Role, gpus), 0 },
        { "Sandbox", "Service",       conf_parse_name_list,  offsetof(Role, services), CONF_REPEATABLE },
        { "Sandbox", "JIT",           conf_parse_bool,       offsetof(Role, jit), 0 },
        { "LLM",     "Model",         conf_parse_string,     offsetof(Role, llm_model), 0 },
        { "LLM",     "Endpoint",      conf_parse_url,        offsetof(Role, llm_endpoint), 0 },
        { "LLM",     "ContextSize",   conf_parse_uint,       offsetof(Role, llm_context_size), 0 },
        { "Install", "WantedBy",      parse_wanted_by,       offsetof(Role, wanted_by), CONF_REPEATABLE },
        { "Broker",  "Allow",         conf_parse_name_list,  offsetof(Role, broker_allow), CONF_REPEATABLE },
        { "Broker",  "AllowTool",     parse_allow_tool,      offsetof(Role, broker_allow_tools), CONF_REPEATABLE },
        BROKER_POLICY_KEYS(Role, broker),
};

typedef struct RoleParse {
        Role *role;
        const CloisterConf *conf;
        ConfFileState state;
} RoleParse;

/* Allow= names upstreams of cloister.conf: checked here, where the line is known. */
static int check_allow(const RoleParse *p, const ConfAssignment *a) {
        _cleanup_free_ char *copy = strdup(a->value);
        char *save = NULL;

        if (!copy)
                return log_oom();
        for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
                if (!cloister_conf_find_upstream(p->conf, w))
                        return log_error_errno(EINVAL, "%s:%u: Invalid Allow= entry \"%s\" in [Broker]: cloister.conf has no [Upstream %s]; refusing the file.",
                                               a->path, a->line, w, w);
        return 0;
}

static int check_allow_tool(const RoleParse *p, const ConfAssignment *a) {
        _cleanup_free_ char *copy = strdup(a->value);
        char *save = NULL;

        if (!copy)
                return log_oom();
        for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                const Upstream *u;
                *strchr(w, ':') = 0;
                u = cloister_conf_find_upstream(p->conf, w);
                if (!u || !streq_ptr(u->kind, "mcp"))
                        return log_error_errno(EINVAL, "%s:%u: Invalid AllowTool= entry in [Broker]: cloister.conf has no [Upstream %s] with Kind=mcp; refusing the file.",
                                               a->path, a->line, w);
        }
        return 0;
}

static int role_handler(void *userdata, const char *path, unsigned line,
                        const char *section, const char *key, const char *value) {
        RoleParse *p = userdata;
        ConfAssignment a = { path, line, section, key, value };

        int r;

        if (!key)
                return conf_table_has_section(role_table, ELEMENTSOF(role_table), section) ? 0 :
                        log_error_errno(EINVAL, "%s:%u: Unknown section [%s]; refusing the file.", path, line, section);
        r = conf_apply(role_table, ELEMENTSOF(role_table), &p->state, p->role, &a);
        if (r >= 0 && streq(section, "Broker") && streq(key, "Allow"))
                r = check_allow(p, &a);
        if (r >= 0 && streq(section, "Broker") && streq(key, "AllowTool"))
                r = check_allow_tool(p, &a);
        return r;
}

/* The line at which a non-repeatable key was set, for errors found after parsing. */
static unsigned key_line(const RoleParse *p, const char *key) {
        for (size_t i = 0; i < p->state.n_seen; i++)
                if (streq(p->state.seen[i].key->key, key))
                        return p->state.seen[i].line;
        return 0;
}

/* Errors found after parsing: name the line, or say the value came from cloister.conf. */
#define role_error(p, key, fmt, ...)                                                                    \
        (key_line((p), key) > 0 ?                                                                       \
         log_error_errno(EINVAL, "%s:%u: %s=: " fmt, (p)->role->path, key_line((p), key), key, ##__VA_ARGS__) : \
         log_error_errno(EINVAL, "%s: %s= (from cloister.conf): " fmt, (p)->role->path, key, ##__VA_ARGS__))

static int role_resolve_mounts(RoleParse *p) {
        Role *r = p->role;

        r->read_only_mounts = calloc(strv_length(r->read_only_mount_specs) + 1, sizeof(ReadOnlyMount));
        if (!r->read_only_mounts)
                return log_oom();
        STRV_FOREACH(spec, r->read_only_mount_specs) {
                const char *colon = strchr(*spec, ':');
                const char *end = strchr(colon + 1, ':');
                ReadOnlyMount m = {
                        .source = strndup(*spec, (size_t) (colon - *spec)),
                        .target = end ? strndup(colon + 1, (size_t) (end - colon - 1)) : strdup(colon + 1),
                };
                r->read_only_mounts[r->n_read_only_mounts++] = m;
                if (!m.source || !m.target)
                        return log_oom();
        }
        return 0;
}

static int role_validate(RoleParse *p, const CloisterConf *conf, char * const *dirs) {
        Role *r = p->role;
        int k;

        if (!r->exec)
                return log_error_errno(EINVAL, "%s: [Role] Exec= is required; refusing the file.", r->path);
        r->durability = r->durability_str && streq(r->durability_str, "durable") ? DURABILITY_DURABLE : DURABILITY_TRANSIENT;

        r->network = r->network_str ? network_mode_from_string(r->network_str) : cloister_conf_default_network(conf);
        if (r->network == NETWORK_HOST && conf->allow_host_network <= 0)
                return role_error(p, "Network", "host is refused unless cloister.conf sets AllowHostNetwork=yes; refusing the file.");
        if (r->llm_endpoint && r->network != NETWORK_EGRESS && r->network != NETWORK_HOST)
                return role_error(p, "Endpoint", "a direct LLM endpoint needs Network=egress or host (this role is %s); refusing the file.",
                                  network_mode_to_string(r->network));

        sandbox_limits_inherit(&r->limits, &conf->defaults);
        if (r->limits.memory == UNSET_U64)
                return log_error_errno(EINVAL, "%s: Memory= is required, in the role's [Sandbox] or in cloister.conf's [Sandbox]; refusing the file.", r->path);
        if (r->limits.timeout == 0)
                log_notice("%s: Timeout=0 disables the wall-clock ceiling; this is discouraged.", r->path);
        broker_policy_inherit(&r->broker, &conf->broker);

        k = role_resolve_mounts(p);
        if (k < 0)
                return k;

        if (r->project) {
                _cleanup_(project_freep) Project *proj = NULL;
                k = project_find_and_load(dirs, r->project, &proj);
                if (k < 0)
                        return log_error_errno(k, "%s:%u: Project=%s cannot be used; refusing the file.",
                                               r->path, key_line(p, "Project"), r->project);
                r->workspace = TAKE_PTR(proj->workspace);
                for (DepsEcosystem e = 0; e < _DEPS_ECOSYSTEM_MAX; e++) {
                        const char *var = deps_ecosystem_env_name(e);
                        size_t l = strlen(var);
                        r->deps[e] = proj->lockfiles[e] != NULL;
                        /* the project's set owns the variable: no silent override */
                        STRV_FOREACH(env, r->environment)
                                if (r->deps[e] && strncmp(*env, var, l) == 0 && (*env)[l] == '=')
                                        return log_error_errno(EINVAL, "%s:%u: Project=%s: the project's [Dependencies] %s= sets %s, which Environment= sets too; refusing the file.",
                                                               r->path, key_line(p, "Project"), r->project, deps_ecosystem_key(e), var);
                }
        }
        return 0;
}

int role_load(const char *path, const CloisterConf *conf, char * const *dirs, Role **ret) {
        _cleanup_(role_freep) Role *r = calloc(1, sizeof(Role));
        _cleanup_fclose_ FILE *f = NULL;
        RoleParse p = {};
        const char *base = strrchr(path, '/');
        size_t n;
        int k;

        if (!r)
                return log_oom();
        r->jit = -1;
        r->durability = _DURABILITY_UNSET;
        r->network = _NETWORK_MODE_UNSET;
        r->llm_context_size = UNSET_U64;
        sandbox_limits_init(&r->limits);
        broker_policy_init(&r->broker);

        base = base ? base + 1 : path;
        n = strlen(base);
        if (n <= 5 || !streq(base + n - 5, ".role"))
                return log_error_errno(EINVAL, "%s: not a .role file.", path);
        r->name = strndup(base, n - 5);
        r->path = strdup(path);
        if (!r->name || !r->path)
                return log_oom();
        if (!name_is_valid(r->name))
                return log_error_errno(EINVAL, "%s: Invalid role name \"%s\" (^[a-z0-9][a-z0-9_-]{0,62}$); refusing the file.",
                                       path, r->name);

        f = fopen(path, "re");
        if (!f)
                return log_error_errno(errno, "Failed to open %s: %m", path);
        p.role = r;
        p.conf = conf;
        k = ini_strict_parse(path, f, role_handler, &p);
        if (k >= 0)
                k = role_validate(&p, conf, dirs);
        conf_file_state_done(&p.state);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(r);
        return 0;
}
