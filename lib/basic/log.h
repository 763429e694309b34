/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <syslog.h>
#include "macro.h"

typedef enum LogTarget {
        LOG_TARGET_STDERR,
        LOG_TARGET_KMSG,      /* generators: /dev/kmsg, falling back to stderr */
} LogTarget;

void log_set_target(LogTarget t);
void log_set_prefix(const char *prefix);
void log_set_max_level(int level);

/* Hands every message at `level` or more severe to `sink` instead of printing it (NULL: print
 * again). cloisterctl collects the reasons a file was refused this way. */
typedef void (*LogSink)(int level, const char *message, void *userdata);
void log_set_sink(LogSink sink, int level, void *userdata);

/* Logs and returns -abs(error); %m in the format means strerror(error). */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_error_errno(e, ...)   log_internal(LOG_ERR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_WARNING, (e), __VA_ARGS__)
#define log_error(...)            ((void) log_internal(LOG_ERR, 0, __VA_ARGS__))
#define log_warning(...)          ((void) log_internal(LOG_WARNING, 0, __VA_ARGS__))
#define log_notice(...)           ((void) log_internal(LOG_NOTICE, 0, __VA_ARGS__))
#define log_info(...)             ((void) log_internal(LOG_INFO, 0, __VA_ARGS__))
#define log_debug(...)            ((void) log_internal(LOG_DEBUG, 0, __VA_ARGS__))
#define log_oom()                 log_internal(LOG_ERR, ENOMEM, "Out of memory.")
