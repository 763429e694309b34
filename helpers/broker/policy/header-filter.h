/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/* Which HTTP headers the broker passes on (cloister-broker(8)). Both directions are allow-lists, compared
 * case-insensitively: anything not listed is dropped, so credentials (Authorization, Cookie,
 * Set-Cookie), hop-by-hop and framing headers (Connection, Content-Length, Transfer-Encoding,
 * Host, Proxy-*, X-Forwarded-*) never cross; the broker sets those itself. */

/* Caller → upstream. Accept-Encoding is not passed, so the broker always sees plain bodies
 * (to count tokens); OpenAI-Organization is not passed, the upstream's credential decides. */
bool header_request_allowed(const char *name);

/* Upstream → caller. Content-Encoding is not passed, as the broker asked for none. */
bool header_response_allowed(const char *name);

/* Whether a field name is an RFC 9110 token. */
bool header_name_valid(const char *name);

/* Whether value[0..n) is an RFC 9110 field value: visible ASCII, obs-text (0x80-0xff), SP
 * and HTAB only. A value holding CR, LF, NUL or another control is refused whole in both
 * directions (400 to a caller, 502 for an upstream's answer), never cleaned up and passed. */
bool header_value_valid(const char *value, size_t n);

/* One line of an upstream's answer head (status line, header line or trailer), its line
 * ending (CRLF or LF) removed: valid if no control is left in it and it is not an obsolete
 * folded continuation line. Anything else makes the answer a 502. */
bool header_response_line_valid(const char *line, size_t n);
