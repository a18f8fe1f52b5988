#!/usr/bin/env bash
# Lints the SAM template: cfn-lint, scripts/checks/check_template.py (alarms and dashboard name
# real metrics, functions' roles grant only what they need, names fit any stack name; and its
# self-test), `sam validate --lint` and checkov, each tool in its own virtualenv.
set -euo pipefail
cd "$(dirname "$0")/../.."

cfn_lint=$(scripts/lib/venv.sh cfn-lint)
"$cfn_lint/bin/cfn-lint" template.yaml
"$cfn_lint/bin/python" scripts/checks/check_template.py template.yaml
"$cfn_lint/bin/python" scripts/checks/check_template.py --self-test template.yaml

# sam validate needs a region; it makes no AWS call.
sam=$(scripts/lib/venv.sh sam)
AWS_DEFAULT_REGION=us-east-1 AWS_REGION=us-east-1 SAM_CLI_TELEMETRY=0 \
    "$sam/bin/sam" validate --lint --template-file template.yaml

# Offline: no platform download, policy mapping or update check. Exits non-zero on a failed
# check; skips carry their reasons in the template's Metadata.
checkov=$(scripts/lib/venv.sh checkov)
BC_SKIP_MAPPING=TRUE CKV_SKIP_PACKAGE_UPDATE_CHECK=TRUE \
    "$checkov/bin/checkov" --file template.yaml --framework cloudformation \
    --quiet --compact --skip-download
