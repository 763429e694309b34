/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/basic/cmdline.c: Exec= is split as systemd splits ExecStart=, and every word is quoted back into
 * the generated unit so that systemd reads exactly that word. */

#include "cmdline.h"
#include "tap.h"

/* Splits `line` and compares with the NULL-terminated `expected`. */
static void check_split(const char *line, const char *const *expected) {
        char **argv = NULL;
        const char *reason = NULL;
        int r = cmdline_split(line, &argv, &reason);
        size_t n = 0;
        bool same;

        if (!is_int(r, 0, "cmdline_split(%s) succeeds", line)) {
                diag("  reason: %s", reason ?: "(none)");
                return;
        }
        while (expected[n])
                n++;
        same = strv_length(argv) == n;
        for (size_t i = 0; same && i < n; i++)
                same = streq(argv[i], expected[i]);
        ok(same, "cmdline_split(%s) gives %zu expected words", line, n);
        if (!same)
                STRV_FOREACH(a, argv)
                        diag("  got word: \"%s\"", *a);
        strv_free(argv);
}

#define SPLIT(line, ...) check_split(line, (const char *const[]) { __VA_ARGS__, NULL })

static void check_refused(const char *line, const char *reason_part) {
        char **argv = NULL;
        const char *reason = NULL;

        is_int(cmdline_split(line, &argv, &reason), -EINVAL, "cmdline_split(%s) is refused", line);
        like(reason, reason_part, "cmdline_split(%s) says why: %s", line, reason_part);
        ok(argv == NULL, "cmdline_split(%s) leaves no result behind", line);
        strv_free(argv);
}

static void test_split(void) {
        SPLIT("/usr/bin/python3 /opt/agents/review.py --strict",
              "/usr/bin/python3", "/opt/agents/review.py", "--strict");
        SPLIT("  /bin/true\t\t-x  ", "/bin/true", "-x");
        SPLIT("/bin/sh -c \"echo a b\"", "/bin/sh", "-c", "echo a b");
        SPLIT("/bin/sh -c 'echo a b'", "/bin/sh", "-c", "echo a b");
        SPLIT("/bin/echo \"it's\" 'say \"hi\"'", "/bin/echo", "it's", "say \"hi\"");
        SPLIT("/bin/echo a\"b c\"d", "/bin/echo", "ab cd");
        SPLIT("/bin/echo \"\"", "/bin/echo", "");
        SPLIT("/bin/echo \"a \\\" b\"", "/bin/echo", "a \" b");
        SPLIT("/bin/echo \\\\ \\\" \\'", "/bin/echo", "\\", "\"", "'");
        SPLIT("/bin/echo a\\sb a\\tb a\\nb a\\rb", "/bin/echo", "a b", "a\tb", "a\nb", "a\rb");
        SPLIT("/bin/echo \\x41\\x7e", "/bin/echo", "A~");
        /* Nothing is expanded: $VAR and % specifiers stay literal. */
        SPLIT("/bin/echo $HOME %i ${X}", "/bin/echo", "$HOME", "%i", "${X}");
        SPLIT("/bin/sh -c \"a;b\"", "/bin/sh", "-c", "a;b");

        {
                char **argv = NULL;
                const char *reason = NULL;
                ok(cmdline_split("   ", &argv, &reason) == 0 && argv && !argv[0],
                   "cmdline_split() of blanks gives an empty list");
                strv_free(argv);
        }
}

static void test_split_errors(void) {
        check_refused("/bin/echo \"abc", "unterminated quote");
        check_refused("/bin/echo 'abc", "unterminated quote");
        check_refused("/bin/echo \"a'", "unterminated quote");
        check_refused("/bin/echo abc\\", "trailing backslash");
        check_refused("/bin/echo \\q", "escape");
        check_refused("/bin/echo \\x4", "escape");
        check_refused("/bin/echo \\xzz", "escape");
        check_refused("/bin/echo \\x00", "escape");
}

static void check_quote(const char *word, const char *expected) {
        char *q = unit_exec_quote(word);

        is_str(q, expected, "unit_exec_quote(\"%s\")", word);
        free(q);
}

static void test_quote(void) {
        check_quote("plain", "\"plain\"");
        check_quote("", "\"\"");
        check_quote("100%", "\"100%%\"");
        check_quote("%i", "\"%%i\"");
        check_quote("$HOME", "\"$$HOME\"");
        check_quote("${X}", "\"$${X}\"");
        check_quote("say \"hi\"", "\"say \\\"hi\\\"\"");
        check_quote("a\\b", "\"a\\\\b\"");
        check_quote("a\nb\tc", "\"a\\nb\\tc\"");
        check_quote("\x01\x7f", "\"\\x01\\x7f\"");
        check_quote("it's", "\"it's\"");
}

/* What systemd does after splitting an Exec*= word: "%%" → "%" (specifiers) and "$$" → "$"
 * (variables). cmdline_split() leaves both literal, so the test plays systemd's part. */
static char *systemd_unescape(const char *s) {
        char *r = malloc(strlen(s) + 1), *t = r;

        if (!r)
                return NULL;
        for (; *s; s++) {
                *t++ = *s;
                if ((*s == '%' || *s == '$') && s[1] == *s)
                        s++;
        }
        *t = 0;
        return r;
}

static void test_round_trip(void) {
        static const char *const words[] = {
                "plain", "", "with space", "tab\there", "new\nline", "cr\rhere", "quote\"d",
                "single'd", "back\\slash", "trailing\\", "100%", "%i%n", "$HOME", "$$", "${X}",
                "\x01\x1f\x7f", "\xc3\xbc" "n\xc3\xaf" "code", "a;b", " lead", "trail ", "--setenv=A=b c",
        };
        char *line = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&line, &len);
        char **argv = NULL;
        const char *reason = NULL;

        /* Each word alone. */
        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                char *q = unit_exec_quote(words[i]), *back = NULL;
                char **a = NULL;
                int r = q ? cmdline_split(q, &a, &reason) : -ENOMEM;

                if (r == 0 && strv_length(a) == 1)
                        back = systemd_unescape(a[0]);
                ok(back && streq(back, words[i]), "unit_exec_quote() of word %zu round-trips through cmdline_split()", i);
                if (!(back && streq(back, words[i])))
                        diag("  quoted: %s", q ?: "(null)");
                fprintf(f, "%s%s", i ? " " : "", q ?: "");
                free(back);
                free(q);
                strv_free(a);
        }

        /* All of them on one command line. */
        fclose(f);
        if (is_int(cmdline_split(line, &argv, &reason), 0, "a line of quoted words splits")) {
                bool same = strv_length(argv) == ELEMENTSOF(words);
                for (size_t i = 0; same && i < ELEMENTSOF(words); i++) {
                        char *back = systemd_unescape(argv[i]);
                        same = back && streq(back, words[i]);
                        free(back);
                }
                ok(same, "a line of quoted words splits back into the same %zu words", ELEMENTSOF(words));
        }
        strv_free(argv);
        free(line);
}

static void test_specifier_escape(void) {
        char *s = unit_specifier_escape("100% of %i");

        is_str(s, "100%% of %%i", "unit_specifier_escape() doubles every %%");
        free(s);
        s = unit_specifier_escape("");
        is_str(s, "", "unit_specifier_escape(\"\")");
        free(s);
        s = unit_specifier_escape("ends in \\");
        is_str(s, "ends in \\\\", "unit_specifier_escape(): a trailing backslash is doubled (no continuation)");
        ok(!unit_value_continues(s), "...and the value no longer continues onto the next line");
        free(s);
        s = unit_specifier_escape("two \\\\");
        is_str(s, "two \\\\", "unit_specifier_escape(): an even run is left alone");
        free(s);
        ok(unit_value_continues("a\\"), "unit_value_continues(\"a\\\\\")");
        ok(!unit_value_continues("a\\\\"), "unit_value_continues(\"a\\\\\\\\\") is false");
        ok(!unit_value_continues(""), "unit_value_continues(\"\") is false");
}

int main(void) {
        test_split();
        test_split_errors();
        test_quote();
        test_round_trip();
        test_specifier_escape();
        return tap_done();
}
