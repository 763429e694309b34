/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include "audit.h"
#include "macro.h"

void audit_log(const AuditRecord *a) {
        sd_journal_send("MESSAGE_ID=" CLOISTER_BROKER_MESSAGE_ID,
                        "MESSAGE=%s %s %s from %s → %u (%s%s)", a->role ?: "(unknown peer)", a->method,
                        a->path, a->unit ?: "(no unit)", a->status,
                        a->error ?: a->upstream ? "proxied to " : "answered by the broker",
                        a->error ? "" : strempty(a->upstream),
                        "PRIORITY=%d", a->status >= 500 ? LOG_WARNING : LOG_INFO,
                        "CLOISTER_ROLE=%s", strempty(a->role),
                        "CLOISTER_UNIT=%s", strempty(a->unit),
                        "CLOISTER_PEER_PID=%d", a->peer_pid,
                        "CLOISTER_ROUTE=%s", strempty(a->route),
                        "CLOISTER_UPSTREAM=%s", strempty(a->upstream),
                        "CLOISTER_METHOD=%s", strempty(a->method),
                        "CLOISTER_PATH=%s", strempty(a->path),
                        "CLOISTER_STATUS=%u", a->status,
                        "CLOISTER_BYTES_IN=%llu", (unsigned long long) a->bytes_in,
                        "CLOISTER_BYTES_OUT=%llu", (unsigned long long) a->bytes_out,
                        "CLOISTER_DURATION_USEC=%llu", (unsigned long long) a->duration_usec,
                        "CLOISTER_MODEL=%s", strempty(a->model),
                        "CLOISTER_PROMPT_TOKENS=%llu", (unsigned long long) a->prompt_tokens,
                        "CLOISTER_COMPLETION_TOKENS=%llu", (unsigned long long) a->completion_tokens,
                        a->error ? "CLOISTER_ERROR=%s" : NULL, a->error,
                        NULL);
}
