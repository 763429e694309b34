/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/conf/role.c + lib/conf/cloister-conf.c: what a role gets for the keys it does not set — cloister.conf's
 * [Sandbox] and [Broker] defaults, else the compiled-in fallbacks — and how its network mode is
 * resolved (cloister.role(5): the keys and NETWORK MODES). */

#include "role.h"
#include "tap.h"
#include "test-util.h"

static char *tmpdir;

static void test_compiled_in(void) {
        RoleLoad l = test_role_load(tmpdir, NULL, "fallback.role",
                                    "[Role]\nExec=/bin/true\n[Sandbox]\nMemory=1G\n", NULL);
        Role *r = l.role;

        is_int(l.r, 0, "a role with only Exec= and Memory= and no cloister.conf is accepted");
        if (r) {
                is_int(r->network, NETWORK_DAEMON_ONLY, "DefaultNetwork= unset: the mode is the sealed daemon-only (fail closed)");
                ok(r->network_str == NULL, "Network= was not written");
                is_int(r->limits.cpus_percent, 100, "compiled-in CPUs=1");
                is_u64(r->limits.tasks, 256, "compiled-in Tasks=256");
                is_u64(r->limits.tmp_size, UINT64_C(64) << 20, "compiled-in TmpSize=64M");
                is_u64(r->limits.timeout, 3600 * USEC_PER_SEC, "compiled-in Timeout=1h");
                is_u64(r->limits.stop_grace, 10 * USEC_PER_SEC, "compiled-in StopGrace=10s");
                is_u64(r->limits.shm_size, UINT64_C(64) << 20, "compiled-in ShmSize=64M");
                is_u64(r->broker.requests_per_minute, 60, "compiled-in RequestsPerMinute=60");
                is_u64(r->broker.tokens_per_minute, 100000, "compiled-in TokensPerMinute=100000");
                is_u64(r->broker.max_request_bytes, UINT64_C(1) << 20, "compiled-in MaxRequestBytes=1M");
                is_u64(r->broker.max_concurrent, 4, "compiled-in MaxConcurrent=4");
                is_int(r->broker.loopback_port, 7800, "compiled-in LoopbackPort=7800");
        }
        test_role_load_done(&l);
}

#define CONF_DEFAULTS                           \
        "[Sandbox]\n"                           \
        "DefaultNetwork=daemon-only\n"          \
        "Memory=2G\n"                           \
        "CPUs=3\n"                              \
        "Tasks=64\n"                            \
        "TmpSize=16M\n"                         \
        "Timeout=5min\n"                        \
        "StopGrace=3s\n"                        \
        "ShmSize=8M\n"                          \
        "[Broker]\n"                            \
        "Socket=/run/cloister/broker.sock\n"    \
        "RequestsPerMinute=5\n"                 \
        "TokensPerMinute=500\n"                 \
        "MaxRequestBytes=4K\n"                  \
        "MaxConcurrent=1\n"                     \
        "LoopbackPort=7801\n"

static void test_from_cloister_conf(void) {
        RoleLoad l = test_role_load(tmpdir, CONF_DEFAULTS, "inherit.role", "[Role]\nExec=/bin/true\n", NULL);
        Role *r = l.role;

        is_int(l.r, 0, "a role without [Sandbox] or [Broker] is accepted when cloister.conf has Memory=");
        if (r) {
                is_int(r->network, NETWORK_DAEMON_ONLY, "the mode is DefaultNetwork=daemon-only");
                is_u64(r->limits.memory, UINT64_C(2) << 30, "Memory= from cloister.conf");
                is_int(r->limits.cpus_percent, 300, "CPUs= from cloister.conf");
                is_u64(r->limits.tasks, 64, "Tasks= from cloister.conf");
                is_u64(r->limits.tmp_size, UINT64_C(16) << 20, "TmpSize= from cloister.conf");
                is_u64(r->limits.timeout, 300 * USEC_PER_SEC, "Timeout= from cloister.conf");
                is_u64(r->limits.stop_grace, 3 * USEC_PER_SEC, "StopGrace= from cloister.conf");
                is_u64(r->limits.shm_size, UINT64_C(8) << 20, "ShmSize= from cloister.conf");
                is_u64(r->broker.requests_per_minute, 5, "RequestsPerMinute= from cloister.conf");
                is_u64(r->broker.tokens_per_minute, 500, "TokensPerMinute= from cloister.conf");
                is_u64(r->broker.max_request_bytes, 4096, "MaxRequestBytes= from cloister.conf");
                is_u64(r->broker.max_concurrent, 1, "MaxConcurrent= from cloister.conf");
                is_int(r->broker.loopback_port, 7801, "LoopbackPort= from cloister.conf");
        }
        test_role_load_done(&l);

        l = test_role_load(tmpdir, CONF_DEFAULTS, "override.role",
                           "[Role]\nExec=/bin/true\n"
                           "[Sandbox]\nNetwork=none\nMemory=512M\nCPUs=0.5\nTasks=\nTimeout=0\n"
                           "[Broker]\nMaxConcurrent=8\nLoopbackPort=\n", NULL);
        r = l.role;
        is_int(l.r, 0, "a role overriding cloister.conf is accepted");
        if (r) {
                is_int(r->network, NETWORK_NONE, "the role's Network= wins over DefaultNetwork=");
                is_u64(r->limits.memory, UINT64_C(512) << 20, "the role's Memory= wins");
                is_int(r->limits.cpus_percent, 50, "the role's CPUs= wins");
                is_u64(r->limits.tasks, 64, "an empty Tasks= in the role means cloister.conf's");
                is_u64(r->limits.timeout, 0, "Timeout=0 in the role wins over cloister.conf (0 is not unset)");
                is_u64(r->limits.tmp_size, UINT64_C(16) << 20, "an unset TmpSize= is still inherited");
                is_u64(r->broker.max_concurrent, 8, "the role's MaxConcurrent= wins");
                is_int(r->broker.loopback_port, 7801, "an empty LoopbackPort= means cloister.conf's");
        }
        like(l.err, "Timeout=0", "Timeout=0 is logged as discouraged");
        like(l.err, "discouraged", "...with the word");
        test_role_load_done(&l);

        l = test_role_load(tmpdir, "[Sandbox]\nMemory=1G\nTimeout=0\n", "zero.role", "[Role]\nExec=/bin/true\n", NULL);
        ok(l.r == 0 && l.role && l.role->limits.timeout == 0, "Timeout=0 in cloister.conf is inherited as 0");
        test_role_load_done(&l);
}

static void test_network_modes(void) {
        static const struct { const char *conf, *role; NetworkMode expected; const char *what; } cases[] = {
                { "", "", NETWORK_DAEMON_ONLY, "DefaultNetwork= unset, Network= unset: daemon-only (fail closed)" },
                { "DefaultNetwork=none\n", "", NETWORK_NONE, "DefaultNetwork=none" },
                { "DefaultNetwork=daemon-only\n", "", NETWORK_DAEMON_ONLY, "DefaultNetwork=daemon-only" },
                { "DefaultNetwork=egress\n", "", NETWORK_EGRESS, "DefaultNetwork=egress" },
                { "DefaultNetwork=bogus\n", "", NETWORK_DAEMON_ONLY, "an invalid DefaultNetwork= means daemon-only" },
                { "DefaultNetwork=none\n", "Network=egress\n", NETWORK_EGRESS, "Network=egress over DefaultNetwork=none" },
                { "DefaultNetwork=egress\n", "Network=none\n", NETWORK_NONE, "Network=none over DefaultNetwork=egress" },
                { "DefaultNetwork=egress\n", "Network=\n", NETWORK_EGRESS, "an empty Network= means DefaultNetwork=" },
                { "AllowHostNetwork=yes\n", "Network=host\n", NETWORK_HOST, "Network=host with AllowHostNetwork=yes" },
                { "AllowHostNetwork=yes\nDefaultNetwork=host\n", "", NETWORK_HOST, "DefaultNetwork=host with AllowHostNetwork=yes" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *conf = strprintf("[Sandbox]\nMemory=1G\n%s", cases[i].conf);
                char *role = strprintf("[Role]\nExec=/bin/true\n[Sandbox]\n%s", cases[i].role);
                RoleLoad l = test_role_load(tmpdir, conf, "net.role", role, NULL);
                ok(l.r == 0 && l.role && l.role->network == cases[i].expected, "%s", cases[i].what);
                if (l.r != 0)
                        diag("%s", l.err);
                test_role_load_done(&l);
                free(conf);
                free(role);
        }

        /* Host mode without the opt-in fails closed, also when it comes from DefaultNetwork=. */
        {
                RoleLoad l = test_role_load(tmpdir, "[Sandbox]\nMemory=1G\nAllowHostNetwork=no\n", "h.role",
                                            "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=host\n", NULL);
                char *where = test_role_where(&l, 4);
                ok(l.r < 0 && !l.role, "Network=host with AllowHostNetwork=no is refused");
                like(l.err, where, "the refusal names file:line of Network=");
                like(l.err, "AllowHostNetwork", "the refusal names the opt-in");
                free(where);
                test_role_load_done(&l);

                l = test_role_load(tmpdir, "[Sandbox]\nMemory=1G\nDefaultNetwork=host\n", "h.role",
                                   "[Role]\nExec=/bin/true\n", NULL);
                ok(l.r < 0 && !l.role, "DefaultNetwork=host without AllowHostNetwork=yes refuses the role");
                like(l.err, l.path, "the refusal names the role file");
                test_role_load_done(&l);
        }
}

static void test_endpoint_and_mode(void) {
        static const struct { const char *conf, *sandbox; bool accepted; const char *what; } cases[] = {
                { "", "Network=egress\n", true, "[LLM] Endpoint= with Network=egress" },
                { "AllowHostNetwork=yes\n", "Network=host\n", true, "[LLM] Endpoint= with Network=host" },
                { "", "", false, "[LLM] Endpoint= with the default mode, daemon-only" },
                { "DefaultNetwork=egress\n", "", true, "[LLM] Endpoint= with DefaultNetwork=egress" },
                { "", "Network=daemon-only\n", false, "[LLM] Endpoint= with Network=daemon-only" },
                { "", "Network=none\n", false, "[LLM] Endpoint= with Network=none" },
                { "DefaultNetwork=daemon-only\n", "", false, "[LLM] Endpoint= with DefaultNetwork=daemon-only" },
                { "DefaultNetwork=garbage\n", "", false, "[LLM] Endpoint= with an invalid DefaultNetwork= (daemon-only)" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *conf = strprintf("[Sandbox]\nMemory=1G\n%s", cases[i].conf);
                char *role = strprintf("[Role]\nExec=/bin/true\n[Sandbox]\n%s[LLM]\nEndpoint=http://10.0.0.5:8080/v1\n",
                                       cases[i].sandbox);
                RoleLoad l = test_role_load(tmpdir, conf, "llm.role", role, NULL);
                if (cases[i].accepted)
                        ok(l.r == 0 && l.role, "%s is accepted", cases[i].what);
                else {
                        ok(l.r < 0 && !l.role, "%s is refused", cases[i].what);
                        like(l.err, "Endpoint=", "%s: the refusal names Endpoint=", cases[i].what);
                }
                test_role_load_done(&l);
                free(conf);
                free(role);
        }

        {
                RoleLoad l = test_role_load(tmpdir, "[Sandbox]\nMemory=1G\n[LLM]\nEndpoint=https://llm.example.com/v1\n",
                                            "c.role", "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=daemon-only\n", NULL);
                ok(l.r == 0 && l.role, "cloister.conf's own [LLM] Endpoint= does not bind a daemon-only role (the broker uses it)");
                test_role_load_done(&l);
        }
}

static void test_allow_upstreams(void) {
        RoleLoad l = test_role_load(tmpdir,
                                    "[Sandbox]\nMemory=1G\n",
                                    "allow.role", "[Role]\nExec=/bin/true\n[Broker]\nAllow=github\n",
                                    "cloister.conf.d/50-github.conf", "[Upstream github]\nKind=http\nURL=https://api.github.com\n",
                                    NULL);

        ok(l.r == 0 && l.role, "Allow= may name an upstream defined in a cloister.conf drop-in");
        test_role_load_done(&l);
}

static void test_project_dirs(void) {
        /* The project file is looked up in every configuration directory. */
        RoleLoad l = test_role_load(tmpdir, "[Sandbox]\nMemory=1G\n", "p.role",
                                    "[Role]\nExec=/bin/true\nProject=webapp\n",
                                    "projects/webapp.project", "[Project]\nWorkspace=/srv/projects/webapp\n",
                                    NULL);

        ok(l.r == 0 && l.role && streq_ptr(l.role->workspace, "/srv/projects/webapp"),
           "Project= finds projects/<name>.project in the configuration directories");
        test_role_load_done(&l);

        l = test_role_load(tmpdir, "[Sandbox]\nMemory=1G\n", "p.role",
                           "[Role]\nExec=/bin/true\nProject=webapp\n",
                           "projects/webapp.project", "[Project]\nWorkspace=/usr/src/webapp\n",
                           NULL);
        {
                char *where = test_role_where(&l, 3);
                ok(l.r < 0 && !l.role, "a role whose project is refused is refused");
                like(l.err, where, "...naming file:line of Project=");
                free(where);
        }
        test_role_load_done(&l);

        l = test_role_load(tmpdir, "[Sandbox]\nMemory=1G\n", "p.role",
                           "[Role]\nExec=/bin/true\nProject=webapp\n",
                           "projects/webapp.project", "[Project]\nWorkspace=/srv/projects/webapp\n[Dependencies]\nPip=r.lock\n",
                           NULL);
        ok(l.r == 0 && l.role && l.role->deps[DEPS_PIP] && !l.role->deps[DEPS_NPM],
           "a role gets its project's declared dependency sets");
        test_role_load_done(&l);

        l = test_role_load(tmpdir, "[Sandbox]\nMemory=1G\n", "p.role",
                           "[Role]\nExec=/bin/true\nProject=webapp\nEnvironment=PYTHONPATH=/x\n",
                           "projects/webapp.project", "[Project]\nWorkspace=/srv/projects/webapp\n[Dependencies]\nPip=r.lock\n",
                           NULL);
        ok(l.r < 0 && !l.role, "a role setting PYTHONPATH= while its project declares Pip= is refused");
        like(l.err, "p.role:3:", "...naming the Project= line");
        like(l.err, "PYTHONPATH", "...and the variable");
        test_role_load_done(&l);

        l = test_role_load(tmpdir, "[Sandbox]\nMemory=1G\n", "p.role",
                           "[Role]\nExec=/bin/true\nProject=webapp\nEnvironment=NODE_PATH=/x\n",
                           "projects/webapp.project", "[Project]\nWorkspace=/srv/projects/webapp\n[Dependencies]\nPip=r.lock\n",
                           NULL);
        ok(l.r == 0 && l.role, "NODE_PATH= of a role whose project declares only Pip= is accepted");
        test_role_load_done(&l);
}

int main(void) {
        tmpdir = test_tmpdir_new();

        test_compiled_in();
        test_from_cloister_conf();
        test_network_modes();
        test_endpoint_and_mode();
        test_allow_upstreams();
        test_project_dirs();

        test_tmpdir_remove(tmpdir);
        return tap_done();
}
