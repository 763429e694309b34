/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stddef.h>

#include "ini-strict.h"
#include "log.h"
#include "project.h"
#include "role.h"
#include "sandbox-keys.h"
#include "writable-path.h"

Role *role_free(Role *r) {
        if (!r)
                return NULL;
        free(r->name);
        free(r->path);
        free(r->run_instance);
        free(r->run_tmp_slot);
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
        read_only_mounts_free(r->read_only_mounts, r->n_read_only_mounts);
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

static int parse_exec(const ConfAssignment *a, void *data) {
        Role *role = data;
        return conf_parse_exec(a, &role->exec, &role->argv);
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

static int parse_input(const ConfAssignment *a, void *data) {
        const char *reason = isempty(a->value) ? NULL : mount_path_check(a->value);
        return reason ? conf_invalid(a, reason) : conf_parse_path(a, data);
}

static int parse_output(const ConfAssignment *a, void *data) {
        const char *reason = isempty(a->value) ? NULL : writable_path_check(a->value);
        return reason ? conf_invalid(a, reason) : conf_parse_path(a, data);
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
        { "Role",    "User",          conf_parse_user,            offsetof(Role, user), 0 },
        { "Role",    "Environment",   conf_parse_environment,     offsetof(Role, environment), CONF_REPEATABLE },
        { "Sandbox", "Network",       parse_network,         offsetof(Role, network_str), 0 },
        SANDBOX_LIMIT_KEYS(Role, limits),
        { "Sandbox", "Input",         parse_input,           offsetof(Role, input), 0 },
        { "Sandbox", "Output",        parse_output,          offsetof(Role, output), 0 },
        { "Sandbox", "ReadOnlyMount", conf_parse_read_only_mount, offsetof(Role, read_only_mount_specs), CONF_REPEATABLE },
        { "Sandbox", "GPUs",          conf_parse_gpus,            offsetof(Role, gpus), 0 },
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

const ConfKey *role_keys(size_t *ret_n) {
        *ret_n = ELEMENTSOF(role_table);
        return role_table;
}

typedef struct RoleParse {
        ConfTableParse table;   /* first: the userdata of conf_table_handler() */
        Role *role;
        const CloisterConf *conf;
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
        int r = conf_table_handler(&p->table, path, line, section, key, value);

        if (r < 0 || !key)
                return r;
        if (streq(section, "Broker") && streq(key, "Allow"))
                r = check_allow(p, &a);
        if (r >= 0 && streq(section, "Broker") && streq(key, "AllowTool"))
                r = check_allow_tool(p, &a);
        return r;
}

static unsigned key_line(const RoleParse *p, const char *key) {
        return conf_file_state_line(&p->table.state, key);
}

/* Errors found after parsing: name the line, or say the value came from cloister.conf. */
#define role_error(p, key, fmt, ...)                                                                    \
        (key_line((p), key) > 0 ?                                                                       \
         log_error_errno(EINVAL, "%s:%u: %s=: " fmt, (p)->role->path, key_line((p), key), key, ##__VA_ARGS__) : \
         log_error_errno(EINVAL, "%s: %s= (from cloister.conf): " fmt, (p)->role->path, key, ##__VA_ARGS__))

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

        k = read_only_mounts_resolve(r->read_only_mount_specs, &r->read_only_mounts, &r->n_read_only_mounts);
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
        int k;

        if (!r)
                return log_oom();
        r->jit = -1;
        r->durability = _DURABILITY_UNSET;
        r->network = _NETWORK_MODE_UNSET;
        r->llm_context_size = UNSET_U64;
        sandbox_limits_init(&r->limits);
        broker_policy_init(&r->broker);

        k = conf_file_name(path, ".role", "role", &r->name);
        if (k < 0)
                return k;
        r->path = strdup(path);
        if (!r->path)
                return log_oom();

        f = fopen(path, "re");
        if (!f)
                return log_error_errno(errno, "Failed to open %s: %m", path);
        p.table = (ConfTableParse) { .table = role_table, .n = ELEMENTSOF(role_table), .base = r };
        p.role = r;
        p.conf = conf;
        k = ini_strict_parse(path, f, role_handler, &p);
        if (k >= 0)
                k = role_validate(&p, conf, dirs);
        conf_file_state_done(&p.table.state);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(r);
        return 0;
}
