/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/conf/ini-strict.c: every line that inih (Debian 12: r55, INI_MAX_LINE 200, inline ";"
 * comments, multi-line continuations) would not read literally refuses the whole file, with
 * file:line. A file is never half-read. */

#include <ini.h>

#include "ini-strict.h"
#include "tap.h"
#include "test-util.h"

static char *tmpdir;

typedef struct Events {
        char *log;        /* "line|section|key|value\n" per event; key "-" for a section */
        unsigned n_keys, n_sections;
        int fail_key_line; /* the handler refuses the key of this line */
} Events;

static int record(void *userdata, const char *path, unsigned line, const char *section,
                  const char *key, const char *value) {
        Events *e = userdata;
        char *add = strprintf("%s%u|%s|%s|%s\n", e->log ?: "", line, section, key ?: "-", value ?: "-");

        if (!add)
                return -ENOMEM;
        free(e->log);
        e->log = add;
        if (key)
                e->n_keys++;
        else
                e->n_sections++;
        if (key && line == (unsigned) e->fail_key_line) {
                fprintf(stderr, "%s:%u: handler refuses %s=\n", path, line, key);
                return -EINVAL;
        }
        return 0;
}

typedef struct Result {
        int r;
        Events ev;
        char *err;
        char *path;
} Result;

static void result_done(Result *res) {
        free(res->ev.log);
        free(res->err);
        free(res->path);
}

/* Writes `content` as a file and parses it; returns what happened. */
static Result parse_text(const char *name, const char *content, int fail_key_line) {
        Result res = { .ev.fail_key_line = fail_key_line };
        FILE *f;

        res.path = test_write_file(tmpdir, name, content);
        f = fopen(res.path, "re");
        if (!f)
                tap_bail_out("cannot reopen the test file");
        test_stderr_begin();
        res.r = ini_strict_parse(res.path, f, record, &res.ev);
        res.err = test_stderr_end();
        fclose(f);
        return res;
}

static char *repeat(char c, size_t n) {
        char *s = malloc(n + 1);

        if (!s)
                tap_bail_out("out of memory");
        memset(s, c, n);
        s[n] = 0;
        return s;
}

/* Parses a file whose only bad line is `line` (line 2) and checks the refusal. */
static void check_refused_line(const char *what, const char *line, const char *reason_part) {
        char *content = strprintf("[Role]\n%s\nDescription=after\n", line);
        char *where;
        Result res;

        if (!content)
                tap_bail_out("out of memory");
        res = parse_text("refused.role", content, 0);
        where = strprintf("%s:2:", res.path);
        ok(res.r < 0, "%s: the file is refused", what);
        like(res.err, where, "%s: the error names file:line", what);
        if (reason_part)
                like(res.err, reason_part, "%s: the error says why", what);
        unlike(res.ev.log, "|after\n", "%s: nothing after the bad line is delivered", what);
        free(where);
        free(content);
        result_done(&res);
}

static void test_utf8_accepted(void) {
        Result res = parse_text("utf8.role", "[Role]\n# caf\xc3\xa9\nDescription=na\xc3\xafve \xe2\x9c\x93 \xf0\x9f\x98\x80\n", 0);

        is_int(res.r, 0, "well-formed UTF-8 (2, 3 and 4 bytes) is accepted");
        like(res.ev.log, "3|Role|Description|na\xc3\xafve \xe2\x9c\x93 \xf0\x9f\x98\x80\n", "...and delivered unchanged");
        result_done(&res);
}

static void test_accepted(void) {
        Result res = parse_text("good.role",
                         "# a comment\n"
                         "; another comment\n"
                         "\n"
                         "[Role]\n"
                         "Description=Reviews patches; carefully#1 not a comment\n"
                         "   \n"
                         "Exec=/bin/sh -c \"a;b\"\n"
                         "Key = spaced\n"
                         "Empty=\n"
                         "#Commented=out\n"
                         "[Sandbox]\n"
                         "Memory=1G\n"
                         "Windows=crlf\r\n"
                         "NoNewline=last",
                         0);
        is_int(res.r, 0, "a well-formed file is accepted");
        is_str(res.err, "", "a well-formed file logs nothing");
        is_int(res.ev.n_sections, 2, "both section headers are delivered");
        is_int(res.ev.n_keys, 7, "every assignment is delivered, comments are not");
        like(res.ev.log, "4|Role|-|-\n", "a section header is delivered with key == NULL and its line");
        like(res.ev.log, "11|Sandbox|-|-\n", "the second section header is delivered");
        like(res.ev.log, "5|Role|Description|Reviews patches; carefully#1 not a comment\n",
             "';' and '#' inside a value without whitespace before them are kept literally");
        like(res.ev.log, "7|Role|Exec|/bin/sh -c \"a;b\"\n", "\"a;b\" is kept literally");
        like(res.ev.log, "8|Role|Key|spaced\n", "blanks around '=' are allowed");
        like(res.ev.log, "9|Role|Empty|\n", "an empty assignment is delivered with an empty value");
        like(res.ev.log, "12|Sandbox|Memory|1G\n", "keys carry the section they are in");
        like(res.ev.log, "13|Sandbox|Windows|crlf\n", "a CR before the newline is accepted and stripped");
        like(res.ev.log, "14|Sandbox|NoNewline|last\n", "a last line without a newline is read");
        unlike(res.ev.log, "Commented", "a '#' line is a comment");
        result_done(&res);

        res = parse_text("empty.role", "", 0);
        ok(res.r == 0 && res.ev.n_keys == 0 && res.ev.n_sections == 0, "an empty file is accepted");
        result_done(&res);
}

static void test_line_length(void) {
        size_t max = ini_strict_max_line();
        char *pad, *content, *where;
        Result res;

        is_int(max, INI_MAX_LINE - 2, "ini_strict_max_line() leaves room for the newline and NUL in inih's buffer");

        /* Exactly the limit: accepted, and read in one piece. */
        pad = repeat('x', max - strlen("Description="));
        content = strprintf("[Role]\nDescription=%s\nExec=/bin/true\n", pad);
        res = parse_text("max.role", content, 0);
        is_int(res.r, 0, "a line of exactly ini_strict_max_line() characters is accepted");
        is_int(res.ev.n_keys, 2, "...and read as one key");
        result_done(&res);
        free(content);

        /* The same with "\r\n": the CR counts, as inih's buffer holds it. */
        content = strprintf("[Role]\r\nDescription=%s\r\n", pad);
        res = parse_text("max-crlf.role", content, 0);
        ok(res.r < 0, "a CRLF line whose CR makes it one byte too long is refused");
        result_done(&res);
        free(content);
        free(pad);

        /* One more: refused. */
        pad = repeat('x', max + 1 - strlen("Description="));
        content = strprintf("[Role]\nDescription=%s\nExec=/bin/true\n", pad);
        res = parse_text("long.role", content, 0);
        where = strprintf("%s:2:", res.path);
        ok(res.r < 0, "a line of ini_strict_max_line() + 1 characters is refused");
        like(res.err, where, "the error names file:line");
        like(res.err, "too long", "the error says the line is too long");
        is_int(res.ev.n_keys, 0, "no key of the file is delivered");
        result_done(&res);
        free(content);
        free(where);
        free(pad);

        /* The real trap: inih cuts a long line at INI_MAX_LINE - 1 bytes and reads the rest
         * as a new line, so a long Description= could smuggle in a second key. */
        pad = repeat('x', INI_MAX_LINE - 1 - strlen("Description="));
        content = strprintf("[Role]\nDescription=%sPrivateNetwork=no\n", pad);
        res = parse_text("trap.role", content, 0);
        where = strprintf("%s:2:", res.path);
        ok(res.r < 0, "a %zu-character Description= followed by \"PrivateNetwork=no\" is refused",
           strlen(content) - strlen("[Role]\n") - 1);
        like(res.err, where, "the trap line is named with file:line");
        unlike(res.ev.log, "PrivateNetwork", "PrivateNetwork= never reaches the handler");
        unlike(res.ev.log, "Description", "the cut Description= never reaches the handler");
        result_done(&res);
        free(where);
        free(content);

        /* The same trap further down: the keys before the long line must not count. */
        content = strprintf("[Role]\nExec=/bin/true\nDescription=%sNetwork=host\n", pad);
        res = parse_text("trap2.role", content, 0);
        ok(res.r < 0, "a long line after valid ones refuses the whole file");
        unlike(res.ev.log, "Network", "the tail of the cut line is not delivered as Network=");
        result_done(&res);
        free(content);
        free(pad);
}

/* Whatever its length, a line is read whole or the file is refused: sweep the lengths around
 * the limit with a tail that would be a key of its own if inih cut the line. */
static void test_line_length_sweep(void) {
        size_t max = ini_strict_max_line();

        for (size_t len = max - 20; len <= 2 * INI_MAX_LINE + 20; len++) {
                size_t pad_len = len - strlen("Description=") - strlen("PrivateNetwork=no");
                char *pad = repeat('x', pad_len);
                char *content = strprintf("[Role]\nDescription=%sPrivateNetwork=no\nExec=/bin/true\n", pad);
                char *want = strprintf("2|Role|Description|%sPrivateNetwork=no\n", pad);
                Result res = parse_text("sweep.role", content, 0);
                bool whole = res.r == 0 && res.ev.n_keys == 2 && res.ev.log && strstr(res.ev.log, want);
                bool refused = res.r < 0 && res.ev.n_keys == 0;

                ok(len <= max ? whole : refused, "a %zu-character line is %s", len,
                   len <= max ? "read whole" : "refused with nothing delivered");
                result_done(&res);
                free(want);
                free(content);
                free(pad);
        }
}

static int count_keys(void *userdata, const char *section, const char *name, const char *value) {
        char **log = userdata;
        char *add = strprintf("%s%s=%s\n", *log ?: "", name, value);

        free(*log);
        *log = add;
        return 1;
}

/* Documents why ini-strict exists: plain inih never reads a line past INI_MAX_LINE intact.
 * Up to r57 (Debian 12: r55) it reads the tail as a second key; from r58 on (Debian 13) it
 * drops the tail. Either way the first key's value is cut short without a word, so the strict
 * reader refuses such a line (test_line_length() proves it does, whichever inih). If
 * this fails, inih reads long lines whole now and ini_strict_max_line() needs a look. */
static void test_inih_trap_is_real(void) {
        char *pad = repeat('x', INI_MAX_LINE - 1 - strlen("Description="));
        char *content = strprintf("[Role]\nDescription=%sPrivateNetwork=no\n", pad);
        char *whole = strprintf("Description=%sPrivateNetwork=no\n", pad);
        char *path = test_write_file(tmpdir, "trap-plain.role", content);
        char *log = NULL;
        bool split, dropped;

        ini_parse(path, count_keys, &log);
        split = log && strstr(log, "\nPrivateNetwork=no\n");
        dropped = log && !strstr(log, "PrivateNetwork=no") && strncmp(log, "Description=xxx", 15) == 0;
        diag("plain inih %s the tail of the long line", split ? "splits off" : dropped ? "drops" : "does something else with");
        ok(log && !strstr(log, whole), "plain inih does not read a line past INI_MAX_LINE whole");
        ok(split || dropped, "plain inih reads the tail as a second key (r55) or drops it (r58+)");
        free(whole);
        free(log);
        free(path);
        free(content);
        free(pad);
}

static void test_refused(void) {
        check_refused_line("whitespace then ';' (inline comment)", "Exec=sh -c \"a ; b\"", "inline comment");
        check_refused_line("tab then ';'", "Exec=/bin/echo a\t;b", "inline comment");
        check_refused_line("' ;' at the end", "Description=x ;", "inline comment");
        check_refused_line("whitespace then '#' (reads as a comment; hand-written files have them)",
                           "Exec=/usr/bin/python3 /opt/review.py   # required", "inline comment");
        check_refused_line("tab then '#'", "Network=none\t# the default", "inline comment");
        check_refused_line("an indented continuation line", "  continued", "indented");
        check_refused_line("a tab-indented key", "\tExec=/bin/true", "indented");
        check_refused_line("an indented comment", "  # comment", NULL);
        check_refused_line("a control character", "Description=a\x01" "b", "control character");
        check_refused_line("an escape character", "Description=\x1b[31mred", "control character");
        check_refused_line("a DEL character", "Description=a\x7f" "b", "control character");
        check_refused_line("a CR inside the line", "Description=a\rb", "control character");
        check_refused_line("a Latin-1 byte in Exec=", "Exec=/bin/echo caf\xe9", "not valid UTF-8");
        check_refused_line("a stray continuation byte in Environment=", "Environment=A=\x80", "not valid UTF-8");
        check_refused_line("a truncated sequence", "Description=\xc3", "not valid UTF-8");
        check_refused_line("an overlong slash", "Exec=/bin/cat \xc0\xaf" "etc/passwd", "not valid UTF-8");
        check_refused_line("a UTF-16 surrogate", "Description=\xed\xa0\x80", "not valid UTF-8");
        check_refused_line("a code point above U+10FFFF", "Description=\xf4\x90\x80\x80", "not valid UTF-8");
        check_refused_line("a non-UTF-8 byte in a comment", "# caf\xe9", "not valid UTF-8");
        check_refused_line("\"Key:Value\" syntax", "Description:colon", NULL);
        check_refused_line("\"Key : Value\" syntax", "Description : colon", NULL);
        check_refused_line("a line that is no assignment", "just words", NULL);
        check_refused_line("a key starting with a digit", "1Key=x", NULL);
        check_refused_line("an empty key", "=value", NULL);
        check_refused_line("an unterminated section header", "[Sandbox", "section");
        check_refused_line("an empty section header", "[]", "section");
        check_refused_line("text after a section header", "[Sandbox] x", "section");
        check_refused_line("an inline comment after a section header", "[Sandbox] ;c", NULL);
        /* found by tests/fuzz/fuzz-ini-strict: inih cuts section names at 49 bytes */
        check_refused_line("a 50-byte section name", "[Sandboxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx]", "section name too long");

        /* A NUL byte cannot be written with the string helper. */
        {
                static const char content[] = "[Role]\nDescription=a\0b\nExec=/bin/true\n";
                char *path = test_path(tmpdir, "nul.role"), *where = strprintf("%s:2:", path);
                FILE *f = fopen(path, "we");
                Events ev = {};
                char *err;
                int r;

                fwrite(content, 1, sizeof content - 1, f);
                fclose(f);
                f = fopen(path, "re");
                test_stderr_begin();
                r = ini_strict_parse(path, f, record, &ev);
                err = test_stderr_end();
                fclose(f);
                ok(r < 0, "a NUL byte refuses the file");
                like(err, where, "the NUL byte is named with file:line");
                free(err);
                free(ev.log);
                free(where);
                free(path);
        }
}

static void test_bom(void) {
        Result res = parse_text("bom.role", "\xEF\xBB\xBF[Role]\nExec=/bin/true\n", 0);
        char *where = strprintf("%s:1:", res.path);

        ok(res.r < 0, "a byte-order mark refuses the file");
        like(res.err, where, "the byte-order mark is named with file:1");
        like(res.err, "byte-order mark", "the error says it is a byte-order mark");
        is_int(res.ev.n_keys, 0, "nothing is delivered from a file with a byte-order mark");
        free(where);
        result_done(&res);
}

static void test_handler_errors(void) {
        Result res = parse_text("handler.role",
                                "[Role]\n"
                                "Good=1\n"
                                "Bad=2\n"
                                "Later=3\n",
                                3);

        ok(res.r < 0, "a key refused by the handler refuses the file");
        like(res.err, ":3: handler refuses Bad=", "the handler's own message is kept");
        like(res.ev.log, "4|Role|Later|3\n", "later keys are still delivered, to report every bad key at once");
        result_done(&res);
}

static int refuse_section(void *userdata, const char *path, unsigned line, const char *section,
                          const char *key, const char *value) {
        unsigned *n = userdata;

        if (key)
                (*n)++;
        if (!key && streq(section, "Bad"))
                return -EINVAL;
        return 0;
}

static void test_section_refused(void) {
        char *path = test_write_file(tmpdir, "section.role", "[Bad]\nKey=1\n[Role]\nKey=2\n");
        FILE *f = fopen(path, "re");
        unsigned n = 0;
        char *err;
        int r;

        test_stderr_begin();
        r = ini_strict_parse(path, f, refuse_section, &n);
        err = test_stderr_end();
        fclose(f);
        ok(r < 0, "a section refused by the handler refuses the file");
        free(err);
        free(path);
}

int main(void) {
        tmpdir = test_tmpdir_new();

        test_accepted();
        test_utf8_accepted();
        test_line_length();
        test_line_length_sweep();
        test_inih_trap_is_real();
        test_refused();
        test_bom();
        test_handler_errors();
        test_section_refused();

        test_tmpdir_remove(tmpdir);
        return tap_done();
}
