/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>

#include "cloister-conf.h"
#include "conf-files.h"
#include "ini-strict.h"
#include "log.h"

void sandbox_limits_init(SandboxLimits *l) {
        *l = (SandboxLimits) {
                .memory = UNSET_U64, .tasks = UNSET_U64, .tmp_size = UNSET_U64,
                .timeout = UNSET_U64, .stop_grace = UNSET_U64, .shm_size = UNSET_U64,
        };
}

void broker_policy_init(BrokerPolicy *p) {
        *p = (BrokerPolicy) {
                .requests_per_minute = UNSET_U64, .tokens_per_minute = UNSET_U64,
                .max_request_bytes = UNSET_U64, .max_concurrent = UNSET_U64,
        };
}

#define INHERIT(f, unset) do { if (l->f == (unset)) l->f = defaults->f; } while (0)
void sandbox_limits_inherit(SandboxLimits *l, const SandboxLimits *defaults) {
        INHERIT(memory, UNSET_U64);
        INHERIT(cpus_percent, 0U);
        INHERIT(tasks, UNSET_U64);
        INHERIT(tmp_size, UNSET_U64);
        INHERIT(timeout, UNSET_U64);
        INHERIT(stop_grace, UNSET_U64);
        INHERIT(shm_size, UNSET_U64);
}

void broker_policy_inherit(BrokerPolicy *l, const BrokerPolicy *defaults) {
        INHERIT(requests_per_minute, UNSET_U64);
        INHERIT(tokens_per_minute, UNSET_U64);
        INHERIT(max_request_bytes, UNSET_U64);
        INHERIT(max_concurrent, UNSET_U64);
        INHERIT(loopback_port, 0);
}
#undef INHERIT

/* Compiled-in fallbacks for everything but Memory=, which must be configured (cloister.role(5)). */
static const SandboxLimits builtin_limits = {
        .memory = UNSET_U64,
        .cpus_percent = 100,
        .tasks = 256,
        .tmp_size = 64ULL << 20,
        .timeout = 3600 * USEC_PER_SEC,
        .stop_grace = 10 * USEC_PER_SEC,
        .shm_size = 64ULL << 20,
};

static const BrokerPolicy builtin_policy = {
        .requests_per_minute = 60,
        .tokens_per_minute = 100000,
        .max_request_bytes = 1ULL << 20,
        .max_concurrent = 4,
        .loopback_port = 7800,
};

static void llm_settings_done(LLMSettings *s) {
        free(s->endpoint);
        free(s->model);
        free(s->api_key_credential);
}

static Upstream *upstream_free(Upstream *u) {
        if (!u)
                return NULL;
        free(u->name);
        free(u->path);
        free(u->kind);
        free(u->url);
        free(u->auth_credential);
        free(u->auth_header);
        return mfree(u);
}

CloisterConf *cloister_conf_free(CloisterConf *c) {
        if (!c)
                return NULL;
        free(c->path);
        free(c->broker_socket);
        llm_settings_done(&c->chat);
        llm_settings_done(&c->llm);
        for (size_t i = 0; i < c->n_upstreams; i++)
                upstream_free(c->upstreams[i]);
        free(c->upstreams);
        return mfree(c);
}

static int parse_default_network(const ConfAssignment *a, void *data) {
        NetworkMode *m = data;

        if (isempty(a->value)) {
                *m = _NETWORK_MODE_UNSET;
                return 0;
        }
        *m = network_mode_from_string(a->value);
        if (*m < 0) {
                /* Fail closed, but do not refuse the file (cloister.role(5), NETWORK MODES). */
                log_warning("%s:%u: Invalid DefaultNetwork= value \"%s\"; using daemon-only.",
                            a->path, a->line, a->value);
                *m = NETWORK_DAEMON_ONLY;
        }
        return 0;
}


#define LLM_KEYS(section, m)                                                                         \
        { section, "Endpoint",         conf_parse_url,        offsetof(CloisterConf, m.endpoint), 0 },      \
        { section, "Model",            conf_parse_string,     offsetof(CloisterConf, m.model), 0 },         \
        { section, "ContextSize",      conf_parse_uint,       offsetof(CloisterConf, m.context_size), 0 },  \
        { section, "APIKeyCredential", conf_parse_credential, offsetof(CloisterConf, m.api_key_credential), 0 }

static const ConfKey conf_table[] = {
        { "Sandbox", "DefaultNetwork",   parse_default_network, offsetof(CloisterConf, default_network), 0 },
        { "Sandbox", "AllowHostNetwork", conf_parse_bool,       offsetof(CloisterConf, allow_host_network), 0 },
        SANDBOX_LIMIT_KEYS(CloisterConf, defaults),
        { "Broker",  "Socket",           conf_parse_path,       offsetof(CloisterConf, broker_socket), 0 },
        { "Broker",  "IdleTimeout",      conf_parse_timespan,   offsetof(CloisterConf, broker_idle_timeout), 0 },
        { "Broker",  "MaxConnectionsPerCaller", conf_parse_uint, offsetof(CloisterConf, broker_caller_connections), 0 },
        { "Broker",  "MaxBytesPerCaller", conf_parse_size,      offsetof(CloisterConf, broker_caller_bytes), 0 },
        { "Broker",  "HeaderTimeout",    conf_parse_timespan,   offsetof(CloisterConf, broker_header_timeout), 0 },
        BROKER_POLICY_KEYS(CloisterConf, broker),
        LLM_KEYS("Chat", chat),
        LLM_KEYS("LLM", llm),
        { "Runtime", "RequireSealedRuns", conf_parse_bool,      offsetof(CloisterConf, require_sealed_runs), 0 },
};

static int parse_upstream_kind(const ConfAssignment *a, void *data) {
        if (!isempty(a->value) && !streq(a->value, "mcp") && !streq(a->value, "http"))
                return conf_invalid(a, "must be \"mcp\" or \"http\"");
        return conf_parse_string(a, data);
}

static const ConfKey upstream_table[] = {
        { "Upstream", "Kind",           parse_upstream_kind,   offsetof(Upstream, kind), 0 },
        { "Upstream", "URL",            conf_parse_url,        offsetof(Upstream, url), 0 },
        { "Upstream", "AuthCredential", conf_parse_credential, offsetof(Upstream, auth_credential), 0 },
        { "Upstream", "AuthHeader",     conf_parse_string,     offsetof(Upstream, auth_header), 0 },
};

typedef struct ConfParse {
        CloisterConf *conf;
        ConfFileState state;
        Upstream *upstream;   /* while in [Upstream …] */
} ConfParse;

static Upstream *find_or_add_upstream(CloisterConf *c, const char *name, const char *path, unsigned line) {
        Upstream **l, *u;

        for (size_t i = 0; i < c->n_upstreams; i++)
                if (streq(c->upstreams[i]->name, name))
                        return c->upstreams[i];
        l = realloc(c->upstreams, sizeof(Upstream *) * (c->n_upstreams + 1));
        if (!l)
                return NULL;
        c->upstreams = l;
        u = calloc(1, sizeof(Upstream));
        if (!u)
                return NULL;
        u->name = strdup(name);
        u->path = strdup(path);
        u->line = line;
        if (!u->name || !u->path)
                return upstream_free(u);
        return c->upstreams[c->n_upstreams++] = u;
}

static int conf_handler(void *userdata, const char *path, unsigned line,
                        const char *section, const char *key, const char *value) {
        ConfParse *p = userdata;
        ConfAssignment a = { path, line, section, key, value };
        const char *name;

        if (!key) {
                p->upstream = NULL;
                name = startswith(section, "Upstream ");
                if (name) {
                        if (!name_is_valid(name))
                                return log_error_errno(EINVAL, "%s:%u: Invalid upstream name \"%s\" in [%s]; refusing the file.",
                                                       path, line, name, section);
                        p->upstream = find_or_add_upstream(p->conf, name, path, line);
                        return p->upstream ? 0 : log_oom();
                }
                if (!conf_table_has_section(conf_table, ELEMENTSOF(conf_table), section))
                        return log_error_errno(EINVAL, "%s:%u: Unknown section [%s]; refusing the file.",
                                               path, line, section);
                return 0;
        }
        if (p->upstream) {
                a.section = "Upstream";
                return conf_apply(upstream_table, ELEMENTSOF(upstream_table), &p->state, p->upstream, &a);
        }
        return conf_apply(conf_table, ELEMENTSOF(conf_table), &p->state, p->conf, &a);
}

static int conf_parse_file(CloisterConf *c, const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        ConfParse p = { .conf = c };
        int r;

        if (!f)
                return log_error_errno(errno, "Failed to open %s: %m", path);
        r = ini_strict_parse(path, f, conf_handler, &p);
        conf_file_state_done(&p.state);
        return r;
}

static int upstreams_validate(const CloisterConf *c) {
        for (size_t i = 0; i < c->n_upstreams; i++) {
                const Upstream *u = c->upstreams[i];
                if (!u->kind)
                        return log_error_errno(EINVAL, "%s:%u: [Upstream %s] needs Kind=mcp or Kind=http; refusing the configuration.",
                                               u->path, u->line, u->name);
                if (!u->url)
                        return log_error_errno(EINVAL, "%s:%u: [Upstream %s] needs URL=; refusing the configuration.",
                                               u->path, u->line, u->name);
        }
        return 0;
}

int cloister_conf_load(char * const *dirs, CloisterConf **ret) {
        _cleanup_(cloister_conf_freep) CloisterConf *c = calloc(1, sizeof(CloisterConf));
        _cleanup_free_ char *main_path = NULL;
        ConfFileList dropins = {};
        int r;

        if (!c)
                return log_oom();
        c->default_network = _NETWORK_MODE_UNSET;
        c->allow_host_network = -1;
        c->require_sealed_runs = -1;
        sandbox_limits_init(&c->defaults);
        broker_policy_init(&c->broker);
        c->chat.context_size = c->llm.context_size = UNSET_U64;
        c->broker_idle_timeout = UNSET_U64;
        c->broker_caller_connections = c->broker_caller_bytes = c->broker_header_timeout = UNSET_U64;

        r = conf_file_find(dirs, "cloister.conf", &main_path);
        if (r < 0)
                return log_oom();
        if (main_path) {
                r = conf_parse_file(c, main_path);
                if (r < 0)
                        return r;
        }
        r = conf_files_list(dirs, "cloister.conf.d", ".conf", &dropins);
        if (r < 0)
                return r;
        for (size_t i = 0; i < dropins.n && r >= 0; i++)
                r = conf_parse_file(c, dropins.files[i].path);
        conf_file_list_done(&dropins);
        if (r < 0)
                return r;

        c->path = TAKE_PTR(main_path);
        r = upstreams_validate(c);
        if (r < 0)
                return r;
        if (c->broker_idle_timeout == UNSET_U64 || c->broker_idle_timeout == 0)
                c->broker_idle_timeout = 60 * USEC_PER_SEC;
        /* one caller must not starve the others: these are never unlimited */
        if (c->broker_caller_connections == UNSET_U64 || c->broker_caller_connections == 0)
                c->broker_caller_connections = 512;
        if (c->broker_caller_bytes == UNSET_U64 || c->broker_caller_bytes == 0)
                c->broker_caller_bytes = UINT64_C(64) << 20;
        if (c->broker_header_timeout == UNSET_U64 || c->broker_header_timeout == 0)
                c->broker_header_timeout = 10 * USEC_PER_SEC;
        sandbox_limits_inherit(&c->defaults, &builtin_limits);
        broker_policy_inherit(&c->broker, &builtin_policy);
        *ret = TAKE_PTR(c);
        return 0;
}

NetworkMode cloister_conf_default_network(const CloisterConf *c) {
        /* Fail closed: with no DefaultNetwork= written anywhere (no cloister.conf, or one that
         * replaces the shipped file and omits it), the sealed daemon-only, never egress. */
        return c->default_network >= 0 ? c->default_network : NETWORK_DAEMON_ONLY;
}

const Upstream *cloister_conf_find_upstream(const CloisterConf *c, const char *name) {
        for (size_t i = 0; i < c->n_upstreams; i++)
                if (streq(c->upstreams[i]->name, name))
                        return c->upstreams[i];
        return NULL;
}
