/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Answers a held connection that the runtime never became ready for: HTTP/1.1 503 with an
 * OpenAI-style JSON error ({"error":{"message":…,"type":"sidecar_unavailable","code":503}}),
 * then closes `fd`, in every case. */
int unavailable_reply(int fd, const char *message);
