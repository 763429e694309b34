/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <json-c/json.h>
#include <sys/socket.h>

#include "log.h"
#include "unavailable.h"

static char *error_body(const char *message) {
        json_object *root = json_object_new_object(), *error = json_object_new_object();
        char *s = NULL;

        if (root && error) {
                json_object_object_add(error, "message", json_object_new_string(message));
                json_object_object_add(error, "type", json_object_new_string("sidecar_unavailable"));
                json_object_object_add(error, "code", json_object_new_int(503));
                json_object_object_add(root, "error", error);
                error = NULL;
                s = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        }
        json_object_put(error);
        json_object_put(root);
        return s;
}

/* The request is not read: it never reached anybody. But closing a socket with unread bytes
 * resets the connection, which can throw away the answer before the client reads it, so
 * what has arrived is drained first. Bounded: a client still sending gets its reset. */
static void drain(int fd) {
        char buf[16384];

        for (int i = 0; i < 64; i++)
                if (recv(fd, buf, sizeof buf, MSG_DONTWAIT) <= 0)
                        return;
}

int unavailable_reply(int fd, const char *message) {
        _cleanup_close_ int c = fd;
        _cleanup_free_ char *body = error_body(message), *answer = NULL;
        size_t n, done = 0;

        if (!body)
                return -ENOMEM;
        answer = strprintf("HTTP/1.1 503 Service Unavailable\r\n"
                           "Content-Type: application/json\r\n"
                           "Content-Length: %zu\r\n"
                           "Connection: close\r\n"
                           "\r\n%s", strlen(body), body);
        if (!answer)
                return -ENOMEM;
        drain(c);
        n = strlen(answer);
        /* a few hundred bytes into a fresh socket's buffer: one send, barring a signal */
        for (int i = 0; done < n && i < 8; i++) {
                ssize_t k = send(c, answer + done, n - done, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k > 0)
                        done += (size_t) k;
        }
        (void) shutdown(c, SHUT_WR);
        drain(c);
        return done == n ? 0 : -EAGAIN;
}
