/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: lib/ini-strict alone. Its promise (cloister.role(5), FILE SYNTAX) is that a file it accepts
 * means one thing: what inih hands the handler is exactly what a literal, line-by-line
 * reading of the file says. So every accepted input is read a second time by the obvious
 * reference reader below and the two event lists must be equal; a refused input must have
 * logged a reason; a handler error must refuse the file. */
#include <ctype.h>

#include "fuzz-util.h"
#include "ini-strict.h"
#include "parse-util.h"

typedef struct Events {
        char **v;       /* "[section" or "section\x1fkey\x1fvalue" */
        size_t n;
        bool handler_failed;
} Events;

static void events_done(Events *e) {
        for (size_t i = 0; i < e->n; i++)
                free(e->v[i]);
        free(e->v);
        *e = (Events) {};
}

static void events_add(Events *e, char *s) {
        char **t = realloc(e->v, sizeof(char *) * (e->n + 1));

        if (!s || !t)
                abort();
        e->v = t;
        e->v[e->n++] = s;
}

static int handler(void *userdata, const char *path, unsigned line, const char *section,
                   const char *key, const char *value) {
        Events *e = userdata;

        fuzz_assert(section && (key ? !!value : !value), "%s:%u", path, line);
        events_add(e, key ? strprintf("%s\x1f%s\x1f%s", section, key, value) : strprintf("[%s", section));
        /* exercise the error path: the parse must then fail */
        if (key && streq(key, "Fail")) {
                e->handler_failed = true;
                return -EINVAL;
        }
        return 0;
}

static bool is_ws(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

/* The literal reading: no continuation, no inline comment, no truncation. */
static void reference_read(const char *s, size_t size, Events *e) {
        _cleanup_free_ char *section = strdup("");
        const char *end = s + size;

        if (!section)
                abort();
        while (s < end) {
                const char *nl = memchr(s, '\n', (size_t) (end - s)) ?: end;
                const char *b = s, *t = nl;

                s = nl < end ? nl + 1 : end;
                while (t > b && is_ws(t[-1]))
                        t--;
                if (t == b || *b == '#' || *b == ';')
                        continue;
                if (*b == '[') {
                        const char *close = memchr(b, ']', (size_t) (t - b));
                        free(section);
                        section = strndup(b + 1, (size_t) (close - b - 1));
                        events_add(e, strprintf("[%s", section));
                        continue;
                }
                const char *eq = memchr(b, '=', (size_t) (t - b)), *k = eq, *v = eq + 1;
                while (k > b && is_ws(k[-1]))
                        k--;
                while (v < t && is_ws(*v))
                        v++;
                events_add(e, strprintf("%s\x1f%.*s\x1f%.*s", section, (int) (k - b), b, (int) (t - v), v));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *path = fuzz_write("fuzz.ini", data, size);
        Events got = {}, want = {};
        FILE *f;
        int r;

        if (!path)
                return 0;
        f = fopen(path, "re");
        if (!f)
                return 0;
        r = ini_strict_parse(path, f, handler, &got);
        fclose(f);
        if (got.handler_failed)
                fuzz_assert(r < 0, "a handler error must refuse the file");
        if (r >= 0) {
                _cleanup_free_ char *text = strndup((const char *) data, size);
                /* an accepted file is UTF-8 throughout: systemd would refuse a unit that a
                 * value of it ended up in, without saying where it came from */
                fuzz_assert(!text || strlen(text) != size || utf8_is_valid(text), "an accepted file is not UTF-8");
                reference_read((const char *) data, size, &want);
                for (size_t i = 0; i < got.n || i < want.n; i++)
                        fuzz_assert(i < got.n && i < want.n && streq(got.v[i], want.v[i]),
                                    "event %zu: inih read \"%s\", the file says \"%s\"", i,
                                    i < got.n ? got.v[i] : "(none)", i < want.n ? want.v[i] : "(none)");
        }
        events_done(&got);
        events_done(&want);
        return 0;
}
