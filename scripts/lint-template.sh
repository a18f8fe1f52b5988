#!/usr/bin/env bash
# Lints the SAM template with cfn-lint and `sam validate --lint` (each in its own virtualenv).
set -euo pipefail
cd "$(dirname "$0")/.."

"$(scripts/venv.sh cfn-lint)/bin/cfn-lint" template.yaml
# sam validate needs a region; it makes no AWS call.
AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1 SAM_CLI_TELEMETRY=0 \
    "$(scripts/venv.sh sam)/bin/sam" validate --lint --template-file template.yaml
