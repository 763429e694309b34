/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <stdarg.h>

#include "log.h"

static LogTarget log_target = LOG_TARGET_STDERR;
static const char *log_prefix;
static int log_max_level = LOG_INFO;
static int kmsg_fd = -1;
static LogSink log_sink;
static int log_sink_level;
static void *log_sink_userdata;

void log_set_sink(LogSink sink, int level, void *userdata) {
        log_sink = sink;
        log_sink_level = level;
        log_sink_userdata = userdata;
}

void log_set_target(LogTarget t) {
        log_target = t;
        if (t == LOG_TARGET_KMSG && kmsg_fd < 0)
                kmsg_fd = open("/dev/kmsg", O_WRONLY | O_NOCTTY | O_CLOEXEC);
}

void log_set_prefix(const char *prefix) {
        log_prefix = prefix;
}

void log_set_max_level(int level) {
        log_max_level = level;
}

char *strprintf(const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

int log_internal(int level, int error, const char *fmt, ...) {
        char buf[2048];
        va_list ap;
        int saved = errno;

        error = abs(error);
        if (level > log_max_level)
                return -error;

        errno = error;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        errno = saved;

        if (log_sink) {
                if (level <= log_sink_level)
                        log_sink(level, buf, log_sink_userdata);
                return -error;
        }
        if (log_target == LOG_TARGET_KMSG && kmsg_fd >= 0)
                dprintf(kmsg_fd, "<%d>%s[%d]: %s\n", LOG_DAEMON | level,
                        strempty(log_prefix), (int) getpid(), buf);
        else if (log_prefix)
                fprintf(stderr, "%s: %s\n", log_prefix, buf);
        else
                fprintf(stderr, "%s\n", buf);
        return -error;
}
