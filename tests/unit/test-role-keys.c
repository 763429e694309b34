/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/conf/role.c: every key of a role file (cloister.role(5)) is read into the model with the value it states. */

#include "role.h"
#include "tap.h"
#include "test-util.h"

static char *tmpdir;

#define CONF                                    \
        "[Sandbox]\n"                           \
        "AllowHostNetwork=no\n"                 \
        "[Upstream github]\n"                   \
        "Kind=http\n"                           \
        "URL=https://api.github.com\n"          \
        "[Upstream issues]\n"                   \
        "Kind=mcp\n"                            \
        "URL=http://127.0.0.1:9000/mcp\n"

#define PROJECT "[Project]\nWorkspace=/srv/projects/webapp\n"

static void test_every_key(void) {
        RoleLoad l = test_role_load(tmpdir, CONF, "reviewer.role",
                "# cloister.role(5) in full\n"
                "[Role]\n"
                "Description=Reviews patches\n"
                "Exec=/usr/bin/python3 /opt/agents/review.py --strict \"two words\"\n"
                "Project=webapp\n"
                "Durability=durable\n"
                "User=agent-user\n"
                "Environment=LOG_LEVEL=info\n"
                "Environment=EMPTY=\n"
                "Environment=SPACED=a b c\n"
                "\n"
                "[Sandbox]\n"
                "Network=egress\n"
                "Memory=1G\n"
                "CPUs=1.5\n"
                "Tasks=128\n"
                "TmpSize=128M\n"
                "Timeout=15min\n"
                "StopGrace=20s\n"
                "Input=/srv/in\n"
                "Output=/srv/out\n"
                "ReadOnlyMount=/srv/datasets:/data\n"
                "ReadOnlyMount=/srv/models:/models:ro\n"
                "GPUs=\n"
                "ShmSize=32M\n"
                "Service=inference\n"
                "Service=embed inference\n"
                "JIT=yes\n"
                "\n"
                "[LLM]\n"
                "Model=qwen3.6:35b\n"
                "Endpoint=https://llm.example.com/v1\n"
                "ContextSize=32768\n"
                "\n"
                "[Install]\n"
                "WantedBy=multi-user.target\n"
                "WantedBy=agents.target multi-user.target\n"
                "\n"
                "[Broker]\n"
                "Allow=github issues\n"
                "RequestsPerMinute=30\n"
                "TokensPerMinute=5000\n"
                "MaxRequestBytes=256K\n"
                "MaxConcurrent=3\n"
                "LoopbackPort=7900\n",
                "projects/webapp.project", PROJECT,
                NULL);
        Role *r = l.role;

        is_int(l.r, 0, "a role using every key of cloister.role(5) is accepted");
        is_str(l.err, "", "...and logs nothing");
        if (!r) {
                diag("%s", l.err);
                test_role_load_done(&l);
                return;
        }
        is_str(r->name, "reviewer", "the role name comes from the file name");
        is_str(r->path, l.path, "the role path is kept");

        /* [Role] */
        is_str(r->description, "Reviews patches", "Description=");
        is_str(r->exec, "/usr/bin/python3 /opt/agents/review.py --strict \"two words\"", "Exec= is kept as written");
        ok(strv_length(r->argv) == 4 && streq(r->argv[0], "/usr/bin/python3") &&
           streq(r->argv[1], "/opt/agents/review.py") && streq(r->argv[2], "--strict") &&
           streq(r->argv[3], "two words"), "Exec= is split with quoting");
        is_str(r->project, "webapp", "Project=");
        is_str(r->workspace, "/srv/projects/webapp", "Project= brings the project's Workspace=");
        is_int(r->durability, DURABILITY_DURABLE, "Durability=durable");
        is_str(r->user, "agent-user", "User= (a named non-root user)");
        ok(strv_length(r->environment) == 3 && streq(r->environment[0], "LOG_LEVEL=info") &&
           streq(r->environment[1], "EMPTY=") && streq(r->environment[2], "SPACED=a b c"),
           "Environment= is repeatable, in order, values kept whole");

        /* [Sandbox] */
        is_str(r->network_str, "egress", "Network= as written");
        is_int(r->network, NETWORK_EGRESS, "Network=egress");
        is_u64(r->limits.memory, UINT64_C(1) << 30, "Memory=1G");
        is_int(r->limits.cpus_percent, 150, "CPUs=1.5");
        is_u64(r->limits.tasks, 128, "Tasks=128");
        is_u64(r->limits.tmp_size, UINT64_C(128) << 20, "TmpSize=128M");
        is_u64(r->limits.timeout, 15 * 60 * USEC_PER_SEC, "Timeout=15min");
        is_u64(r->limits.stop_grace, 20 * USEC_PER_SEC, "StopGrace=20s");
        is_str(r->input, "/srv/in", "Input=");
        is_str(r->output, "/srv/out", "Output=");
        is_int(r->n_read_only_mounts, 2, "ReadOnlyMount= is repeatable");
        if (r->n_read_only_mounts == 2) {
                is_str(r->read_only_mounts[0].source, "/srv/datasets", "ReadOnlyMount= host path");
                is_str(r->read_only_mounts[0].target, "/data", "ReadOnlyMount= sandbox path");
                is_str(r->read_only_mounts[1].source, "/srv/models", "ReadOnlyMount= host path with :ro");
                is_str(r->read_only_mounts[1].target, "/models", "ReadOnlyMount= sandbox path without the :ro suffix");
        }
        ok(r->gpus == NULL, "GPUs= (empty) is no GPU");
        is_u64(r->limits.shm_size, UINT64_C(32) << 20, "ShmSize=32M");
        ok(strv_length(r->services) == 2 && streq(r->services[0], "inference") && streq(r->services[1], "embed"),
           "Service= is a repeatable name list without repeats");
        is_int(r->jit, 1, "JIT=yes");

        /* [LLM] */
        is_str(r->llm_model, "qwen3.6:35b", "[LLM] Model=");
        is_str(r->llm_endpoint, "https://llm.example.com/v1", "[LLM] Endpoint= (with Network=egress)");
        is_u64(r->llm_context_size, 32768, "[LLM] ContextSize=");

        /* [Install] */
        ok(strv_length(r->wanted_by) == 2 && streq(r->wanted_by[0], "multi-user.target") &&
           streq(r->wanted_by[1], "agents.target"), "[Install] WantedBy= is a repeatable list without repeats");

        /* [Broker] */
        ok(strv_length(r->broker_allow) == 2 && streq(r->broker_allow[0], "github") &&
           streq(r->broker_allow[1], "issues"), "[Broker] Allow= names upstreams of cloister.conf");
        is_u64(r->broker.requests_per_minute, 30, "RequestsPerMinute=30");
        is_u64(r->broker.tokens_per_minute, 5000, "TokensPerMinute=5000");
        is_u64(r->broker.max_request_bytes, 256 << 10, "MaxRequestBytes=256K");
        is_u64(r->broker.max_concurrent, 3, "MaxConcurrent=3");
        is_int(r->broker.loopback_port, 7900, "LoopbackPort=7900");

        test_role_load_done(&l);
}

static void test_minimal(void) {
        RoleLoad l = test_role_load(tmpdir, "[Sandbox]\nMemory=512M\n", "min.role",
                                    "[Role]\nExec=/bin/true\n", NULL);
        Role *r = l.role;

        is_int(l.r, 0, "a role with only Exec= (Memory= from cloister.conf) is accepted");
        if (r) {
                ok(r->description == NULL, "no Description=");
                is_int(r->durability, DURABILITY_TRANSIENT, "Durability= defaults to transient");
                ok(r->user == NULL, "no User=: a dynamic user");
                ok(r->environment == NULL, "no Environment=");
                ok(r->project == NULL && r->workspace == NULL, "no project, no workspace");
                ok(r->input == NULL && r->output == NULL, "no Input=, no Output=");
                is_int(r->n_read_only_mounts, 0, "no ReadOnlyMount=");
                ok(r->services == NULL && r->wanted_by == NULL && r->broker_allow == NULL, "no lists");
                ok(r->jit <= 0, "JIT= is not on");
                ok(r->llm_endpoint == NULL && r->llm_model == NULL, "no [LLM] overrides");
                is_u64(r->limits.memory, UINT64_C(512) << 20, "Memory= from cloister.conf");
        }
        test_role_load_done(&l);

        l = test_role_load(tmpdir, "[Sandbox]\nMemory=512M\n", "t.role",
                           "[Role]\nExec=/bin/true\nDurability=transient\n[Sandbox]\nJIT=no\n", NULL);
        ok(l.role && l.role->durability == DURABILITY_TRANSIENT && l.role->jit == 0,
           "Durability=transient and JIT=no");
        test_role_load_done(&l);
}

static void test_lists_reset(void) {
        RoleLoad l = test_role_load(tmpdir, CONF, "lists.role",
                "[Role]\n"
                "Exec=/bin/true\n"
                "Environment=A=1\n"
                "Environment=B=2\n"
                "Environment=\n"
                "Environment=C=3\n"
                "[Sandbox]\n"
                "Memory=1G\n"
                "ReadOnlyMount=/srv/a:/a\n"
                "ReadOnlyMount=\n"
                "ReadOnlyMount=/srv/b:/a\n"
                "Service=x y\n"
                "Service=\n"
                "Service=z\n"
                "[Install]\n"
                "WantedBy=a.target\n"
                "WantedBy=\n"
                "WantedBy=b.service\n"
                "[Broker]\n"
                "Allow=github\n"
                "Allow=\n"
                "Allow=issues\n",
                NULL);
        Role *r = l.role;

        is_int(l.r, 0, "lists with empty-assignment resets are accepted");
        if (r) {
                ok(strv_length(r->environment) == 1 && streq(r->environment[0], "C=3"),
                   "Environment= (empty) resets the list");
                ok(r->n_read_only_mounts == 1 && streq(r->read_only_mounts[0].source, "/srv/b"),
                   "ReadOnlyMount= (empty) resets the list, so the same target may be used again");
                ok(strv_length(r->services) == 1 && streq(r->services[0], "z"), "Service= (empty) resets the list");
                ok(strv_length(r->wanted_by) == 1 && streq(r->wanted_by[0], "b.service"), "WantedBy= (empty) resets the list");
                ok(strv_length(r->broker_allow) == 1 && streq(r->broker_allow[0], "issues"), "Allow= (empty) resets the list");
        }
        test_role_load_done(&l);
}

static void test_values(void) {
        static const struct { const char *line; const char *what; } accepted[] = {
                { "[Sandbox]\nTimeout=0", "Timeout=0 (disabled)" },
                { "[Sandbox]\nTimeout=1h 30min", "Timeout=1h 30min" },
                { "[Sandbox]\nStopGrace=0", "StopGrace=0" },
                { "[Sandbox]\nCPUs=0.01", "CPUs=0.01" },
                { "[Sandbox]\nNetwork=none", "Network=none" },
                { "[Sandbox]\nNetwork=daemon-only", "Network=daemon-only" },
                { "[Sandbox]\nInput=/srv/data/in", "Input= a deep path" },
                { "[Sandbox]\nOutput=/var/lib/agents/out", "Output= under /var/lib" },
                { "[Sandbox]\nReadOnlyMount=/usr/share/dict:/dict", "ReadOnlyMount= of an OS path, read-only" },
                { "[LLM]\nModel=", "[LLM] Model= (empty)" },
                { "[Broker]\nLoopbackPort=65535", "LoopbackPort=65535" },
                { "[Install]\nWantedBy=agent@x.service", "WantedBy= a template instance" },
                { "[Role]\nUser=nobody", "User=nobody" },
                { "[Role]\nUser=_svc", "User=_svc" },
                { "[Role]\nEnvironment=_X=1", "Environment= a name starting with '_'" },
                { "[Role]\nEnvironment=PATH=/usr/bin:/bin", "Environment=PATH=…" },
                { "[Role]\nEnvironment=OPENAI_MODEL=x", "Environment=OPENAI_MODEL (not a rewritten endpoint variable)" },
        };

        for (size_t i = 0; i < ELEMENTSOF(accepted); i++) {
                char *text = strprintf("[Role]\nExec=/bin/true\n[Sandbox]\nMemory=1G\n%s\n", accepted[i].line);
                RoleLoad l = test_role_load(tmpdir, NULL, "v.role", text, NULL);
                ok(l.r == 0 && l.role, "%s is accepted", accepted[i].what);
                if (l.r != 0)
                        diag("%s", l.err);
                test_role_load_done(&l);
                free(text);
        }
}

static void test_names(void) {
        char n63[64 + 5];
        RoleLoad l;

        memset(n63, 'r', 63);
        strcpy(n63 + 63, ".role");
        l = test_role_load(tmpdir, "[Sandbox]\nMemory=1G\n", n63, "[Role]\nExec=/bin/true\n", NULL);
        ok(l.r == 0 && l.role && strlen(l.role->name) == 63, "a role name of 63 characters is valid");
        test_role_load_done(&l);

        l = test_role_load(tmpdir, "[Sandbox]\nMemory=1G\n", "web-app_2.role", "[Role]\nExec=/bin/true\n", NULL);
        ok(l.r == 0 && l.role && streq(l.role->name, "web-app_2"), "a role name with '-' and '_'");
        test_role_load_done(&l);

        ok(environment_name_is_reserved("CLOISTER_ROLE"), "CLOISTER_ROLE is reserved");
        ok(environment_name_is_reserved("CLOISTER_"), "CLOISTER_ is reserved");
        ok(environment_name_is_reserved("OPENAI_BASE_URL"), "OPENAI_BASE_URL is reserved");
        ok(environment_name_is_reserved("OPENAI_API_BASE"), "OPENAI_API_BASE is reserved");
        ok(environment_name_is_reserved("OPENAI_API_KEY"), "OPENAI_API_KEY is reserved");
        ok(!environment_name_is_reserved("LOG_LEVEL"), "LOG_LEVEL is not reserved");
        ok(!environment_name_is_reserved("CLOISTERX"), "CLOISTERX is not reserved");
}

int main(void) {
        tmpdir = test_tmpdir_new();

        test_every_key();
        test_minimal();
        test_lists_reset();
        test_values();
        test_names();

        test_tmpdir_remove(tmpdir);
        return tap_done();
}
