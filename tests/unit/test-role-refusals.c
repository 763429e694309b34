/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/conf/role.c: every way a role file is refused (cloister.role(5): FILE SYNTAX, the keys, NETWORK MODES). A refused file yields no role at
 * all, and the error names file:line, the key and a reason. */

#include "ini-strict.h"
#include "role.h"
#include "tap.h"
#include "test-util.h"

static char *tmpdir;

#define CONF                                    \
        "[Sandbox]\n"                           \
        "Memory=1G\n"                           \
        "[Upstream github]\n"                   \
        "Kind=http\n"                           \
        "URL=https://api.github.com\n"

/* Loads `role_text` (a full role file) against CONF and checks the refusal: the message names
 * "path:line:" (line 0: only the path), contains every NULL-terminated `needles`. */
static void refused_full(const char *what, const char *file_name, const char *conf, const char *role_text,
                         unsigned line, const char *const *needles) {
        RoleLoad l = test_role_load(tmpdir, conf, file_name, role_text, NULL);
        char *where = line ? test_role_where(&l, line) : strdup(l.path);

        ok(l.r < 0, "%s: the role is refused", what);
        ok(l.role == NULL, "%s: no role is returned", what);
        like(l.err, where, "%s: the error names %s", what, line ? "file:line" : "the file");
        for (const char *const *n = needles; n && *n; n++)
                like(l.err, *n, "%s: the error mentions \"%s\"", what, *n);
        free(where);
        test_role_load_done(&l);
}

#define REFUSED(what, role_text, line, ...) \
        refused_full(what, "bad.role", CONF, role_text, line, (const char *const[]) { __VA_ARGS__, NULL })

/* A role valid but for `lines`, which start at line 3 (after "[Role]\nExec=/bin/true\n"). */
#define REFUSED_AT3(what, lines, ...) \
        REFUSED(what, "[Role]\nExec=/bin/true\n" lines "\n", 3, __VA_ARGS__)
/* ...at line 4, after "[Role]\nExec=/bin/true\n[Sandbox]\n". */
#define REFUSED_SANDBOX(what, line_text, ...) \
        REFUSED(what, "[Role]\nExec=/bin/true\n[Sandbox]\n" line_text "\n", 4, __VA_ARGS__)

static void test_structure(void) {
        REFUSED_AT3("an unknown section", "[Nonsense]", "[Nonsense]");
        REFUSED_AT3("an unknown key", "Descripton=typo", "Descripton=");
        REFUSED("a key before any section", "Exec=/bin/true\n[Role]\n", 1, "Exec=");
        REFUSED("a key of another section", "[Role]\nExec=/bin/true\nMemory=1G\n", 3, "Memory=");
        REFUSED("a duplicate Description=", "[Role]\nDescription=a\nExec=/bin/true\nDescription=b\n", 4,
                "Description=", "line 2");
        REFUSED("a duplicate Exec=", "[Role]\nExec=/bin/true\nExec=/bin/false\n", 3, "Exec=", "line 2");
        REFUSED("a duplicate in a re-opened section",
                "[Role]\nExec=/bin/true\n[Sandbox]\nMemory=1G\n[Role]\n[Sandbox]\nMemory=2G\n", 7, "Memory=", "line 4");
        REFUSED("a duplicate reset of a scalar", "[Role]\nExec=/bin/true\n[Sandbox]\nCPUs=1\nCPUs=\n", 5, "CPUs=", "line 4");
        REFUSED("Exec= missing", "[Role]\nDescription=no program\n", 0, "Exec=");
        REFUSED("an empty file", "", 0, "Exec=");
}

static void test_inih_traps(void) {
        char pad[256];
        char *text;

        REFUSED("an inline comment", "[Role]\nExec=/bin/sh -c \"a ; b\"\n", 2, "inline comment");
        REFUSED("an indented continuation line", "[Role]\nExec=/bin/true\n  --more\n", 3, "indented");
        REFUSED("a byte-order mark", "\xEF\xBB\xBF[Role]\nExec=/bin/true\n", 1, "byte-order mark");
        REFUSED("a control character", "[Role]\nExec=/bin/true\nDescription=a\x07z\n", 3, "control character");
        REFUSED("Key:Value syntax", "[Role]\nExec:/bin/true\n", 2, NULL);

        /* The long-line trap in a role: inih would cut the line and read its tail as a
         * [Sandbox] key of its own, opening the network. */
        memset(pad, 'x', sizeof pad);
        pad[ini_strict_max_line() + 1 - strlen("Input=/srv/")] = 0;
        text = strprintf("[Role]\nExec=/bin/true\n[Sandbox]\nInput=/srv/%sNetwork=egress\n", pad);
        REFUSED("a long line whose tail reads as a key", text, 4, "too long");
        free(text);
}

static void test_exec(void) {
        REFUSED("a relative Exec=", "[Role]\nExec=python3 x.py\n", 2, "Exec=", "absolute");
        REFUSED("an empty Exec=", "[Role]\nExec=\n", 2, "Exec=");
        REFUSED("Exec= with an unterminated quote", "[Role]\nExec=/bin/sh -c \"echo\n", 2, "Exec=", "unterminated quote");
        REFUSED("Exec= with a trailing backslash", "[Role]\nExec=/bin/echo a\\\n", 2, "Exec=", "trailing backslash");
}

static void test_role_section(void) {
        REFUSED_AT3("Durability=forever", "Durability=forever", "Durability=", "forever");
        REFUSED_AT3("User=root", "User=root", "User=", "root");
        REFUSED_AT3("User=Admin", "User=Admin", "User=");
        REFUSED_AT3("User=a b", "User=a b", "User=");
        REFUSED_AT3("User=0", "User=0", "User=");
        REFUSED_AT3("Project=Web App", "Project=Web App", "Project=");
        REFUSED_AT3("Project= without a project file", "Project=nosuch", "Project=", "nosuch");
        REFUSED_AT3("Environment=CLOISTER_X=1", "Environment=CLOISTER_X=1", "Environment=", "CLOISTER_");
        REFUSED_AT3("Environment=CLOISTER_ROLE=x", "Environment=CLOISTER_ROLE=x", "Environment=");
        REFUSED_AT3("Environment=OPENAI_API_KEY=x", "Environment=OPENAI_API_KEY=x", "Environment=", "OPENAI_API_KEY");
        REFUSED_AT3("Environment=OPENAI_BASE_URL=x", "Environment=OPENAI_BASE_URL=http://evil", "Environment=");
        REFUSED_AT3("Environment=OPENAI_API_BASE=x", "Environment=OPENAI_API_BASE=http://evil", "Environment=");
        REFUSED_AT3("Environment= without '='", "Environment=LOG_LEVEL", "Environment=");
        REFUSED_AT3("Environment= with an empty name", "Environment==x", "Environment=");
        REFUSED_AT3("Environment= with a bad name", "Environment=A-B=1", "Environment=");
        REFUSED_AT3("Environment= with a name starting with a digit", "Environment=1A=1", "Environment=");
        REFUSED("a reserved Environment= after a valid one",
                "[Role]\nExec=/bin/true\nEnvironment=A=1\nEnvironment=CLOISTER_NETWORK=host\n", 4, "Environment=");
}

static void test_sandbox_section(void) {
        REFUSED_SANDBOX("Network=bogus", "Network=bogus", "Network=", "bogus");
        REFUSED_SANDBOX("Network=host without AllowHostNetwork=yes", "Network=host", "Network=", "AllowHostNetwork");
        REFUSED_SANDBOX("Memory=infinity", "Memory=infinity", "Memory=", "infinity");
        REFUSED_SANDBOX("Memory=0", "Memory=0", "Memory=");
        REFUSED_SANDBOX("Memory=lots", "Memory=lots", "Memory=");
        REFUSED_SANDBOX("Memory=1GB", "Memory=1GB", "Memory=");
        REFUSED_SANDBOX("CPUs=0", "CPUs=0", "CPUs=");
        REFUSED_SANDBOX("CPUs=1.505", "CPUs=1.505", "CPUs=");
        REFUSED_SANDBOX("CPUs=-1", "CPUs=-1", "CPUs=");
        REFUSED_SANDBOX("Tasks=0", "Tasks=0", "Tasks=");
        REFUSED_SANDBOX("Tasks=many", "Tasks=many", "Tasks=");
        REFUSED_SANDBOX("TmpSize=infinity", "TmpSize=infinity", "TmpSize=", "infinity");
        REFUSED_SANDBOX("ShmSize=0", "ShmSize=0", "ShmSize=");
        REFUSED_SANDBOX("Timeout=infinity", "Timeout=infinity", "Timeout=");
        REFUSED_SANDBOX("Timeout=soon", "Timeout=soon", "Timeout=");
        REFUSED_SANDBOX("StopGrace=-1s", "StopGrace=-1s", "StopGrace=");
        REFUSED_SANDBOX("Input= relative", "Input=srv/in", "Input=");
        REFUSED_SANDBOX("Input=/", "Input=/", "Input=");
        REFUSED_SANDBOX("Input=/proc/self", "Input=/proc/self", "Input=");
        REFUSED_SANDBOX("Input=/run/cloister", "Input=/run/cloister", "Input=");
        REFUSED_SANDBOX("Input= not normalized", "Input=/srv/in/", "Input=");
        REFUSED_SANDBOX("Output=/usr/x", "Output=/usr/x", "Output=");
        REFUSED_SANDBOX("Output=/etc", "Output=/etc", "Output=");
        REFUSED_SANDBOX("Output=/", "Output=/", "Output=");
        REFUSED_SANDBOX("Output=/home", "Output=/home", "Output=");
        REFUSED_SANDBOX("Output=/var/lib/cloister/other", "Output=/var/lib/cloister/other", "Output=");
        REFUSED_SANDBOX("Output= another role's managed output", "Output=/var/lib/cloister-output/other", "Output=");
        REFUSED_SANDBOX("Output= under /var/lib/private", "Output=/var/lib/private/cloister-output/other", "Output=");
        REFUSED_SANDBOX("Output= with '..'", "Output=/srv/out/../../etc", "Output=");
        REFUSED_SANDBOX("JIT=maybe", "JIT=maybe", "JIT=");
        REFUSED_SANDBOX("Service=Bad!", "Service=Bad!", "Service=", "Bad!");
        REFUSED_SANDBOX("Service= one bad name of two", "Service=good ../x", "Service=");
}

static void test_read_only_mount(void) {
        REFUSED_SANDBOX("ReadOnlyMount=…:rw", "ReadOnlyMount=/srv/data:/data:rw", "ReadOnlyMount=", ":ro");
        REFUSED_SANDBOX("ReadOnlyMount=…:ro,nosuid", "ReadOnlyMount=/srv/data:/data:ro,nosuid", "ReadOnlyMount=");
        REFUSED_SANDBOX("ReadOnlyMount=…:ro:ro", "ReadOnlyMount=/srv/data:/data:ro:ro", "ReadOnlyMount=");
        REFUSED_SANDBOX("ReadOnlyMount= without a target", "ReadOnlyMount=/srv/data", "ReadOnlyMount=");
        REFUSED_SANDBOX("ReadOnlyMount= with a relative source", "ReadOnlyMount=srv/data:/data", "ReadOnlyMount=");
        REFUSED_SANDBOX("ReadOnlyMount= with a relative target", "ReadOnlyMount=/srv/data:data", "ReadOnlyMount=");
        REFUSED_SANDBOX("ReadOnlyMount= with an empty target", "ReadOnlyMount=/srv/data:", "ReadOnlyMount=");
        REFUSED_SANDBOX("ReadOnlyMount= onto /tmp", "ReadOnlyMount=/srv/data:/tmp", "ReadOnlyMount=");
        REFUSED_SANDBOX("ReadOnlyMount= onto /workspace/x", "ReadOnlyMount=/srv/data:/workspace/x", "ReadOnlyMount=");
        REFUSED_SANDBOX("ReadOnlyMount= onto /output", "ReadOnlyMount=/srv/data:/output", "ReadOnlyMount=");
        REFUSED_SANDBOX("ReadOnlyMount= onto /", "ReadOnlyMount=/srv/data:/", "ReadOnlyMount=");
        REFUSED_SANDBOX("ReadOnlyMount= from /proc", "ReadOnlyMount=/proc:/p", "ReadOnlyMount=");
        REFUSED_SANDBOX("ReadOnlyMount= from /run/cloister", "ReadOnlyMount=/run/cloister:/c", "ReadOnlyMount=");
        REFUSED("two ReadOnlyMount= entries with the same target",
                "[Role]\nExec=/bin/true\n[Sandbox]\nReadOnlyMount=/srv/a:/data\nReadOnlyMount=/srv/b:/data:ro\n",
                5, "ReadOnlyMount=", "/data");
}

static void test_gpus(void) {
        REFUSED_SANDBOX("GPUs=some", "GPUs=some", "GPUs=");
        REFUSED_SANDBOX("GPUs=0,,1", "GPUs=0,,1", "GPUs=");
        REFUSED_SANDBOX("GPUs=,0", "GPUs=,0", "GPUs=");
        REFUSED_SANDBOX("GPUs=0,", "GPUs=0,", "GPUs=");
        REFUSED_SANDBOX("GPUs=-1", "GPUs=-1", "GPUs=");
        REFUSED_SANDBOX("GPUs=64 (above the highest index)", "GPUs=64", "GPUs=", "0…63");
        REFUSED_SANDBOX("GPUs=01 (a leading zero)", "GPUs=01", "GPUs=");
        REFUSED_SANDBOX("GPUs=0 1 (blank-separated)", "GPUs=0 1", "GPUs=");
        REFUSED_SANDBOX("GPUs=1,1 (listed twice)", "GPUs=1,1", "GPUs=", "twice");
        REFUSED_SANDBOX("GPUs=all,0", "GPUs=all,0", "GPUs=");
}

static void test_llm_install_broker(void) {
        REFUSED("[LLM] Endpoint= with Network=daemon-only",
                "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=daemon-only\n[LLM]\nEndpoint=https://llm.example.com/v1\n",
                6, "Endpoint=", "egress");
        REFUSED("[LLM] Endpoint= with Network=none",
                "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=none\n[LLM]\nEndpoint=https://llm.example.com/v1\n",
                6, "Endpoint=");
        REFUSED("[LLM] Endpoint= not a URL", "[Role]\nExec=/bin/true\n[LLM]\nEndpoint=llm.example.com\n", 4, "Endpoint=");
        REFUSED("[LLM] ContextSize=0", "[Role]\nExec=/bin/true\n[LLM]\nContextSize=0\n", 4, "ContextSize=");
        REFUSED("[LLM] an unknown key", "[Role]\nExec=/bin/true\n[LLM]\nAPIKey=sk-123\n", 4, "APIKey=");
        REFUSED("[Install] WantedBy= not a unit name", "[Role]\nExec=/bin/true\n[Install]\nWantedBy=boot\n", 4, "WantedBy=");
        REFUSED("[Install] WantedBy= a socket", "[Role]\nExec=/bin/true\n[Install]\nWantedBy=x.socket\n", 4, "WantedBy=");
        REFUSED("[Install] WantedBy= with a slash", "[Role]\nExec=/bin/true\n[Install]\nWantedBy=../x.target\n", 4, "WantedBy=");
        REFUSED("[Broker] Allow= an unknown upstream", "[Role]\nExec=/bin/true\n[Broker]\nAllow=github gitlab\n",
                4, "Allow=", "gitlab");
        REFUSED("[Broker] Allow= an invalid name", "[Role]\nExec=/bin/true\n[Broker]\nAllow=Git_Hub\n", 4, "Allow=");
        REFUSED("[Broker] RequestsPerMinute=0", "[Role]\nExec=/bin/true\n[Broker]\nRequestsPerMinute=0\n", 4, "RequestsPerMinute=");
        REFUSED("[Broker] TokensPerMinute=lots", "[Role]\nExec=/bin/true\n[Broker]\nTokensPerMinute=lots\n", 4, "TokensPerMinute=");
        REFUSED("[Broker] MaxRequestBytes=infinity", "[Role]\nExec=/bin/true\n[Broker]\nMaxRequestBytes=infinity\n", 4, "MaxRequestBytes=");
        REFUSED("[Broker] MaxConcurrent=0", "[Role]\nExec=/bin/true\n[Broker]\nMaxConcurrent=0\n", 4, "MaxConcurrent=");
        REFUSED("[Broker] LoopbackPort=0", "[Role]\nExec=/bin/true\n[Broker]\nLoopbackPort=0\n", 4, "LoopbackPort=");
        REFUSED("[Broker] LoopbackPort=70000", "[Role]\nExec=/bin/true\n[Broker]\nLoopbackPort=70000\n", 4, "LoopbackPort=");
        REFUSED("[Broker] Socket= is cloister.conf's", "[Role]\nExec=/bin/true\n[Broker]\nSocket=/tmp/x.sock\n", 4, "Socket=");
}

static void test_memory_required(void) {
        refused_full("Memory= set nowhere", "nomem.role", NULL, "[Role]\nExec=/bin/true\n", 0,
                     (const char *const[]) { "Memory=", NULL });
        refused_full("Memory= set nowhere (cloister.conf without it)", "nomem.role", "[Sandbox]\nTasks=10\n",
                     "[Role]\nExec=/bin/true\n", 0, (const char *const[]) { "Memory=", NULL });
        refused_full("Memory= reset by the role", "nomem.role", NULL,
                     "[Role]\nExec=/bin/true\n[Sandbox]\nMemory=\n", 0, (const char *const[]) { "Memory=", NULL });
}

static void test_file_names(void) {
        static const char *const bad[] = { "Bad.role", "a b.role", "-x.role", "_x.role", "x.y.role", ".role" };
        char n64[64 + 6];

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                refused_full("an invalid role file name", bad[i], CONF, "[Role]\nExec=/bin/true\n", 0, NULL);

        memset(n64, 'r', 64);
        strcpy(n64 + 64, ".role");
        refused_full("a role name of 64 characters", n64, CONF, "[Role]\nExec=/bin/true\n", 0, NULL);
        refused_full("a file without the .role suffix", "x.rol", CONF, "[Role]\nExec=/bin/true\n", 0, NULL);
        refused_full("the role name is named", "Reviewer.role", CONF, "[Role]\nExec=/bin/true\n", 0,
                     (const char *const[]) { "Reviewer", NULL });
}

static void test_every_error_reported(void) {
        RoleLoad l = test_role_load(tmpdir, CONF, "many.role",
                                    "[Role]\nExec=/bin/true\nUser=root\n[Sandbox]\nCPUs=0\nTasks=0\n", NULL);
        char *w3 = test_role_where(&l, 3), *w5 = test_role_where(&l, 5), *w6 = test_role_where(&l, 6);

        ok(l.r < 0 && !l.role, "a role with three bad values is refused");
        like(l.err, w3, "the first bad value is reported");
        like(l.err, w5, "the second bad value is reported");
        like(l.err, w6, "the third bad value is reported");
        free(w3);
        free(w5);
        free(w6);
        test_role_load_done(&l);
}

int main(void) {
        tmpdir = test_tmpdir_new();

        test_structure();
        test_inih_traps();
        test_exec();
        test_role_section();
        test_sandbox_section();
        test_read_only_mount();
        test_gpus();
        test_llm_install_broker();
        test_memory_required();
        test_file_names();
        test_every_error_reported();

        test_tmpdir_remove(tmpdir);
        return tap_done();
}
