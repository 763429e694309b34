/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <strings.h>

#include "header-filter.h"

typedef struct HeaderRule {
        const char *name;
        bool prefix;    /* "x-ratelimit-": the name followed by at least one token character */
} HeaderRule;

#define EXACT(n)  { .name = (n), .prefix = false }
#define PREFIX(n) { .name = (n), .prefix = true }

static const HeaderRule request_allowed[] = {
        EXACT("Content-Type"),
        EXACT("Accept"),
        EXACT("User-Agent"),
        EXACT("OpenAI-Beta"),
        EXACT("Mcp-Session-Id"),
        EXACT("Mcp-Protocol-Version"),
        EXACT("Last-Event-ID"),
        EXACT("X-Request-Id"),
};

static const HeaderRule response_allowed[] = {
        EXACT("Content-Type"),
        EXACT("Cache-Control"),
        EXACT("Mcp-Session-Id"),
        EXACT("Retry-After"),
        EXACT("X-Request-Id"),
        EXACT("OpenAI-Processing-Ms"),
        EXACT("OpenAI-Version"),
        PREFIX("X-RateLimit-"),
};

/* RFC 9110 token characters, so that a prefix rule cannot admit a name with ":" or CR/LF. */
static bool is_token(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char) *s) && !strchr("!#$%&'*+-.^_`|~", *s))
                        return false;
        return true;
}

static bool header_in(const HeaderRule *rules, size_t n, const char *name) {
        if (isempty(name))
                return false;
        for (size_t i = 0; i < n; i++) {
                size_t l = strlen(rules[i].name);

                if (rules[i].prefix ? strncasecmp(name, rules[i].name, l) == 0 && is_token(name + l)
                                    : strcasecmp(name, rules[i].name) == 0)
                        return true;
        }
        return false;
}

bool header_request_allowed(const char *name) {
        return header_in(request_allowed, ELEMENTSOF(request_allowed), name);
}

bool header_response_allowed(const char *name) {
        return header_in(response_allowed, ELEMENTSOF(response_allowed), name);
}

bool header_name_valid(const char *name) {
        return name && is_token(name);
}

/* RFC 9110, section 5.5: field-value = *( VCHAR / obs-text / SP / HTAB ). Everything else, CR, LF,
 * NUL and the other controls, is what splits one header into two on the next hop. */
bool header_value_valid(const char *value, size_t n) {
        if (!value)
                return false;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) value[i];
                if ((c < 0x20 && c != '\t') || c == 0x7f)
                        return false;
        }
        return true;
}

bool header_response_line_valid(const char *line, size_t n) {
        /* an obsolete folded line (RFC 9112, section 5.2) continues the header before it */
        return header_value_valid(line, n) && (n == 0 || (line[0] != ' ' && line[0] != '\t'));
}
