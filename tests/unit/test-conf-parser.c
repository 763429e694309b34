/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/conf/conf-parser.c: the typed key parsers and the table walk shared by every file kind. A bad
 * value is logged once as "path:line: Invalid Key= value "v" in [Section]: reason". */

#include <stddef.h>

#include "conf-parser.h"
#include "tap.h"
#include "test-util.h"

#define PATH "/nonexistent/test.role"

static ConfAssignment assignment(unsigned line, const char *section, const char *key, const char *value) {
        return (ConfAssignment) { PATH, line, section, key, value };
}

/* Runs `parse` on one assignment; on refusal checks that the message names file:line, the key
 * and the value. Returns the parser's result. */
static int run(conf_parse_t parse, void *data, const char *key, const char *value, bool expect_ok) {
        ConfAssignment a = assignment(7, "Sandbox", key, value);
        char *err, *want_where = strprintf(PATH ":7: Invalid %s=", key), *want_value = strprintf("\"%s\"", value);
        int r;

        test_stderr_begin();
        r = parse(&a, data);
        err = test_stderr_end();
        if (expect_ok) {
                is_int(r, 0, "%s=%s is accepted", key, value);
                is_str(err, "", "%s=%s logs nothing", key, value);
        } else {
                is_int(r, -EINVAL, "%s=%s is refused", key, value);
                like(err, want_where, "%s=%s: the error names file:line and the key", key, value);
                like(err, want_value, "%s=%s: the error quotes the value", key, value);
                ok(strstr(err, "]: ") && strlen(strstr(err, "]: ")) > 4,
                   "%s=%s: the error gives a reason after \"in [Section]: \"", key, value);
        }
        free(err);
        free(want_where);
        free(want_value);
        return r;
}

static void test_size(void) {
        uint64_t u = 0;

        run(conf_parse_size, &u, "Memory", "512M", true);
        is_u64(u, UINT64_C(512) << 20, "Memory=512M is 512 MiB");
        run(conf_parse_size, &u, "Memory", "", true);
        is_u64(u, UNSET_U64, "Memory= (empty) resets to unset");
        run(conf_parse_size, &u, "Memory", "infinity", false);
        {
                char *err;
                ConfAssignment a = assignment(3, "Sandbox", "Memory", "infinity");
                test_stderr_begin();
                conf_parse_size(&a, &u);
                err = test_stderr_end();
                like(err, "infinity", "Memory=infinity: the reason mentions \"infinity\"");
                free(err);
        }
        run(conf_parse_size, &u, "Memory", "0", false);
        run(conf_parse_size, &u, "Memory", "1GB", false);
        run(conf_parse_size, &u, "Memory", "16E", false);
        run(conf_parse_size, &u, "Memory", "-1", false);
}

static void test_timespan(void) {
        usec_t u = 0;

        run(conf_parse_timespan, &u, "Timeout", "15min", true);
        is_u64(u, 900 * USEC_PER_SEC, "Timeout=15min");
        run(conf_parse_timespan, &u, "Timeout", "0", true);
        is_u64(u, 0, "Timeout=0 is 0 (disabled), not unset");
        run(conf_parse_timespan, &u, "Timeout", "", true);
        is_u64(u, UNSET_U64, "Timeout= (empty) resets to unset");
        run(conf_parse_timespan, &u, "Timeout", "infinity", false);
        run(conf_parse_timespan, &u, "Timeout", "soon", false);
        run(conf_parse_timespan, &u, "Timeout", "15 parsecs", false);
}

static void test_uint_cpus_port_bool(void) {
        uint64_t u = 0;
        unsigned cpus = 0;
        uint16_t port = 0;
        int b = 7;

        run(conf_parse_uint, &u, "Tasks", "256", true);
        is_u64(u, 256, "Tasks=256");
        run(conf_parse_uint, &u, "Tasks", "0", false);
        run(conf_parse_uint, &u, "Tasks", "-1", false);
        run(conf_parse_uint, &u, "Tasks", "12k", false);
        run(conf_parse_uint, &u, "Tasks", "18446744073709551615", false); /* would read as unset */
        run(conf_parse_uint, &u, "Tasks", "", true);
        is_u64(u, UNSET_U64, "Tasks= (empty) resets to unset");

        run(conf_parse_cpus, &cpus, "CPUs", "1.5", true);
        is_int(cpus, 150, "CPUs=1.5 is 150%%");
        run(conf_parse_cpus, &cpus, "CPUs", "0", false);
        run(conf_parse_cpus, &cpus, "CPUs", "1.505", false);
        run(conf_parse_cpus, &cpus, "CPUs", "", true);
        is_int(cpus, 0, "CPUs= (empty) resets to unset");

        run(conf_parse_port, &port, "LoopbackPort", "7800", true);
        is_int(port, 7800, "LoopbackPort=7800");
        run(conf_parse_port, &port, "LoopbackPort", "0", false);
        run(conf_parse_port, &port, "LoopbackPort", "65536", false);

        run(conf_parse_bool, &b, "JIT", "yes", true);
        is_int(b, 1, "JIT=yes");
        run(conf_parse_bool, &b, "JIT", "off", true);
        is_int(b, 0, "JIT=off");
        run(conf_parse_bool, &b, "JIT", "", true);
        is_int(b, -1, "JIT= (empty) resets to unset");
        run(conf_parse_bool, &b, "JIT", "maybe", false);
}

static void test_strings(void) {
        char *s = NULL;
        char **l = NULL;

        run(conf_parse_path, &s, "Input", "/srv/in", true);
        is_str(s, "/srv/in", "Input=/srv/in");
        run(conf_parse_path, &s, "Input", "srv/in", false);
        is_str(s, "/srv/in", "a refused value leaves the previous one");
        run(conf_parse_path, &s, "Input", "/srv/../etc", false);
        run(conf_parse_path, &s, "Input", "", true);
        ok(s == NULL, "Input= (empty) resets to unset");

        run(conf_parse_name, &s, "Project", "webapp", true);
        is_str(s, "webapp", "Project=webapp");
        run(conf_parse_name, &s, "Project", "Web App", false);
        free(s);
        s = NULL;

        run(conf_parse_url, &s, "Endpoint", "https://api.example.com/v1", true);
        is_str(s, "https://api.example.com/v1", "Endpoint=https://…");
        run(conf_parse_url, &s, "Endpoint", "ftp://example.com", false);
        run(conf_parse_url, &s, "Endpoint", "http://", false);
        run(conf_parse_url, &s, "Endpoint", "http://a b", false);
        run(conf_parse_url, &s, "Endpoint", "", true);
        ok(s == NULL, "Endpoint= (empty) resets to unset");

        run(conf_parse_credential, &s, "APIKeyCredential", "openai.key", true);
        is_str(s, "openai.key", "APIKeyCredential=openai.key");
        run(conf_parse_credential, &s, "APIKeyCredential", "../key", false);
        run(conf_parse_credential, &s, "APIKeyCredential", "..", false);
        run(conf_parse_credential, &s, "APIKeyCredential", "a b", false);
        free(s);

        run(conf_parse_strv, &l, "Environment", "A=1", true);
        run(conf_parse_strv, &l, "Environment", "B=2", true);
        ok(strv_length(l) == 2 && streq(l[0], "A=1") && streq(l[1], "B=2"), "a list appends in order");
        run(conf_parse_strv, &l, "Environment", "", true);
        ok(l == NULL, "an empty assignment resets a list");
        run(conf_parse_strv, &l, "Environment", "C=3", true);
        ok(strv_length(l) == 1 && streq(l[0], "C=3"), "a list fills again after a reset");
        l = strv_free(l);

        run(conf_parse_name_list, &l, "Service", "inference  embed\tinference", true);
        ok(strv_length(l) == 2 && streq(l[0], "inference") && streq(l[1], "embed"),
           "a name list splits on blanks and drops repeats");
        {
                ConfAssignment a = assignment(9, "Sandbox", "Service", "good Bad!");
                char *err;
                int r;
                test_stderr_begin();
                r = conf_parse_name_list(&a, &l);
                err = test_stderr_end();
                ok(r < 0, "a name list with an invalid name is refused");
                like(err, PATH ":9:", "the error names file:line");
                like(err, "Bad!", "the error names the bad entry");
                free(err);
        }
        run(conf_parse_name_list, &l, "Service", "", true);
        ok(l == NULL, "an empty assignment resets a name list");
}

typedef struct Thing {
        char *name;
        uint64_t tasks;
        char **list;
} Thing;

static const ConfKey table[] = {
        { "Thing", "Name",  conf_parse_string, offsetof(Thing, name), 0 },
        { "Thing", "Tasks", conf_parse_uint,   offsetof(Thing, tasks), 0 },
        { "Thing", "List",  conf_parse_strv,   offsetof(Thing, list), CONF_REPEATABLE },
};

static int apply(ConfFileState *st, Thing *t, unsigned line, const char *section, const char *key,
                 const char *value, char **ret_err) {
        ConfAssignment a = { PATH, line, section, key, value };
        int r;

        test_stderr_begin();
        r = conf_apply(table, ELEMENTSOF(table), st, t, &a);
        *ret_err = test_stderr_end();
        return r;
}

static void test_apply(void) {
        ConfFileState st = {};
        Thing t = { .tasks = UNSET_U64 }, other = { .tasks = UNSET_U64 };
        char *err;

        ok(conf_table_has_section(table, ELEMENTSOF(table), "Thing"), "the table has [Thing]");
        ok(!conf_table_has_section(table, ELEMENTSOF(table), "Other"), "the table has no [Other]");

        is_int(apply(&st, &t, 2, "Thing", "Name", "a", &err), 0, "a known key applies");
        free(err);
        is_int(apply(&st, &t, 3, "Thing", "Tasks", "5", &err), 0, "another known key applies");
        free(err);
        ok(streq_ptr(t.name, "a") && t.tasks == 5, "the values land at their offsets");

        ok(apply(&st, &t, 6, "Thing", "Name", "b", &err) < 0, "a second Name= in the same file is refused");
        like(err, PATH ":6:", "the duplicate names its own file:line");
        like(err, "line 2", "the duplicate names the line of the first assignment");
        like(err, "Name=", "the duplicate names the key");
        free(err);
        ok(apply(&st, &t, 7, "Thing", "Name", "", &err) < 0, "an empty assignment of a set scalar is a duplicate too");
        free(err);

        is_int(apply(&st, &other, 8, "Thing", "Name", "c", &err), 0, "the same key on another object is no duplicate");
        free(err);

        is_int(apply(&st, &t, 9, "Thing", "List", "x", &err), 0, "a repeatable key applies");
        free(err);
        is_int(apply(&st, &t, 10, "Thing", "List", "y", &err), 0, "a repeatable key applies again");
        free(err);
        is_int(strv_length(t.list), 2, "a repeatable key accumulates");

        ok(apply(&st, &t, 11, "Thing", "Nope", "1", &err) < 0, "an unknown key is refused");
        like(err, PATH ":11:", "the unknown key names file:line");
        like(err, "Nope=", "the unknown key names the key");
        free(err);
        ok(apply(&st, &t, 12, "Other", "Name", "1", &err) < 0, "a known key in the wrong section is refused");
        like(err, "[Other]", "the error names the section");
        free(err);

        conf_file_state_done(&st);
        ok(st.seen == NULL && st.n_seen == 0, "conf_file_state_done() resets the state");
        free(t.name);
        free(other.name);
        strv_free(t.list);
}

int main(void) {
        test_size();
        test_timespan();
        test_uint_cpus_port_bool();
        test_strings();
        test_apply();
        return tap_done();
}
