# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced inside a throwaway systemd (tests/integration/nspawn-run.sh) by bench/broker-suite.sh
# and docs/examples/demo-suite.sh, which both put cloister-broker in front of an upstream on
# the container's loopback as an admin would.
#
#   llm_upstream NAME PORT MODEL KEY
#
# KEY goes to the plain credential store as "llm-key" (0600, root only), and
# $CLOISTER_CFG/cloister.conf.d/50-NAME.conf sets [LLM] Endpoint=http://127.0.0.1:PORT/v1,
# Model=MODEL and APIKeyCredential=llm-key.
llm_upstream() {
        mkdir -p "$CLOISTER_CFG/cloister.conf.d" /etc/credstore
        echo -n "$4" > /etc/credstore/llm-key
        chmod 0600 /etc/credstore/llm-key
        cat > "$CLOISTER_CFG/cloister.conf.d/50-$1.conf" <<EOF
[LLM]
Endpoint=http://127.0.0.1:$2/v1
Model=$3
APIKeyCredential=llm-key
EOF
}
