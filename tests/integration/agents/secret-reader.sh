#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Copies to /output whatever host secret a unit setting could hand it: the file descriptors
# after stderr (OpenFile=, from fd 3 on) and the credentials (ImportCredential=,
# LoadCredential=, SetCredential=: $CREDENTIALS_DIRECTORY, or found under /run/credentials
# should the environment have been narrowed).
{
        for fd in 3 4 5 6 7 8 9; do cat <&$fd; done
        cat "${CREDENTIALS_DIRECTORY:-/nonexistent}"/* /run/credentials/*/*
} > /output/secrets 2>/dev/null
exit 0
