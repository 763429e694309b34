/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* Which HTTP headers the broker passes on (§8). Both directions are allow-lists, compared
 * case-insensitively: anything not listed is dropped, so credentials (Authorization, Cookie,
 * Set-Cookie), hop-by-hop and framing headers (Connection, Content-Length, Transfer-Encoding,
 * Host, Proxy-*, X-Forwarded-*) never cross; the broker sets those itself. */

/* Caller → upstream. Accept-Encoding is not passed, so the broker always sees plain bodies
 * (to count tokens); OpenAI-Organization is not passed, the upstream's credential decides. */
bool header_request_allowed(const char *name);

/* Upstream → caller. Content-Encoding is not passed, as the broker asked for none. */
bool header_response_allowed(const char *name);
