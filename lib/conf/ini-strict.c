/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <ini.h>

#include "ini-strict.h"
#include "log.h"
#include "parse-util.h"

typedef struct IniState {
        const char *path;
        FILE *f;
        unsigned line;
        char *buf;
        size_t bufsize;
        int error;
        ini_strict_handler handler;
        void *userdata;
} IniState;

/* inih's MAX_SECTION (ini.c, not exported): it cuts a longer section name for the key lines
 * below it, while report_section() hands the handler the whole name. */
#define INIH_MAX_SECTION 50

size_t ini_strict_max_line(void) {
        /* inih hands the reader INI_MAX_LINE bytes; fgets() semantics leave room for the
         * newline and the terminating NUL. */
        return INI_MAX_LINE - 2;
}

/* inih cuts a value at " ;"; " #" it keeps, but a reader of the file takes it for a comment
 * (hand-written files have them): refuse both, so a file means one thing. */
static bool has_inline_comment(const char *s) {
        for (const char *p = s + 1; *p; p++)
                if ((*p == ';' || *p == '#') && isspace((unsigned char) p[-1]))
                        return true;
        return false;
}

static const char *line_check(const char *s, size_t len, unsigned lineno) {
        if (strlen(s) != len)
                return "contains a NUL byte";
        if (len > ini_strict_max_line())
                return "line too long for inih (split it or shorten it)";
        if (lineno == 1 && startswith(s, "\xEF\xBB\xBF"))
                return "byte-order mark at the start of the file";
        if (!utf8_is_valid(s))
                return "not valid UTF-8 (systemd would refuse the unit it became)";
        for (const char *p = s; *p; p++)
                if (((unsigned char) *p < 0x20 || *p == 0x7f) && *p != '\t' && !(*p == '\r' && p[1] == 0))
                        return "contains a control character";

        if (s[0] == '#' || s[0] == ';')
                return NULL;
        if (s[strspn(s, " \t\r")] == 0)
                return NULL;
        if (isspace((unsigned char) s[0]))
                return "indented line (continuation lines are not supported)";
        if (has_inline_comment(s))
                return "\";\" or \"#\" after whitespace reads as an inline comment (comments must start a line; in Exec= write \\x3b or \\x23)";
        if (s[0] == '[') {
                const char *e = strchr(s, ']');
                if (!e || e == s + 1)
                        return "malformed section header";
                if ((size_t) (e - s - 1) >= INIH_MAX_SECTION)
                        return "section name too long for inih";
                if (e[1 + strspn(e + 1, " \t\r")] != 0)
                        return "text after section header";
                return NULL;
        }
        size_t k = 0;
        if (!isalpha((unsigned char) s[0]))
                return "expected \"Key=Value\", a \"[Section]\" or a comment";
        while (isalnum((unsigned char) s[k]))
                k++;
        k += strspn(s + k, " \t");
        if (s[k] != '=')
                return "expected \"Key=Value\", a \"[Section]\" or a comment";
        return NULL;
}

static int report_section(IniState *st, const char *s) {
        _cleanup_free_ char *name = NULL;
        const char *e = strchr(s, ']');

        name = strndup(s + 1, (size_t) (e - s - 1));
        if (!name)
                return log_oom();
        return st->handler(st->userdata, st->path, st->line, name, NULL, NULL);
}

static char *reader(char *str, int num, void *userdata) {
        IniState *st = userdata;
        ssize_t n;
        const char *reason;

        if (st->error < 0 && st->error != -EBADMSG)
                return NULL;

        n = getline(&st->buf, &st->bufsize, st->f);
        if (n < 0)
                return NULL;
        st->line++;
        if (n > 0 && st->buf[n - 1] == '\n')
                st->buf[--n] = 0;

        reason = line_check(st->buf, (size_t) n, st->line);
        if (reason) {
                st->error = log_error_errno(EINVAL, "%s:%u: %s; refusing the file.",
                                            st->path, st->line, reason);
                return NULL;
        }
        if ((size_t) n + 2 > (size_t) num) { /* cannot happen unless inih changes its buffer */
                st->error = log_error_errno(EINVAL, "%s:%u: line too long; refusing the file.",
                                            st->path, st->line);
                return NULL;
        }
        if (st->buf[0] == '[') {
                int r = report_section(st, st->buf);
                if (r < 0)
                        st->error = -EBADMSG;
        }
        memcpy(str, st->buf, (size_t) n + 1);
        return str;
}

static int handler(void *userdata, const char *section, const char *key, const char *value) {
        IniState *st = userdata;
        int r = st->handler(st->userdata, st->path, st->line, section, key, value);

        if (r < 0)
                st->error = -EBADMSG; /* keep going: report every bad key of the file */
        return 1;
}

int ini_strict_parse(const char *path, FILE *f, ini_strict_handler h, void *userdata) {
        IniState st = { .path = path, .f = f, .handler = h, .userdata = userdata };
        int r;

        r = ini_parse_stream(reader, &st, handler, &st);
        free(st.buf);
        if (st.error < 0)
                return st.error;
        if (ferror(f))
                return log_error_errno(EIO, "%s: read error: %m", path);
        if (r > 0)
                return log_error_errno(EINVAL, "%s:%d: syntax error; refusing the file.", path, r);
        if (r < 0)
                return log_error_errno(ENOMEM, "%s: inih failed: %m", path);
        return 0;
}
