/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Every directive a unit that cloister ships or generates may hold, with how it travels as a
 * property of a transient unit: the one table both renderers walk. unit_settings_write()
 * refuses a directive that has no row here, and profile_bus_append() marshals each one by its
 * row, so a directive cannot reach a unit file without a D-Bus rendering (or an explicit
 * BUS_NONE). Adding a directive is one row in lib/profile/directives.c. */

typedef enum DirectiveKind {
        BUS_STRING,             /* s, specifiers expand */
        BUS_STDIO,              /* s: journal, null, inherit … (no "file:"/"fd:" forms) */
        BUS_STRV,               /* as: words, specifiers expand */
        BUS_BOOL,               /* b */
        BUS_SIZE,               /* t: bytes, "infinity" */
        BUS_UINT,               /* t */
        BUS_SEC,                /* t: microseconds, the property renamed …Sec → …USec */
        BUS_CPU_QUOTA,          /* t: CPUQuotaPerSecUSec */
        BUS_MODE,               /* u: octal */
        BUS_CAPS,               /* t: only the empty set */
        BUS_SECURE_BITS,        /* i */
        BUS_NAMESPACES,         /* t: RestrictNamespaces=yes|no */
        BUS_ERRNO,              /* i */
        BUS_RLIMIT,             /* t Limit… and t Limit…Soft */
        BUS_ALLOW_DENY,         /* (bas): "~" denies */
        BUS_IP_ACCESS,          /* a(iayu) */
        BUS_BIND,               /* a(ssbt) */
        BUS_TMPFS,              /* a(ss) */
        BUS_EXEC,               /* a(sasb) */
        BUS_EXIT_STATUS,        /* (aiai) */
        BUS_DEVICE_ALLOW,       /* a(ss): "NODE PERMISSIONS" */
        BUS_UINT32,             /* u */
        BUS_CREDENTIAL,         /* a(ss): "ID:PATH" */
        BUS_LISTEN,             /* a(ss): ("Stream", PATH) */
        BUS_NONE,               /* unit files only: [Install] has no transient form */
} DirectiveKind;

typedef struct Directive {
        const char *section;
        const char *key;
        DirectiveKind kind;
        const char *property;   /* NULL: the key */
} Directive;

/* The row of section/key, NULL if cloister never writes it. */
const Directive *directive_find(const char *section, const char *key);
