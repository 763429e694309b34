/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "conf-parser.h"
#include "network-mode.h"

/* Keys that a role's [Sandbox] sets and cloister.conf's [Sandbox] defaults. */
typedef struct SandboxLimits {
        uint64_t memory;        /* bytes; UNSET_U64 */
        unsigned cpus_percent;  /* 0 unset */
        uint64_t tasks;
        uint64_t tmp_size;
        usec_t timeout;         /* 0 disables */
        usec_t stop_grace;
        uint64_t shm_size;
} SandboxLimits;

/* Keys of a role's [Broker] with their defaults in cloister.conf's [Broker]. */
typedef struct BrokerPolicy {
        uint64_t requests_per_minute;
        uint64_t tokens_per_minute;
        uint64_t max_request_bytes;
        uint64_t max_concurrent;
        uint16_t loopback_port;
} BrokerPolicy;

typedef struct LLMSettings {
        char *endpoint;
        char *model;
        uint64_t context_size;
        char *api_key_credential;
} LLMSettings;

typedef enum UpstreamKind {
        UPSTREAM_MCP,
        UPSTREAM_HTTP,
        _UPSTREAM_KIND_UNSET = -1,
} UpstreamKind;

typedef struct Upstream {
        char *name;
        char *path;             /* where [Upstream name] first appeared, for errors */
        unsigned line;
        char *kind;             /* "mcp" | "http" */
        char *url;
        char *auth_credential;
        char *auth_header;
} Upstream;

typedef struct CloisterConf {
        char *path;                 /* the main file, or NULL when only built-in defaults apply */
        NetworkMode default_network;
        int allow_host_network;     /* -1 unset = no */
        SandboxLimits defaults;
        char *broker_socket;
        usec_t broker_idle_timeout; /* a stream with no bytes for this long ends with 504 */
        /* what one calling unit may hold of the broker at once (cloister-broker(8)) */
        uint64_t broker_caller_connections;
        uint64_t broker_caller_bytes;       /* request bodies and answer bytes held */
        usec_t broker_header_timeout;       /* to send a request's headers */
        BrokerPolicy broker;
        LLMSettings chat, llm;
        Upstream **upstreams;   /* pointers: parse state refers to them while the array grows */
        size_t n_upstreams;
        int require_sealed_runs;    /* -1 unset = yes */
} CloisterConf;

void sandbox_limits_init(SandboxLimits *l);
void broker_policy_init(BrokerPolicy *p);

CloisterConf *cloister_conf_free(CloisterConf *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(CloisterConf *, cloister_conf_free);

/* Reads cloister.conf and the cloister.conf.d/ drop-ins from `dirs`. Any error refuses the whole
 * configuration (the caller then generates nothing). An invalid DefaultNetwork= is not an
 * error: it means daemon-only, with a warning (cloister.role(5), NETWORK MODES). */
int cloister_conf_load(char * const *dirs, CloisterConf **ret);

/* The effective default mode: DefaultNetwork=, or daemon-only when unset (cloister.role(5), NETWORK MODES). */
NetworkMode cloister_conf_default_network(const CloisterConf *c);

const Upstream *cloister_conf_find_upstream(const CloisterConf *c, const char *name);

/* Table rows shared by the role file and cloister.conf, which holds their defaults. */
#define SANDBOX_LIMIT_KEYS(type, m)                                                            \
        { "Sandbox", "Memory",    conf_parse_size,     offsetof(type, m.memory),       0 },    \
        { "Sandbox", "CPUs",      conf_parse_cpus,     offsetof(type, m.cpus_percent), 0 },    \
        { "Sandbox", "Tasks",     conf_parse_uint,     offsetof(type, m.tasks),        0 },    \
        { "Sandbox", "TmpSize",   conf_parse_size,     offsetof(type, m.tmp_size),     0 },    \
        { "Sandbox", "Timeout",   conf_parse_timespan, offsetof(type, m.timeout),      0 },    \
        { "Sandbox", "StopGrace", conf_parse_timespan, offsetof(type, m.stop_grace),   0 },    \
        { "Sandbox", "ShmSize",   conf_parse_size,     offsetof(type, m.shm_size),     0 }

#define BROKER_POLICY_KEYS(type, m)                                                                    \
        { "Broker", "RequestsPerMinute", conf_parse_uint, offsetof(type, m.requests_per_minute), 0 },  \
        { "Broker", "TokensPerMinute",   conf_parse_uint, offsetof(type, m.tokens_per_minute),   0 },  \
        { "Broker", "MaxRequestBytes",   conf_parse_size, offsetof(type, m.max_request_bytes),   0 },  \
        { "Broker", "MaxConcurrent",     conf_parse_uint, offsetof(type, m.max_concurrent),      0 },  \
        { "Broker", "LoopbackPort",      conf_parse_port, offsetof(type, m.loopback_port),       0 }

/* Fills unset fields of `l` from `defaults`. */
void sandbox_limits_inherit(SandboxLimits *l, const SandboxLimits *defaults);
void broker_policy_inherit(BrokerPolicy *p, const BrokerPolicy *defaults);
