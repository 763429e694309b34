/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/header-filter.c: the headers the broker passes each way; everything else is dropped, so
 * the caller's credentials never reach an upstream and the upstream's cookies never reach the
 * sandbox (§8). */

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

int main(void) {
        test_request_allowed();
        test_request_dropped();
        test_response_allowed();
        test_response_dropped();
        return tap_done();
}
