/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One broker request: identity, route, policy, the upstream call, and the streamed answer. */
#include <strings.h>
#include <time.h>

#include "audit.h"
#include "broker-route.h"
#include "caller.h"
#include "header-filter.h"
#include "log.h"
#include "mcp-policy.h"
#include "openai-body.h"
#include "peer.h"
#include "request.h"
#include "sse-filter.h"
#include "usage-scan.h"

/* A body announced by Content-Length gets its buffer at once, up to this size: reading it
 * in 32 KiB pieces into a doubling buffer copied it twice and faulted in fresh pages. */
#define BODY_PREALLOC_MAX (256 * 1024)
/* Upstream bytes held for a slow caller before curl is paused. */
#define OUT_HIGH_WATER (256 * 1024)
/* An MCP answer that is not a stream is filtered whole, so held whole: up to this size. */
#define MCP_JSON_MAX (4 * 1024 * 1024)
/* A plain answer (no stream) whose Content-Length says it is at most this size is held until
 * it is whole and leaves in one write with its headers: not as a header write, a chunk and an
 * end chunk, each waking the caller. One of unknown length may be a stream of another kind
 * (NDJSON, heartbeats of a long poll): it passes as it comes. */
#define PLAIN_HOLD_MAX (64 * 1024)

typedef struct Request {
        RequestContext *context;
        BrokerConfig *config;   /* the one current when the request began, kept across reloads */
        struct MHD_Connection *conn;
        Peer *peer;             /* the connection's, settled at accept (server.c) */
        const Role *role;
        RateLimit *limit;
        BrokerRoute route;
        int route_error;        /* from broker_route_parse(): -ENOENT 404, -EINVAL 400 */
        char *method, *path;
        uint64_t start;

        char *body;
        size_t body_n, body_allocated;
        uint64_t max_body;
        size_t body_hint;       /* Content-Length, if any, up to BODY_PREALLOC_MAX */
        bool body_done, responded, too_large;

        /* upstream */
        CURL *easy;
        struct curl_slist *headers;
        const char *upstream_name;
        OpenAIRequest oa;
        char *send_body;
        size_t send_n;
        long status;
        struct curl_slist *resp_headers;  /* "Name: value", allowed ones only */
        bool headers_done, upstream_done, paused, suspended, is_sse, started, client_gone;
        bool plain_streams;               /* a plain answer too large to hold: streamed */
        uint64_t upstream_length;         /* the answer's Content-Length, UNSET_U64 if none */
        char **mcp_allowed;               /* MCP: the tools this role may see and call */
        bool bad_upstream_header;         /* a header line that is not RFC 9110: no answer passes */
        CURLcode result;
        SseFilter *sse;
        UsageScan *usage_scan;            /* a JSON answer's usage, read as it passes */

        /* answer bytes not yet taken by MHD */
        char *out;
        size_t out_n, out_off;

        TokenUsage usage;
        uint64_t bytes_in, bytes_out;
        uint64_t held;                    /* body and answer bytes counted against the caller */
        bool caller_over;                 /* the body came while the caller held too much */
        unsigned status_sent;
        const char *error;
} Request;

static uint64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
}

/* Counts what this request holds (its body, answer bytes not yet taken) for its caller. */
static void account(Request *q) {
        uint64_t held = q->body_n + (q->out_n - q->out_off);

        if (q->peer && q->peer->caller)
                q->peer->caller->bytes = q->peer->caller->bytes - q->held + held;
        q->held = held;
}

static bool caller_over(const Request *q) {
        return q->peer && caller_over_bytes(q->peer->caller, q->config->conf->broker_caller_bytes);
}

static void cancel_upstream(Request *q) {
        if (!q->easy)
                return;
        curl_glue_remove(q->context->curl, q->easy); /* closes the upstream connection */
        /* not back to the pool: a transfer cut off (paused, say) may leave state in it that
         * curl_easy_reset() does not clear in every curl version */
        curl_easy_cleanup(q->easy);
        q->easy = NULL;
        q->upstream_done = true;
        q->result = CURLE_ABORTED_BY_CALLBACK;
}

static void request_free(Request *q) {
        if (q->peer && q->peer->caller)
                q->peer->caller->bytes -= q->held;
        if (q->peer && q->peer->waiting == q)
                q->peer->waiting = NULL;
        cancel_upstream(q); /* still running: the caller went away */
        curl_slist_free_all(q->headers);
        curl_slist_free_all(q->resp_headers);
        strv_free(q->mcp_allowed);
        broker_route_done(&q->route);
        openai_request_done(&q->oa);
        sse_filter_free(q->sse);
        free(q->method);
        free(q->path);
        free(q->body);
        free(q->send_body);
        usage_scan_free(q->usage_scan);
        free(q->out);
        broker_config_unref(q->config);
        free(q);
}

/* ---- answers the broker gives itself ------------------------------------------------- */

static const char *error_type(unsigned status) {
        switch (status) {
        case 400: return "invalid_request_error";
        case 403: return "permission_error";
        case 404: return "not_found_error";
        case 413: return "request_too_large";
        case 405: return "invalid_request_error";
        case 429: return "rate_limit_error";
        case 504: return "timeout_error";
        default:  return "api_error";
        }
}

static enum MHD_Result respond_json(Request *q, unsigned status, const char *json, unsigned retry_after) {
        struct MHD_Response *resp;
        enum MHD_Result ret;

        resp = MHD_create_response_from_buffer(strlen(json), (void *) json, MHD_RESPMEM_MUST_COPY);
        if (!resp)
                return MHD_NO;
        MHD_add_response_header(resp, "Content-Type", "application/json");
        if (retry_after > 0) {
                char v[16];
                snprintf(v, sizeof v, "%u", retry_after);
                MHD_add_response_header(resp, "Retry-After", v);
        }
        ret = MHD_queue_response(q->conn, status, resp);
        MHD_destroy_response(resp);
        if (ret == MHD_YES) {
                q->responded = true;
                q->status_sent = status;
                q->bytes_out += strlen(json);
        }
        return ret;
}

/* OpenAI-style error (cloister-broker(8)): {"error":{"message","type","code"}}. */
static enum MHD_Result respond_error(Request *q, unsigned status, const char *code, const char *message,
                                     unsigned retry_after) {
        _cleanup_free_ char *json = NULL;

        /* message and code are the broker's own fixed strings: no escaping needed */
        json = strprintf("{\"error\":{\"message\":\"%s\",\"type\":\"%s\",\"code\":\"%s\"}}\n",
                         message, error_type(status), code);
        q->error = code;
        return json ? respond_json(q, status, json, retry_after) : MHD_NO;
}

/* ---- policy --------------------------------------------------------------------------- */

static const Upstream *named_upstream(Request *q, const char *kind) {
        const Upstream *u = cloister_conf_find_upstream(q->config->conf, q->route.name);
        if (!u || !streq_ptr(u->kind, kind) || !strv_contains(q->role->broker_allow, q->route.name))
                return NULL;
        return u;
}

static enum MHD_Result check_header(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_n,
                                    const char *value, size_t value_n) {
        bool *bad = cls;

        if (strlen(key) != key_n || !header_name_valid(key) || !header_value_valid(value, value_n)) {
                *bad = true;
                return MHD_NO;
        }
        return MHD_YES;
}

/* Checks made before any byte of the body is read. Returns MHD_YES to go on reading, or
 * the result of queuing the refusal. *done is set when an answer was queued. */
static enum MHD_Result admit(Request *q, bool *done) {
        const char *cl = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, "Content-Length");
        unsigned retry = 0;
        bool bad_header = false;
        int r;

        *done = true;
        /* libmicrohttpd keeps a lone CR (and other controls) inside a value: passed on, it
         * would be a header (or a request) of the caller's making on the upstream's wire */
        (void) MHD_get_connection_values_n(q->conn, MHD_HEADER_KIND, check_header, &bad_header);
        if (bad_header)
                return respond_error(q, 400, "bad_header_value", "a header holds a control character", 0);
        /* TRACE would echo the injected credentials back; CONNECT and the like have no place */
        if (!streq(q->method, "GET") && !streq(q->method, "POST") && !streq(q->method, "PUT") &&
            !streq(q->method, "PATCH") && !streq(q->method, "DELETE") && !streq(q->method, "HEAD"))
                return respond_error(q, 405, "method_not_allowed", "this method is not relayed", 0);
        if (q->route.kind == BROKER_ROUTE_HEALTH)
                return respond_json(q, 200, "{\"status\":\"ok\"}\n", 0);
        if (!q->role)
                return respond_error(q, 403, "unknown_peer", "the caller is not a cloister agent unit", 0);
        if (q->role->network != NETWORK_DAEMON_ONLY)
                return respond_error(q, 403, "not_daemon_only", "this role has no broker access (Network= is not daemon-only)", 0);
        switch (q->route.kind) {
        case BROKER_ROUTE_LLM:
                if (!q->config->llm_endpoint)
                        return respond_error(q, 403, "no_llm", "no LLM endpoint is configured", 0);
                q->upstream_name = "llm";
                break;
        case BROKER_ROUTE_UPSTREAM:
                if (!named_upstream(q, "http"))
                        return respond_error(q, 403, "upstream_not_allowed", "this role may not use this upstream", 0);
                q->upstream_name = q->route.name;
                break;
        case BROKER_ROUTE_MCP:
                if (!named_upstream(q, "mcp"))
                        return respond_error(q, 403, "upstream_not_allowed", "this role may not use this MCP upstream", 0);
                q->upstream_name = q->route.name;
                break;
        default:
                if (q->route_error == -EINVAL)
                        return respond_error(q, 400, "bad_path", "the path is not acceptable", 0);
                return respond_error(q, 404, "no_route", "no such route", 0);
        }

        q->max_body = q->role->broker.max_request_bytes;
        if (cl) {
                char *end;
                unsigned long long n = strtoull(cl, &end, 10);
                if (*end || end == cl)
                        return respond_error(q, 400, "bad_content_length", "invalid Content-Length", 0);
                if (q->max_body != UNSET_U64 && n > q->max_body)
                        return respond_error(q, 413, "request_too_large", "the request body exceeds MaxRequestBytes=", 0);
                q->body_hint = n < BODY_PREALLOC_MAX ? (size_t) n : BODY_PREALLOC_MAX;
        }
        if (!q->limit)
                return respond_error(q, 500, "internal_error", "out of memory", 0);
        r = rate_limit_admit(q->limit, &q->role->broker, now_usec(), &retry);
        if (r == -EBUSY)
                return respond_error(q, 429, "too_many_concurrent", "MaxConcurrent= requests are already running", 1);
        if (r < 0)
                return respond_error(q, 429, "rate_limited", "RequestsPerMinute= or TokensPerMinute= reached", retry);
        q->started = true; /* holds a slot until completion */
        if (q->route.kind == BROKER_ROUTE_LLM && streq(q->method, "GET") &&
            (streq(q->route.rest, "/models") || startswith(q->route.rest, "/models?")) &&
            broker_config_role_model(q->config, q->role)) {
                /* the role may use one model: that is the list, no upstream needed */
                _cleanup_free_ char *json = NULL;
                size_t n;
                static const char empty[] = "{\"object\":\"list\",\"data\":[]}";
                q->upstream_name = NULL; /* answered here */
                if (openai_models_filter(empty, sizeof empty - 1,
                                         broker_config_role_model(q->config, q->role), &json, &n) < 0)
                        return respond_error(q, 500, "internal_error", "the broker could not list models", 0);
                return respond_json(q, 200, json, 0);
        }
        *done = false;
        return MHD_YES;
}

/* ---- upstream ------------------------------------------------------------------------- */

/* An MCP answer that is not an SSE stream is JSON: held whole until done, then filtered. */
static bool mcp_holds(const Request *q) {
        return q->route.kind == BROKER_ROUTE_MCP && q->headers_done && !q->is_sse;
}

/* Any other answer that is not a stream is held until whole while it is small (PLAIN_HOLD_MAX).
 * HEAD's answer has a Content-Length of a body it does not carry: streamed as before. */
static bool plain_holds(const Request *q) {
        return q->route.kind != BROKER_ROUTE_MCP && q->headers_done && !q->is_sse && !q->plain_streams &&
               q->upstream_length <= PLAIN_HOLD_MAX && !streq(q->method, "HEAD");
}

static bool holds(const Request *q) {
        return mcp_holds(q) || plain_holds(q);
}

/* Appends upstream bytes; what MHD already took is dropped first, so a slow caller costs
 * about OUT_HIGH_WATER, not the whole answer. False on OOM: the stream must end. */
static bool out_append(Request *q, const char *data, size_t n) {
        char *o;

        if (n == 0)
                return true;
        if (q->out_off > 0 && !mcp_holds(q)) {
                memmove(q->out, q->out + q->out_off, q->out_n - q->out_off);
                q->out_n -= q->out_off;
                q->out_off = 0;
        }
        o = realloc(q->out, q->out_n + n);
        if (!o)
                return false;
        q->out = o;
        memcpy(q->out + q->out_n, data, n);
        q->out_n += n;
        account(q);
        return true;
}

static void resume(Request *q);

/* The caller went away while its connection was suspended (waiting for upstream bytes):
 * cancel the upstream call now, not when it next sends something. MHD does not poll a
 * suspended connection, so the broker watches it: one source per connection, added when a
 * request on it first waits and kept for the next ones (an add and a remove per request were
 * two epoll_ctl() calls each). The connection is over once it fires: nothing more to watch. */
static int on_client_hangup(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Peer *p = userdata;
        Request *q = p->waiting;

        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (!q)
                return 0;       /* between requests: MHD sees it itself */
        q->client_gone = true;
        q->error = "caller_went_away";
        cancel_upstream(q);
        resume(q);
        return 0;
}

static void suspend(Request *q) {
        q->suspended = true;
        MHD_suspend_connection(q->conn);
        if (q->peer->fd < 0)
                return;
        q->peer->waiting = q;
        if (!q->peer->hangup_watch)
                (void) sd_event_add_io(q->context->event, &q->peer->hangup_watch, q->peer->fd,
                                       EPOLLRDHUP, on_client_hangup, q->peer);
        else
                /* it fired between requests (off since): still hung up, it fires again at once */
                (void) sd_event_source_set_enabled(q->peer->hangup_watch, SD_EVENT_ON);
}

static void resume(Request *q) {
        if (q->suspended) {
                q->suspended = false;
                MHD_resume_connection(q->conn);
                q->context->kick(q->context->userdata);
        }
}

/* Whether a Content-Type value names this media type: the part before any parameter, without
 * the whitespace around it, ignoring case ("application/json; x=text/event-stream" is JSON). */
static bool media_type_is(const char *value, const char *type) {
        size_t l;

        value += strspn(value, " \t");
        l = strcspn(value, ";");
        while (l > 0 && (value[l - 1] == ' ' || value[l - 1] == '\t'))
                l--;
        return l == strlen(type) && strncasecmp(value, type, l) == 0;
}

/* A Content-Length value, or UNSET_U64 for anything but digits (curl refuses a length it
 * cannot frame the answer by; this only decides whether the answer is held). */
static uint64_t content_length(const char *value) {
        unsigned long long n;
        char *end;

        value += strspn(value, " \t");
        if (*value < '0' || *value > '9')
                return UNSET_U64;
        errno = 0;
        n = strtoull(value, &end, 10);
        if (errno != 0 || end[strspn(end, " \t")] != 0)
                return UNSET_U64;
        return (uint64_t) n;
}

static size_t on_header(char *buf, size_t size, size_t n, void *userdata) {
        Request *q = userdata;
        size_t len = size * n, l = len;
        char *line;

        /* one line ending (CRLF, or LF), no more: a CR left over is a bare CR */
        if (l > 0 && buf[l - 1] == '\n')
                l--;
        if (l > 0 && buf[l - 1] == '\r')
                l--;
        if (q->bad_upstream_header)
                return 0;
        if (!header_response_line_valid(buf, l)) {
                q->bad_upstream_header = true;
                return 0;
        }
        if (q->headers_done)
                /* a trailer after a chunked body: curl hands it over like a header, but the
                 * answer's headers were settled (a Content-Type here must not make a held MCP
                 * answer a stream that skips its filter) */
                return len;
        if (l == 0) {
                if (q->status >= 200) {
                        q->headers_done = true;
                        if (!holds(q))
                                resume(q);
                }
                return len;
        }
        line = strndup(buf, l);
        if (!line)
                return 0;
        if (startswith(line, "HTTP/")) {
                const char *sp = strchr(line, ' ');
                q->status = sp ? strtol(sp + 1, NULL, 10) : 0;
                curl_slist_free_all(q->resp_headers);
                q->resp_headers = NULL;
                q->is_sse = false;
                q->upstream_length = UNSET_U64;
        } else {
                char *colon = strchr(line, ':');
                if (colon) {
                        *colon = 0;
                        if (strcasecmp(line, "Content-Type") == 0)
                                q->is_sse = media_type_is(colon + 1, "text/event-stream");
                        if (strcasecmp(line, "Content-Length") == 0)
                                q->upstream_length = content_length(colon + 1);
                        if (header_response_allowed(line)) {
                                *colon = ':';
                                q->resp_headers = curl_slist_append(q->resp_headers, line);
                        }
                }
        }
        free(line);
        return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *userdata) {
        Request *q = userdata;
        size_t len = size * n;

        if (mcp_holds(q) && (q->out_n + len > MCP_JSON_MAX || caller_over(q))) {
                /* an MCP JSON answer this large, or a caller holding too much: give up */
                q->error = caller_over(q) ? "caller_bytes_in_flight" : "upstream_bad_answer";
                return 0;
        }
        if (plain_holds(q) && (q->out_n + len > PLAIN_HOLD_MAX || caller_over(q))) {
                /* too large to hold (or the caller holds too much): stream it from here */
                q->plain_streams = true;
                resume(q);
        }
        /* a caller over MaxBytesPerCaller= gets one piece of each answer at a time */
        if (!mcp_holds(q) && (q->out_n - q->out_off > OUT_HIGH_WATER ||
                              (q->out_n > q->out_off && caller_over(q)))) {
                q->paused = true;
                return CURL_WRITEFUNC_PAUSE;   /* backpressure from a slow caller */
        }
        if (q->is_sse) {
                _cleanup_free_ char *fwd = NULL;
                size_t fwd_n = 0;
                if (!q->sse && !(q->sse = q->route.kind == BROKER_ROUTE_MCP ?
                                          sse_filter_new_rewrite(mcp_sse_rewrite, q->mcp_allowed) :
                                          sse_filter_new(q->oa.strip_usage_chunk)))
                        return 0;
                if (sse_filter_feed(q->sse, data, len, &fwd, &fwd_n) < 0) {
                        /* MCP: an event that could not be read ends the stream, unread */
                        if (q->route.kind == BROKER_ROUTE_MCP)
                                q->error = "upstream_bad_answer";
                        return 0;
                }
                if (!out_append(q, fwd, fwd_n))
                        return 0;
        } else {
                if (!out_append(q, data, len))
                        return 0;
                /* only LLM answers carry usage worth counting; of any size (TokensPerMinute=) */
                if (q->route.kind == BROKER_ROUTE_LLM) {
                        if (!q->usage_scan && !(q->usage_scan = usage_scan_new()))
                                return 0;
                        if (usage_scan_feed(q->usage_scan, data, len) < 0)
                                return 0;
                }
        }
        if (!holds(q))
                resume(q);
        return len;
}

void request_curl_done(CurlGlue *g, CURL *easy, CURLcode result) {
        Request *q = NULL;
        int r;

        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **) &q);
        if (!q)
                return;
        q->upstream_done = true;
        if (q->sse) {
                _cleanup_free_ char *fwd = NULL;
                size_t fwd_n = 0;
                r = sse_filter_finish(q->sse, &fwd, &fwd_n);
                if (r < 0 && q->route.kind == BROKER_ROUTE_MCP) {
                        q->error = "upstream_bad_answer";
                        if (result == CURLE_OK)
                                result = CURLE_WRITE_ERROR;     /* the last event is not passed on */
                } else if (r >= 0 && !out_append(q, fwd, fwd_n))
                        result = CURLE_OUT_OF_MEMORY;
                q->usage = *sse_filter_usage(q->sse);
        } else if (q->usage_scan)
                /* an answer cut short still counts what it reported */
                (void) usage_scan_result(q->usage_scan, &q->usage);
        q->result = result;
        curl_glue_easy_put(q->context->curl, q->easy);
        q->easy = NULL;
        resume(q);
        q->context->kick(q->context->userdata);
}

static int build_upstream(Request *q) {
        const BrokerConfig *c = q->config;
        _cleanup_free_ char *url = NULL, *auth = NULL;
        const char *base, *model;
        int r;

        if (q->route.kind == BROKER_ROUTE_LLM) {
                base = c->llm_endpoint;
                model = broker_config_role_model(c, q->role);
                r = openai_request_rewrite(q->body, q->body_n, model, &q->oa, &q->send_body, &q->send_n);
                if (r < 0)
                        return r;
                if (c->llm_api_key)
                        auth = strprintf("Authorization: Bearer %s", c->llm_api_key);
        } else {
                const Upstream *u = cloister_conf_find_upstream(c->conf, q->route.name);
                _cleanup_free_ char *secret = NULL;
                base = u->url;
                if (u->auth_credential && broker_credential_read(u->auth_credential, &secret) >= 0)
                        auth = strprintf("%s: %s", u->auth_header ?: "Authorization", secret);
                if (secret)
                        explicit_bzero(secret, strlen(secret));
        }
        /* base ends without "/"; rest starts with "/" */
        url = strprintf("%.*s%s", (int) (strlen(base) - (base[strlen(base) - 1] == '/')), base, q->route.rest);
        if (!url)
                return -ENOMEM;

        q->easy = curl_glue_easy_get(q->context->curl);
        if (!q->easy)
                return -ENOMEM;
        curl_easy_setopt(q->easy, CURLOPT_URL, url);
        curl_easy_setopt(q->easy, CURLOPT_PRIVATE, q);
        curl_easy_setopt(q->easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(q->easy, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(q->easy, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(q->easy, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
        /* idle, not total: a stream may run for long, but never silently */
        curl_easy_setopt(q->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(q->easy, CURLOPT_LOW_SPEED_TIME, (long) ((c->idle_timeout + 999999) / 1000000));
        curl_easy_setopt(q->easy, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(q->easy, CURLOPT_HEADERDATA, q);
        curl_easy_setopt(q->easy, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(q->easy, CURLOPT_WRITEDATA, q);
        curl_easy_setopt(q->easy, CURLOPT_CUSTOMREQUEST, q->method);
        if (q->body_n > 0 || q->send_body) {
                curl_easy_setopt(q->easy, CURLOPT_POSTFIELDS, q->send_body ?: q->body);
                curl_easy_setopt(q->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) (q->send_body ? q->send_n : q->body_n));
        } else if (streq(q->method, "GET"))
                curl_easy_setopt(q->easy, CURLOPT_HTTPGET, 1L);
        else if (streq(q->method, "HEAD"))
                curl_easy_setopt(q->easy, CURLOPT_NOBODY, 1L);

        /* Headers: an allow-list of the caller's, then the upstream's credentials. curl's own
         * Expect: and Accept: defaults are suppressed so only these go out. */
        q->headers = curl_slist_append(q->headers, "Expect:");
        q->headers = curl_slist_append(q->headers, "Accept:");
        if (auth) {
                q->headers = curl_slist_append(q->headers, auth);
                explicit_bzero(auth, strlen(auth));
        }
        return 0;
}

static enum MHD_Result copy_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
        Request *q = cls;

        if (header_request_allowed(key)) {
                _cleanup_free_ char *h = strprintf("%s: %s", key, value);
                if (h)
                        q->headers = curl_slist_append(q->headers, h);
        }
        return MHD_YES;
}

typedef struct McpHeaders {
        unsigned n_version, n_session, n_last_event;
        const char *version, *session;
} McpHeaders;

static enum MHD_Result count_mcp_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
        McpHeaders *h = cls;

        if (strcasecmp(key, "MCP-Protocol-Version") == 0) {
                h->n_version++;
                h->version = value;
        } else if (strcasecmp(key, "Mcp-Session-Id") == 0) {
                h->n_session++;
                h->session = value;
        } else if (strcasecmp(key, "Last-Event-ID") == 0)
                h->n_last_event++;
        return MHD_YES;
}

static bool visible_ascii(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s < 0x21 || *s > 0x7e)
                        return false;
        return true;
}

/* MCP's own headers: each at most once, a protocol revision the broker filters, and a
 * session id of visible ASCII (as the MCP transport specifies it). */
static enum MHD_Result mcp_check_headers(Request *q, bool *done) {
        McpHeaders h = {};

        *done = true;
        MHD_get_connection_values(q->conn, MHD_HEADER_KIND, count_mcp_header, &h);
        if (h.n_version > 1 || h.n_session > 1 || h.n_last_event > 1)
                return respond_error(q, 400, "bad_mcp_header",
                                     "MCP-Protocol-Version, Mcp-Session-Id and Last-Event-ID may each be sent once", 0);
        if (h.version && !mcp_protocol_version_supported(h.version))
                return respond_error(q, 400, "unsupported_protocol_version",
                                     "the broker relays MCP 2025-11-25, 2025-06-18 and 2025-03-26 only", 0);
        if (h.session && !visible_ascii(h.session))
                return respond_error(q, 400, "bad_mcp_header", "the Mcp-Session-Id is not visible ASCII", 0);
        *done = false;
        return MHD_YES;
}

/* MCP (cloister-broker(8)): tools/call of a tool the role may not use never reaches the upstream; what comes
 * back, on every stream, is filtered with the same allow-list (q->mcp_allowed). */
static enum MHD_Result mcp_check(Request *q, bool *done) {
        _cleanup_free_ char *error = NULL;
        McpRequestVerdict v;
        enum MHD_Result ret;
        int r;

        ret = mcp_check_headers(q, done);
        if (*done)
                return ret;
        q->mcp_allowed = role_allowed_tools(q->role, q->route.name);
        if (!q->mcp_allowed) {
                *done = true;
                return respond_error(q, 500, "internal_error", "out of memory", 0);
        }
        if (q->body_n == 0)
                return MHD_YES; /* GET (the SSE stream, maybe resumed) or DELETE (end of session) */
        *done = true;
        r = mcp_request_check(q->body, q->body_n, q->mcp_allowed, &v, &error);
        if (r == -ENOTUNIQ) {
                q->error = "ambiguous_json";
                return respond_json(q, 400, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
                                    "\"message\":\"cloister: a request's keys collide, or vary a key's case\"}}\n", 0);
        }
        if (r < 0)
                return respond_error(q, 400, "invalid_json", "the request body is not JSON-RPC", 0);
        if (v == MCP_REQUEST_REFUSED) {
                q->error = "tool_not_allowed";
                return respond_json(q, 200, error, 0);
        }
        /* MCP_REQUEST_TOOLS_LIST needs nothing more: every answer is filtered */
        *done = false;
        return MHD_YES;
}

static enum MHD_Result answer_or_wait(Request *q);

static enum MHD_Result start_upstream(Request *q) {
        int r;

        if (q->route.kind == BROKER_ROUTE_MCP) {
                bool done;
                enum MHD_Result ret = mcp_check(q, &done);
                if (done)
                        return ret;
        }
        r = build_upstream(q);

        if (r == -EBADMSG)
                return respond_error(q, 400, "invalid_json", "the request body is not a JSON object", 0);
        if (r == -ENOTUNIQ)
                return respond_error(q, 400, "ambiguous_json", "the request body has keys that collide, or vary the case of model, stream or stream_options", 0);
        if (r == -EDOM)
                return respond_error(q, 400, "invalid_type", "stream must be a boolean and model a string", 0);
        if (r < 0)
                return respond_error(q, 500, "internal_error", "the broker could not prepare the request", 0);
        MHD_get_connection_values(q->conn, MHD_HEADER_KIND, copy_header, q);
        curl_easy_setopt(q->easy, CURLOPT_HTTPHEADER, q->headers);
        if (curl_glue_add(q->context->curl, q->easy) < 0)
                return respond_error(q, 500, "internal_error", "the broker could not start the request", 0);
        return answer_or_wait(q);      /* a fast upstream may have answered already */
}

/* ---- the answer ----------------------------------------------------------------------- */

static ssize_t read_answer(void *cls, uint64_t pos, char *buf, size_t max) {
        Request *q = cls;
        size_t avail = q->out_n - q->out_off;

        if (avail > 0) {
                size_t n = avail < max ? avail : max;
                memcpy(buf, q->out + q->out_off, n);
                q->out_off += n;
                q->bytes_out += n;
                account(q);
                /* an empty buffer always resumes, so a request paused for its caller's
                 * total goes on once its own bytes are taken */
                if (q->paused && q->easy && (q->out_n == q->out_off ||
                                             (q->out_n - q->out_off < OUT_HIGH_WATER / 2 && !caller_over(q)))) {
                        q->paused = false;
                        curl_glue_unpause(q->context->curl, q->easy);
                }
                return (ssize_t) n;
        }
        if (q->upstream_done || q->client_gone)
                return q->result == CURLE_OK && !q->client_gone ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
        /* nothing yet: wait for curl without spinning */
        suspend(q);
        return 0;
}

/* Queues `resp` with the upstream's status and its allowed headers. */
static enum MHD_Result queue_upstream_answer(Request *q, struct MHD_Response *resp) {
        enum MHD_Result ret;

        for (struct curl_slist *h = q->resp_headers; h; h = h->next) {
                _cleanup_free_ char *name = strdup(h->data);
                char *colon = name ? strchr(name, ':') : NULL;
                if (!colon)
                        continue;
                *colon = 0;
                MHD_add_response_header(resp, name, colon + 1 + strspn(colon + 1, " \t"));
        }
        ret = MHD_queue_response(q->conn, (unsigned) q->status, resp);
        MHD_destroy_response(resp);
        if (ret == MHD_YES) {
                q->responded = true;
                q->status_sent = (unsigned) q->status;
        }
        return ret;
}

/* An MCP answer that is not a stream, whole: JSON (with every tools/list result in it
 * filtered) or nothing. Anything else is not passed on. */
static enum MHD_Result respond_mcp_json(Request *q) {
        _cleanup_free_ char *body = NULL;
        struct MHD_Response *resp;
        size_t n = 0;
        int r = 0;

        if (q->result != CURLE_OK)
                return respond_error(q, 502, "upstream_bad_answer", "the MCP upstream's answer could not be read whole", 0);
        if (q->out_n > 0) {
                r = mcp_answer_filter(q->out, q->out_n, q->mcp_allowed, &body, &n);
                if (r < 0)
                        return respond_error(q, 502, "upstream_bad_answer", "the MCP upstream's answer is not JSON", 0);
        }
        q->out_off = q->out_n;
        account(q);
        resp = r > 0 ? MHD_create_response_from_buffer(n, body, MHD_RESPMEM_MUST_COPY) :
                       MHD_create_response_from_buffer(q->out_n, q->out, MHD_RESPMEM_MUST_COPY);
        n = r > 0 ? n : q->out_n;
        if (!resp)
                return MHD_NO;
        q->bytes_out += n;
        return queue_upstream_answer(q, resp);
}

static enum MHD_Result respond_upstream(Request *q) {
        struct MHD_Response *resp;

        if (q->bad_upstream_header)
                return respond_error(q, 502, "upstream_bad_header", "the upstream's answer has a header that is not RFC 9110", 0);
        if (!q->headers_done) {
                /* no answer from upstream at all */
                if (q->result == CURLE_OPERATION_TIMEDOUT)
                        return respond_error(q, 504, "upstream_timeout", "the upstream sent nothing for IdleTimeout=", 0);
                return respond_error(q, 502, "upstream_unreachable", "the upstream could not be reached", 0);
        }
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, read_answer, q, NULL);
        if (!resp)
                return MHD_NO;
        return queue_upstream_answer(q, resp);
}

/* A plain answer held whole: its headers and body in one write. It stays in q->out, which
 * outlives the response (freed when the request completes). */
static enum MHD_Result respond_whole(Request *q) {
        struct MHD_Response *resp;

        enum MHD_Result ret;

        resp = MHD_create_response_from_buffer(q->out_n, q->out, MHD_RESPMEM_PERSISTENT);
        if (!resp)
                return MHD_NO;
        ret = queue_upstream_answer(q, resp);
        if (ret == MHD_YES)
                q->bytes_out += q->out_n;       /* queued: what MHD sends of it, all at once */
        return ret;
}

/* The answer, once there is one to give (the upstream's headers, or its whole answer where
 * that is held); until then the connection waits, suspended. */
static enum MHD_Result answer_or_wait(Request *q) {
        if ((!q->headers_done || holds(q)) && !q->upstream_done) {
                suspend(q);
                return MHD_YES;
        }
        if (mcp_holds(q))
                return respond_mcp_json(q);
        if (plain_holds(q) && q->result == CURLE_OK && !q->bad_upstream_header)
                return respond_whole(q);
        return respond_upstream(q);
}

/* ---- MHD callbacks -------------------------------------------------------------------- */

/* libmicrohttpd's first word on a request: the URI exactly as sent (query included, nothing
 * unescaped; MHD would turn "+" into " " in arguments). The Request starts here. */
void *request_uri_seen(void *cls, const char *uri, struct MHD_Connection *conn) {
        Request *q = calloc(1, sizeof(Request));

        if (q && !(q->path = strdup(uri)))
                q = mfree(q);
        if (q)
                q->upstream_length = UNSET_U64;
        return q;
}

static int request_init(Request *q, RequestContext *ctx, struct MHD_Connection *conn, const char *method) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        static Peer nobody = { .pid = 0, .fd = -1 };
        int r;

        q->context = ctx;
        q->config = broker_config_ref(ctx->config);
        q->conn = conn;
        q->start = now_usec();
        q->method = strdup(method);
        if (!q->method)
                return -ENOMEM;
        q->peer = ci && ci->socket_context ? ci->socket_context : &nobody;
        ctx->headers_done(ctx->userdata, q->peer);
        if (q->peer->role) {
                q->role = broker_config_find_role(q->config, q->peer->role);
                q->limit = q->role ? broker_config_role_limit(q->config, q->role) : NULL;
        }
        r = broker_route_parse(q->path, &q->route);
        if (r < 0) {
                q->route = (BrokerRoute) { .kind = _BROKER_ROUTE_INVALID };
                q->route_error = r;
        }
        ctx->active_requests++;
        return 0;
}

enum MHD_Result request_handle(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls) {
        RequestContext *ctx = cls;
        Request *q = *con_cls;
        bool done;

        if (!q)
                return MHD_NO; /* out of memory in request_uri_seen() */
        if (!q->conn) {
                const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
                const Peer *p = ci ? ci->socket_context : NULL;
                if (p && p->closing)
                        return MHD_NO; /* over its caller's connection cap */
                if (request_init(q, ctx, conn, method) < 0)
                        return MHD_NO;
                return admit(q, &done);
        }
        if (q->responded)
                return MHD_YES;
        if (*upload_size > 0) {
                size_t n = *upload_size;
                *upload_size = 0;
                q->bytes_in += n;
                if (q->too_large || (q->max_body != UNSET_U64 && q->body_n + n > q->max_body)) {
                        /* no answer can be queued while a body arrives: drop it, answer at the end */
                        q->too_large = true;
                        return MHD_YES;
                }
                if (q->caller_over || caller_over(q)) {
                        q->caller_over = true;
                        return MHD_YES;
                }
                if (q->body_n + n + 1 > q->body_allocated) {
                        /* doubling: a body read in thousands of pieces is not copied each time */
                        size_t need = q->body_n + n + 1, a = 2 * q->body_allocated;
                        char *nb;

                        if (a < q->body_hint + 1)
                                a = q->body_hint + 1;

                        if (q->max_body != UNSET_U64 && a > q->max_body + 1)
                                a = (size_t) q->max_body + 1; /* never more than the limit allows */
                        if (a < need)
                                a = need;
                        nb = realloc(q->body, a);
                        if (!nb)
                                return MHD_NO;
                        q->body = nb;
                        q->body_allocated = a;
                }
                memcpy(q->body + q->body_n, upload, n);
                q->body_n += n;
                q->body[q->body_n] = 0;
                account(q);
                return MHD_YES;
        }
        if (!q->body_done) {
                q->body_done = true;
                if (q->too_large)
                        return respond_error(q, 413, "request_too_large", "the request body exceeds MaxRequestBytes=", 0);
                if (q->caller_over)
                        return respond_error(q, 429, "caller_bytes_in_flight", "this caller's requests hold too many bytes in the broker", 1);
                return start_upstream(q);
        }
        /* resumed: the upstream answered (or failed), or the caller left */
        if (q->client_gone)
                return MHD_NO;
        return answer_or_wait(q);
}

void request_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                       enum MHD_RequestTerminationCode toe) {
        RequestContext *ctx = cls;
        Request *q = *con_cls;
        const char *model;

        if (!q)
                return;
        *con_cls = NULL;
        if (!q->conn) { /* never reached the access handler */
                request_free(q);
                return;
        }
        if (q->peer->fd >= 0 && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
                ctx->headers_wait(ctx->userdata, q->peer); /* keep-alive: the next request's headers */
        if (q->started) {
                rate_limit_release(q->limit);
                if (q->usage.seen)
                        rate_limit_add_tokens(q->limit, now_usec(), q->usage.prompt_tokens + q->usage.completion_tokens);
        }
        if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && !q->error)
                q->error = q->easy ? "caller_went_away" : "connection_error";
        model = q->oa.model ?: (q->role && q->route.kind == BROKER_ROUTE_LLM ? broker_config_role_model(q->config, q->role) : NULL);
        audit_log(&(AuditRecord) {
                .role = q->peer->role, .unit = q->peer->unit, .peer_pid = q->peer->pid,
                .route = q->route.kind >= 0 ? broker_route_kind_to_string(q->route.kind) : "none",
                .upstream = q->upstream_name, .method = q->method, .path = q->path,
                .status = q->status_sent, .bytes_in = q->bytes_in, .bytes_out = q->bytes_out,
                .duration_usec = now_usec() - q->start, .model = model,
                .prompt_tokens = q->usage.prompt_tokens, .completion_tokens = q->usage.completion_tokens,
                .error = q->error,
        });
        ctx->active_requests--;
        request_free(q);
}
