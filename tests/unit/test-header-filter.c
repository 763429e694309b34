/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/broker/policy/header-filter.c: the headers the broker passes each way; everything else is dropped, so
 * the caller's credentials never reach an upstream and the upstream's cookies never reach the
 * sandbox (cloister-broker(8)). */

#include "header-filter.h"
#include "tap.h"

static void test_request_allowed(void) {
        static const char *const names[] = {
                "Content-Type", "content-type", "CONTENT-TYPE", "Accept", "User-Agent", "OpenAI-Beta",
                "openai-beta", "Mcp-Session-Id", "mcp-session-id", "Mcp-Protocol-Version",
                "Last-Event-ID", "last-event-id", "X-Request-Id", "x-request-id",
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                ok(header_request_allowed(names[i]), "request header %s passes to the upstream", names[i]);
}

static void test_request_dropped(void) {
        static const char *const names[] = {
                "Authorization", "authorization", "AUTHORIZATION", "Proxy-Authorization", "Cookie",
                "Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "TE",
                "Trailer", "Upgrade", "Proxy-Connection", "Proxy-Anything", "X-Forwarded-For",
                "X-Forwarded-Host", "Forwarded", "Accept-Encoding", "OpenAI-Organization",
                "OpenAI-Project", "Api-Key", "X-Api-Key", "Expect", "Content-Encoding", "Range",
                "Content-Type2", "Content-Typ", "Accept ", " Accept", "Accept:", "X-Request-Id\r\nHost",
                "", "X-RateLimit-Limit-Requests",
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                ok(!header_request_allowed(names[i]), "request header \"%s\" is dropped", names[i]);
        ok(!header_request_allowed(NULL), "a NULL request header name is dropped");
}

static void test_response_allowed(void) {
        static const char *const names[] = {
                "Content-Type", "content-type", "Cache-Control", "Mcp-Session-Id", "Retry-After",
                "retry-after", "X-Request-Id", "OpenAI-Processing-Ms", "openai-processing-ms",
                "openai-version", "OpenAI-Version", "x-ratelimit-limit-requests",
                "X-RateLimit-Remaining-Tokens", "x-ratelimit-reset-requests",
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                ok(header_response_allowed(names[i]), "response header %s passes to the caller", names[i]);
}

static void test_response_dropped(void) {
        static const char *const names[] = {
                "Set-Cookie", "set-cookie", "Set-Cookie2", "Content-Length", "Transfer-Encoding",
                "Connection", "Keep-Alive", "Content-Encoding", "Upgrade", "Trailer", "TE",
                "Proxy-Authenticate", "WWW-Authenticate", "Authorization", "Location", "Server",
                "Strict-Transport-Security", "Alt-Svc", "openai-organization", "X-RateLimit-",
                "x-ratelimit-", "x-ratelimit-a:b", "x-ratelimit-a b", "x-ratelimit-a\r\nSet-Cookie",
                "x-ratelimi", "", "Content-Type ",
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                ok(!header_response_allowed(names[i]), "response header \"%s\" is dropped", names[i]);
        ok(!header_response_allowed(NULL), "a NULL response header name is dropped");
}

static void test_value_refused(void) {
        /* each is one class: CR, LF, NUL, the other C0 controls, DEL */
        static const struct { const char *v; size_t n; } values[] = {
                { "a\rX-Inj: 1", 11 }, { "a\nX-Inj: 1", 11 }, { "a\r\nX-Inj: 1", 12 }, { "a\0b", 3 },
                { "\r", 1 }, { "a\x0b", 2 }, { "a\x0c", 2 }, { "a\x1b[2J", 5 }, { "a\x7f", 2 },
                { "a\x01", 2 }, { "a\x1f", 2 }, { "chunked\r", 8 },
        };

        for (size_t i = 0; i < ELEMENTSOF(values); i++)
                ok(!header_value_valid(values[i].v, values[i].n), "header value #%zu with a control is refused", i);
        ok(!header_value_valid(NULL, 0), "a NULL header value is refused");
}

static void test_value_passes(void) {
        static const char *const values[] = {
                "", "application/json", "a\tb", " leading and trailing ", "caf\xc3\xa9", "\x80\xff",
                "Mozilla/5.0 (X11; Linux x86_64)", "!#$%&'*+-.^_`|~\"(),/:;<=>?@[\\]{}",
        };

        for (size_t i = 0; i < ELEMENTSOF(values); i++)
                ok(header_value_valid(values[i], strlen(values[i])), "header value \"%s\" passes", values[i]);
}

static void test_name_valid(void) {
        ok(header_name_valid("User-Agent"), "User-Agent is a token");
        ok(!header_name_valid("User Agent"), "a name with a space is not");
        ok(!header_name_valid("X\rY"), "a name with CR is not");
        ok(!header_name_valid(""), "an empty name is not");
        ok(!header_name_valid(NULL), "NULL is not");
}

int main(void) {
        test_value_refused();
        test_value_passes();
        test_name_valid();
        test_request_allowed();
        test_request_dropped();
        test_response_allowed();
        test_response_dropped();
        return tap_done();
}
